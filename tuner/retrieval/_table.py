"""Chunks (text analysis → **chunks** → indexes): the chunk table of one chunk configuration and its embeddings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from tuner.cache import DiskCache
from tuner.chunking import CONFLICT, Chunk, ChunkUnit, chunk_dataset
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder
from tuner.retrieval._keys import chunks_key


@dataclass
class ChunkTable:
    """All chunks of one chunk configuration (corpus and conflicting documents in one index)."""

    chunks: list[Chunk]
    key: str
    encoder: CachedEncoder
    _embeddings: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.doc_ids = np.array([c.doc_id for c in self.chunks], dtype=object)
        self.is_conflict: NDArray[np.bool_] = np.array([c.source == CONFLICT for c in self.chunks], dtype=bool)
        self.passages = [c.passage for c in self.chunks]

    def __len__(self) -> int:
        return len(self.chunks)

    def embeddings(self) -> np.ndarray:
        """Normalized passage embeddings, reused per passage text from the embedding store."""
        if self._embeddings is None:
            self._embeddings = self.encoder.encode(self.passages)
        return self._embeddings

    def mask(self, view: str) -> np.ndarray | None:
        """Chunks visible in an index view: ``clean`` (corpus only), ``all``, ``kind=K[,severity=S]``
        (the corpus plus the conflicting documents whose metadata match) or ``only:kind=K[,severity=S]``
        (those conflicting documents alone, no corpus). ``None`` means every chunk."""
        if view == "all":
            return None
        if view == "clean":
            return ~self.is_conflict
        only = view.startswith("only:")
        wanted = dict(part.split("=", 1) for part in view.removeprefix("only:").split(","))
        unknown = set(wanted) - {"kind", "severity"}
        if unknown:
            raise ValueError(f"unknown index view filter {sorted(unknown)} in '{view}'")
        selected: NDArray[np.bool_] = np.array(
            [all(getattr(c, name) == value for name, value in wanted.items()) for c in self.chunks], dtype=bool
        )
        matching = self.is_conflict & selected
        return matching if only else ~self.is_conflict | matching


def _write_chunks(chunks: list[Chunk], folder: Path) -> None:
    lines = [json.dumps(chunk.__dict__, ensure_ascii=False) for chunk in chunks]
    (folder / "chunks.jsonl").write_text("\n".join(lines) + "\n", "utf-8")


def _read_chunks(folder: Path) -> list[Chunk]:
    text = (folder / "chunks.jsonl").read_text("utf-8")
    return [Chunk(**json.loads(line)) for line in text.splitlines() if line]


def load_chunk_table(
    dataset: Dataset,
    chunk_size: int,
    chunk_overlap: float,
    cache: DiskCache,
    encoder: CachedEncoder,
    chunk_unit: ChunkUnit = "tokens",
) -> ChunkTable:
    """The chunks of ``dataset`` (see :mod:`tuner.chunking`); ``tokens`` are those of ``encoder``'s model.

    The cache key (:func:`tuner.retrieval._keys.chunks_key`) names the dataset content, its language, size,
    overlap, unit and, for ``tokens``, the tokenizer's model: chunks of one text under one key are always the same.
    """
    tokenizer = encoder.model_id if chunk_unit == "tokens" else ""
    key = chunks_key(dataset.content_hash, dataset.language, chunk_size, chunk_overlap, chunk_unit, tokenizer)

    def build(folder: Path) -> None:
        _write_chunks(chunk_dataset(dataset, chunk_size, chunk_overlap, chunk_unit, encoder.model_id), folder)

    return ChunkTable(cache.get_or_build("chunks", key, build, _read_chunks), key, encoder)
