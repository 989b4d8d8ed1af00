"""Indexes (chunks → **indexes** → candidates): hybrid retrieval, BM25 and dense fused by ``fusion``.

Candidates are the union of the BM25 and dense top ``depth`` lists. ``fusion: blend`` (the default) gives each
candidate both normalized scores (computed exactly, not only where it was retrieved) and the fused score
``w · dense + (1 − w) · bm25`` with ``w = hybrid_weight``: a convex combination of normalized scores keeps the
[0, 1] scale the relevance threshold needs. ``fusion: rrf`` is reciprocal-rank fusion, the peers' standard
(:func:`reciprocal_rank_fusion`): ranks only, with ``rrf_k``, scaled into [0, 1] by its largest attainable value.
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


def reciprocal_rank_fusion(candidates: np.ndarray, rankings: Sequence[np.ndarray], k: int) -> np.ndarray:
    """The reciprocal-rank fusion score of each of ``candidates`` (chunk indices) over ``rankings`` (chunk indices,
    best first, −1 = empty slot), scaled into [0, 1]:

        RRF(d) = Σ_r 1 / (k + rank_r(d)),    score(d) = RRF(d) · (k + 1) / R

    over the R rankings r that hold d (rank 1 = first; a ranking without d adds nothing). (k + 1) / R is the
    inverse of the largest attainable RRF, first in every ranking, so that score is 1.

    >>> [round(float(s), 4) for s in reciprocal_rank_fusion(np.array([7, 3]), [np.array([7, 3]), np.array([3, -1])], k=1)]
    [0.5, 0.8333]
    """
    total = np.zeros(len(candidates), dtype=np.float64)
    for ranking in rankings:
        rank_of = {int(index): rank for rank, index in enumerate(ranking, start=1) if index >= 0}
        total += [1.0 / (k + rank_of[int(d)]) if int(d) in rank_of else 0.0 for d in candidates]
    return (total * (k + 1) / max(len(rankings), 1)).astype(np.float32)


class HybridRetriever:
    def __init__(self, sparse: BM25Retriever, dense: DenseRetriever, dense_weight: float, n_chunks: int,
                 fusion: str = "blend", rrf_k: int = 60) -> None:
        self._sparse = sparse
        self._dense = dense
        self._weight = dense_weight
        self._n = n_chunks
        self._fusion = fusion
        self._rrf_k = rrf_k

    def search(self, queries: Sequence[str], depth: int, allowed: np.ndarray | None) -> Hits:
        sparse_hits = self._sparse.search(queries, depth, allowed)
        dense_hits = self._dense.search(queries, depth, allowed)
        indices = np.full((len(queries), depth), -1, dtype=np.int64)
        scores = np.zeros((len(queries), depth), dtype=np.float32)
        for row, query in enumerate(queries):
            union = np.union1d(sparse_hits.indices[row], dense_hits.indices[row])
            union = union[union >= 0]
            if self._fusion == "rrf":
                fused = reciprocal_rank_fusion(union, [sparse_hits.indices[row], dense_hits.indices[row]], self._rrf_k)
            else:
                fused = self._blend(query, union)
            order = np.lexsort((union, -fused))[:depth]
            indices[row, : len(order)] = union[order]
            scores[row, : len(order)] = fused[order]
        return Hits(indices, scores)

    def score(self, query: str, indices: np.ndarray) -> np.ndarray:
        """Fused scores of the given chunks; under ``rrf`` their ranks are taken in both full rankings of the table."""
        if self._fusion == "rrf":
            rankings = [retriever.search([query], self._n, None).indices[0] for retriever in (self._sparse, self._dense)]
            return reciprocal_rank_fusion(indices, rankings, self._rrf_k)
        return self._blend(query, indices)

    def _blend(self, query: str, indices: np.ndarray) -> np.ndarray:
        dense = self._dense.score(query, indices)
        sparse = self._sparse.score(query, indices)
        return (self._weight * dense + (1.0 - self._weight) * sparse).astype(np.float32)


@register_retriever("hybrid")
def _hybrid(table: ChunkTable, settings: RetrievalSettings, cache: DiskCache) -> HybridRetriever:
    return HybridRetriever(
        BM25Retriever.build(table, cache),
        DenseRetriever.build(table, cache, settings.dense_index, settings.query_prompt, settings.hnsw_ef),
        settings.hybrid_weight,
        len(table),
        settings.fusion,
        settings.rrf_k,
    )
