"""Indexes (chunks → **indexes** → candidates): the first-stage retriever interface and its registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tuner.settings import FIRST_STAGES, FirstStageSpec

if TYPE_CHECKING:
    from tuner.cache import DiskCache
    from tuner.retrieval._table import ChunkTable
    from tuner.settings import RetrievalSettings


@dataclass(frozen=True)
class Hits:
    """Per query, the chunk indices (−1 = empty slot) and normalized scores in [0, 1], best first."""

    indices: np.ndarray
    scores: np.ndarray


class FirstStage(Protocol):
    """A first-stage retriever over one chunk table. Scores are normalized to [0, 1] (see module docs)."""

    def search(self, queries: Sequence[str], depth: int, allowed: np.ndarray | None) -> Hits:
        """Top ``depth`` chunks per query among chunks where ``allowed`` is True (all when None)."""
        ...

    def score(self, query: str, indices: np.ndarray) -> np.ndarray:
        """Normalized scores of the given chunks for one query."""
        ...


RetrieverFactory = Callable[["ChunkTable", "RetrievalSettings", "DiskCache"], FirstStage]


@dataclass(frozen=True)
class RetrieverEntry:
    """A first stage in the registry: its factory and its declaration in the settings
    (:data:`tuner.settings.FIRST_STAGES`: the first-stage settings it reads besides ``retriever`` and
    ``candidate_depth``, whose values its candidates' cache key hashes; whether it searches chunk vectors, then the
    chunks are embedded first and the candidates are keyed by the vectors' content; whether it scores BM25 terms)."""

    build: RetrieverFactory
    spec: FirstStageSpec

    @property
    def reads(self) -> tuple[str, ...]:
        return self.spec.reads

    @property
    def needs_vectors(self) -> bool:
        return self.spec.needs_vectors


RETRIEVERS: dict[str, RetrieverEntry] = {}


def register_retriever(name: str) -> Callable[[RetrieverFactory], RetrieverFactory]:
    """Register the factory of retriever ``name``, declared in :data:`tuner.settings.FIRST_STAGES` (which settings
    accept and say what it reads)."""
    if name not in FIRST_STAGES:
        raise ValueError(f"retriever {name!r} is not declared in tuner.settings.FIRST_STAGES")

    def wrap(factory: RetrieverFactory) -> RetrieverFactory:
        RETRIEVERS[name] = RetrieverEntry(factory, FIRST_STAGES[name])
        return factory

    return wrap
