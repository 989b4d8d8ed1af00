"""Indexes (chunks → **indexes** → candidates): hybrid retrieval by convex combination of normalized scores.

Candidates are the union of the BM25 and dense top ``depth`` lists; each candidate gets both
normalized scores (computed exactly, not only where it was retrieved) and the fused score
``w · dense + (1 − w) · bm25`` with ``w = hybrid_weight``. A convex combination of normalized scores
keeps the [0, 1] scale the relevance threshold needs, which rank-only fusion (RRF) would lose.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tuner.cache import DiskCache
from tuner.retrieval._base import Hits, register_retriever
from tuner.retrieval._bm25 import BM25Retriever
from tuner.retrieval._dense import DenseRetriever
from tuner.retrieval._table import ChunkTable
from tuner.settings import RetrievalSettings


class HybridRetriever:
    def __init__(self, sparse: BM25Retriever, dense: DenseRetriever, dense_weight: float) -> None:
        self._sparse = sparse
        self._dense = dense
        self._weight = dense_weight

    def search(self, queries: Sequence[str], depth: int, allowed: np.ndarray | None) -> Hits:
        sparse_hits = self._sparse.search(queries, depth, allowed)
        dense_hits = self._dense.search(queries, depth, allowed)
        indices = np.full((len(queries), depth), -1, dtype=np.int64)
        scores = np.zeros((len(queries), depth), dtype=np.float32)
        for row, query in enumerate(queries):
            union = np.union1d(sparse_hits.indices[row], dense_hits.indices[row])
            union = union[union >= 0]
            fused = self.score(query, union)
            order = np.lexsort((union, -fused))[:depth]
            indices[row, : len(order)] = union[order]
            scores[row, : len(order)] = fused[order]
        return Hits(indices, scores)

    def score(self, query: str, indices: np.ndarray) -> np.ndarray:
        dense = self._dense.score(query, indices)
        sparse = self._sparse.score(query, indices)
        return (self._weight * dense + (1.0 - self._weight) * sparse).astype(np.float32)


@register_retriever("hybrid", reads=("dense_index", "hybrid_weight"), needs_vectors=True)
def _hybrid(table: ChunkTable, settings: RetrievalSettings, cache: DiskCache) -> HybridRetriever:
    return HybridRetriever(
        BM25Retriever.build(table, cache),
        DenseRetriever.build(table, cache, settings.dense_index, settings.query_prompt),
        settings.hybrid_weight,
    )
