"""Indexes (chunks → **indexes** → candidates): dense retrieval: sentence-transformers embeddings in FAISS, inner
product on normalized vectors.

The normalized score is the cosine similarity clipped to [0, 1] (negative cosine means unrelated).
``dense_index: flat`` (default) is exact; ``hnsw`` is an approximate graph index for large corpora,
built once per chunk configuration and cached on disk, searched with ``hnsw_ef`` (FAISS ``efSearch``). ``ivf`` is an
engine's index (``engine: {backend: milvus}``): this in-process index has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np

from tuner.cache import DiskCache
from tuner.embedding import CachedEncoder
from tuner.errors import UserError
from tuner.retrieval._base import Hits, register_retriever
from tuner.retrieval._keys import HNSW_NEIGHBORS, hnsw_key
from tuner.retrieval._table import ChunkTable
from tuner.settings import RetrievalSettings



class DenseRetriever:
    def __init__(self, table: ChunkTable, index: faiss.Index, query_encoder: CachedEncoder, ef: int = 128) -> None:
        self._table = table
        self._index = index
        self._encoder = query_encoder
        self._ef = ef

    @classmethod
    def build(cls, table: ChunkTable, cache: DiskCache, kind: str = "flat", query_prompt: str = "", ef: int = 128) -> DenseRetriever:
        """Search over ``table``'s chunk vectors (its encoder's document prompt) with questions encoded
        under ``query_prompt``; an ``hnsw`` index explores ``ef`` candidates (at least the depth asked)."""
        if table.encoder is None:
            raise RuntimeError("dense retrieval needs a chunk table with an encoder")
        if kind == "ivf":
            raise UserError("dense_index ivf: tuner's in-process engine has no IVF index; search a Milvus collection "
                            "built with one (engine: {backend: milvus, index: IVF_FLAT}) or use flat or hnsw")
        vectors = table.embeddings()
        if kind == "flat":
            index: faiss.Index = faiss.IndexFlatIP(vectors.shape[1])
            index.add(vectors)
        else:

            def build(folder: Path) -> None:
                hnsw = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_NEIGHBORS, faiss.METRIC_INNER_PRODUCT)
                hnsw.add(vectors)
                faiss.write_index(hnsw, str(folder / "index.faiss"))

            index = cache.get_or_build("dense-index", hnsw_key(vectors), build, lambda f: faiss.read_index(str(f / "index.faiss")))
        return cls(table, index, table.encoder.with_prompt(query_prompt), ef)

    def search(self, queries: Sequence[str], depth: int, allowed: np.ndarray | None) -> Hits:
        query_vectors = self._encoder.encode(list(queries))
        take = min(depth, len(self._table))
        params = None
        if allowed is not None:
            selector = faiss.IDSelectorBatch(np.flatnonzero(allowed).astype(np.int64))
            # faiss's stubs (1.15) omit SearchParametersHNSW and the keyword constructors its wrappers add
            params = (
                faiss.SearchParametersHNSW(sel=selector, efSearch=max(self._ef, take))  # type: ignore[attr-defined]
                if isinstance(self._index, faiss.IndexHNSW)
                else faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]
            )
        elif isinstance(self._index, faiss.IndexHNSW):
            params = faiss.SearchParametersHNSW(efSearch=max(self._ef, take))  # type: ignore[attr-defined]
        scores, indices = self._index.search(query_vectors, take, params=params)
        out_idx = np.full((len(queries), depth), -1, dtype=np.int64)
        out_scores = np.zeros((len(queries), depth), dtype=np.float32)
        out_idx[:, :take] = indices
        out_scores[:, :take] = np.where(indices >= 0, scores.clip(0.0, 1.0), 0.0)
        return Hits(out_idx, out_scores)

    def score(self, query: str, indices: np.ndarray) -> np.ndarray:
        query_vector = self._encoder.encode([query])[0]
        scores: np.ndarray = (self._table.embeddings()[indices] @ query_vector).clip(0.0, 1.0).astype(np.float32)
        return scores


@register_retriever("dense")
def _dense(table: ChunkTable, settings: RetrievalSettings, cache: DiskCache) -> DenseRetriever:
    return DenseRetriever.build(table, cache, settings.dense_index, settings.query_prompt, settings.hnsw_ef)
