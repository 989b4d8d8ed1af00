"""Indexes (chunks → **indexes** → candidates): BM25 with ``bm25s`` (sparse-matrix scoring), normalized to [0, 1].

Normalization: bm25s' ``lucene`` variant scores a term as ``idf(t) · tf / (tf + k1 · (1 − b + b · dl / avgdl))``,
which tends to ``idf(t)`` as ``tf`` grows. A query's best attainable score is therefore ``Σ_{t∈q} idf(t)``
(unique query terms), and the normalized score ``s(q, d) / Σ_{t∈q} idf(t)`` is the fraction of that
ceiling a chunk reaches: query-independent in meaning, in [0, 1], and comparable across corpora.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np

from tuner.cache import DiskCache
from tuner.retrieval._base import Hits, register_retriever, top_k_rows
from tuner.retrieval._keys import bm25_key
from tuner.retrieval._table import ChunkTable
from tuner.settings import RetrievalSettings
from tuner.text import bm25_tokens


class BM25Retriever:
    def __init__(self, index: bm25s.BM25, n_chunks: int) -> None:
        self._index = index
        self._n = n_chunks
        vocab: dict[str, int] = index.vocab_dict
        doc_freq = np.diff(np.asarray(index.scores["indptr"]))
        n_docs = int(index.scores["num_docs"])
        self._idf = {
            token: math.log(1.0 + (n_docs - doc_freq[tid] + 0.5) / (doc_freq[tid] + 0.5))
            for token, tid in vocab.items()
            if tid < len(doc_freq) and doc_freq[tid] > 0
        }

    @classmethod
    def build(cls, table: ChunkTable, cache: DiskCache, k1: float = 1.5, b: float = 0.75) -> BM25Retriever:
        def build(folder: Path) -> None:
            index = bm25s.BM25(method="lucene", k1=k1, b=b)
            index.index([bm25_tokens(p) or ["\x00"] for p in table.passages], show_progress=False)
            index.save(str(folder))

        index = cache.get_or_build("bm25", bm25_key(table.key, k1, b), build, lambda folder: bm25s.BM25.load(str(folder)))
        return cls(index, len(table))

    def _query_terms(self, query: str) -> list[str]:
        return [t for t in dict.fromkeys(bm25_tokens(query)) if t in self._idf]

    def normalized_scores(self, query: str) -> np.ndarray:
        terms = self._query_terms(query)
        if not terms:
            return np.zeros(self._n, dtype=np.float32)
        ceiling = sum(self._idf[t] for t in terms)
        return (np.asarray(self._index.get_scores(terms), dtype=np.float32) / ceiling).clip(0.0, 1.0)

    def search(self, queries: Sequence[str], depth: int, allowed: np.ndarray | None) -> Hits:
        scores = np.stack([self.normalized_scores(q) for q in queries]) if queries else np.zeros((0, self._n))
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        return top_k_rows(scores, depth)

    def score(self, query: str, indices: np.ndarray) -> np.ndarray:
        scores: np.ndarray = self.normalized_scores(query)[indices]
        return scores


@register_retriever("bm25", needs_vectors=False)
def _bm25(table: ChunkTable, settings: RetrievalSettings, cache: DiskCache) -> BM25Retriever:
    return BM25Retriever.build(table, cache)
