"""Indexes (chunks → **filter** → candidates): which chunks a metadata filter lets the first stage search, the one rule
of the deployed Retriever's per-request ``filters`` and of the ``metadata_filter`` setting a study turns, and the one
mask both search within (:func:`first_stage_mask`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tuner.chunking import Chunk
from tuner.retrieval._table import ChunkTable
from tuner.settings import RetrievalSettings

FILTER_FIELDS = ("doc_id", "title", "source", "kind", "severity")
"""Chunk fields a filter may name; any other key is looked up in the document's metadata."""


def filter_mask(chunks: Sequence[Chunk], metadata_of: Callable[[str], Mapping[str, Any]], filters: Mapping[str, Any]) -> np.ndarray:
    """Per chunk, whether it passes ``filters``: for every key, the chunk's field (``FILTER_FIELDS``) or else its
    document's metadata value (``metadata_of(doc_id)``; absent = None) equals the key's value, or one of the values
    of a list. No key: every chunk passes."""
    allowed = np.ones(len(chunks), dtype=bool)
    for key, wanted in filters.items():
        values = wanted if isinstance(wanted, list) else [wanted]
        if key in FILTER_FIELDS:
            column = [getattr(chunk, key) for chunk in chunks]
        else:
            column = [metadata_of(chunk.doc_id).get(key) for chunk in chunks]
        allowed &= np.array([value in values for value in column], dtype=bool)
    return allowed


def first_stage_mask(table: ChunkTable, metadata_of: Callable[[str], Mapping[str, Any]], settings: RetrievalSettings,
                     view: str = "clean", filters: Mapping[str, Any] | None = None) -> np.ndarray | None:
    """The chunks the first stage searches, for a study's pipeline and the deployed Retriever alike: those of index
    ``view`` (:meth:`ChunkTable.mask`) that pass ``settings``' ``metadata_filter`` and ``filters`` (a request's own),
    each through :func:`filter_mask` over ``metadata_of``. None means every chunk. A new first-stage mask is added
    here and reaches both."""
    searched = table.mask(view)
    for wanted in (settings.active_filter, filters or {}):
        if wanted:
            passing = filter_mask(table.chunks, metadata_of, wanted)
            searched = passing if searched is None else searched & passing
    return searched
