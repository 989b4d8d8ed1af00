"""Chunks (text analysis → **chunks** → indexes): the chunk table of one chunk configuration and its embeddings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from tuner.cache import DiskCache, content_key
from tuner.chunking import CHUNKER_VERSION, Chunk, chunk_dataset
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder
from tuner.io import jsonl_objects, jsonl_text
from tuner.settings import Chunking
from tuner.text import Language


def chunks_key(content_hash: str, language: str, chunking: str, chunker_version: str) -> str:
    """The chunks of one dataset (``content_hash``, ``language``) under one chunking (``chunking``: its stage key,
    :func:`chunking_key`) by one version of the chunker's rules (``tuner.chunking.CHUNKER_VERSION``)."""
    return content_key("chunks", content_hash, language, chunking, chunker_version)


def chunking_key(chunking: Chunking) -> str:
    """The key of the chunking stage (``stage_key(settings, "chunking")``): every field of ``chunking``, the tokenizer's
    model included, so a new chunking setting is in it without an edit here."""
    return content_key("chunking", asdict(chunking))


@dataclass
class ChunkTable:
    """All chunks of one chunk configuration (corpus and conflicting documents in one index); ``language`` is the
    dataset's, which picks the BM25 analyzer rule (:func:`tuner.text.analyzer_tokens`)."""

    chunks: list[Chunk]
    key: str
    encoder: CachedEncoder
    language: Language
    _embeddings: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.doc_ids = np.array([c.doc_id for c in self.chunks], dtype=object)
        self.is_conflict: NDArray[np.bool_] = np.array([c.conflicting for c in self.chunks], dtype=bool)
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
    (folder / "chunks.jsonl").write_text(jsonl_text(chunk.__dict__ for chunk in chunks), "utf-8")


def _read_chunks(folder: Path) -> list[Chunk]:
    return [Chunk(**record) for _, record in jsonl_objects(folder / "chunks.jsonl")]


def load_chunk_table(dataset: Dataset, chunking: Chunking, cache: DiskCache, encoder: CachedEncoder) -> ChunkTable:
    """The chunks of ``dataset`` cut as ``chunking`` says (see :mod:`tuner.chunking`), embedded by ``encoder``.

    The cache key (:func:`chunks_key`) names the dataset content, its language, the chunking
    (every field of ``chunking``, the tokenizer's model included) and the chunker's version: chunks of one text under
    one key are always the same.
    """
    key = chunks_key(dataset.content_hash, dataset.language, chunking_key(chunking), CHUNKER_VERSION)

    built: list[Chunk] = []

    def build(folder: Path) -> None:
        built.extend(chunk_dataset(dataset, chunking))
        _write_chunks(built, folder)

    def read(folder: Path) -> list[Chunk]:
        return built or _read_chunks(folder)  # the chunks just written are the ones in memory: no need to parse them

    return ChunkTable(cache.get_or_build("chunks", key, build, read), key, encoder, dataset.language)
