"""Indexes (chunks → **indexes** → candidates): BM25 with ``bm25s`` (sparse-matrix scoring), normalized to [0, 1].

Terms: :func:`tuner.text.analyzer_tokens` of the table's language, the rule of the Milvus analyzer tuner gives its
collections, so both engines count the same terms (docs/engine.md); a query term counts as often as the query holds
it (``q_t``), as Milvus's query vector does.

Normalization: bm25s' ``lucene`` variant scores a term as ``idf(t) · tf / (tf + k1 · (1 − b + b · dl / avgdl))``,
which tends to ``idf(t)`` as ``tf`` grows. A query's best attainable score is therefore ``Σ_t q_t · idf(t)`` (over its
distinct terms), and the normalized score ``Σ_t q_t · s_t(d) / Σ_t q_t · idf(t)`` is the fraction of that ceiling a
chunk reaches: query-independent in meaning, in [0, 1], and comparable across corpora.

Scaling: a query is scored from the posting lists of its own terms only (the index's columns, added term by term in
float32 exactly as ``bm25s`` adds them), and the top ``depth`` chunks are picked with ``np.partition`` among the
chunks sharing a term with it. A list holds only chunks that score: where fewer than ``depth`` chunks share a term
with the query the rest of its slots stay empty (−1), as Milvus's BM25 search returns no zero-score chunk
(:data:`tuner.retrieval._keys.BM25_LIST_RULE`, issue 52 §1). Memory is one score vector of the corpus per query, never a
queries × chunks matrix. The index is computed for all postings at once (:func:`build_index`), the same numbers as
bm25s' chunk-by-chunk loop (``bench/bm25_scale.py``).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from functools import lru_cache, partial
from itertools import count
from pathlib import Path

import bm25s
import numpy as np
import scipy.sparse

from tuner.cache import DiskCache
from tuner.retrieval._base import Hits, register_retriever
from tuner.retrieval._keys import bm25_key
from tuner.retrieval._table import ChunkTable
from tuner.settings import RetrievalSettings
from tuner.text import Language, analyzer_term_ids, analyzer_tokens
from tuner.workers import map_shards

EMPTY_PASSAGE = "\x00"
"""The one token of a passage without BM25 terms (bm25s cannot index an empty document); no query has it."""


@lru_cache(maxsize=16384)  # hybrid retrieval and a study's trials tokenize the same questions again
def query_terms(query: str, language: Language) -> tuple[tuple[str, int], ...]:
    """The distinct BM25 terms of ``query`` with how often it holds each, in order of first occurrence.

    >>> query_terms("Germany: what does Germany export?", "en")  # bm25s' English list lacks "what", "does"
    (('germany', 2), ('what', 1), ('does', 1), ('export', 1))
    """
    return tuple(Counter(analyzer_tokens(query, language)).items())


def build_index(passages: Sequence[str], k1: float, b: float, language: Language) -> bm25s.BM25:
    """bm25s' ``lucene`` index of ``passages``, equal bit for bit to ``bm25s.BM25.index`` over their token strings
    (``tests/retrieval_tests/test_bm25_topk.py``) but computed for all postings at once instead of chunk by chunk.

    Passages are tokenized in batches (:func:`tuner.text.analyzer_term_ids`; a large corpus in worker processes,
    :func:`tuner.workers.map_shards`) into ids of one vocabulary (a term's string is kept once, however many chunks
    hold it); the (term, chunk) pairs are counted in a sparse matrix of terms × chunks, which also gives the index's
    column order. Per posting, in bm25s' own dtypes and order of operations: ``idf(t) · tf / (k1 · ((1 − b) + b · dl / avgdl) + tf)``
    with ``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))`` rounded to float32, the rest in float64, the product
    stored as float32."""
    vocab: defaultdict[str, int] = defaultdict(count().__next__)  # a new term gets the next id
    ids, counts = [], []
    for shard_vocab, shard_ids, shard_counts in map_shards(partial(analyzer_term_ids, empty=EMPTY_PASSAGE, language=language),
                                                                passages):
        # a shard's new terms, in its order of first occurrence, follow the terms of the shards before it: the ids
        # one pass over all passages would give
        to_global = np.array([vocab[term] for term in shard_vocab], dtype=np.int64)
        ids.append(to_global[shard_ids])
        counts.append(shard_counts)
    lengths = np.concatenate([np.zeros(0, dtype=np.int64), *counts])
    chunk_of = np.repeat(np.arange(len(passages), dtype=np.int32), lengths)
    # rows are terms, columns chunks: the conversion counts the (term, chunk) pairs by bucketing them (linear; the
    # pairs come in chunk order, so each row's chunks are already ascending), no sort of all pairs
    postings = scipy.sparse.csr_matrix((np.ones(len(chunk_of), dtype=np.int64), (np.concatenate(ids), chunk_of)),
                                       shape=(len(vocab), len(passages)))
    del ids, chunk_of
    postings.sum_duplicates()
    doc_freq = np.diff(postings.indptr).astype(np.int64)
    terms, chunks, tf = np.repeat(np.arange(len(vocab)), doc_freq), postings.indices.astype(np.int32), postings.data
    n_docs = len(passages)
    idf = np.array([math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) for df in doc_freq.tolist()], dtype=np.float32)
    length_norm = k1 * ((1 - b) + b * lengths / lengths.mean())
    tf32 = tf.astype(np.float32)
    data = (idf[terms] * (tf32 / (length_norm[chunks] + tf32))).astype(np.float32)
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(doc_freq, out=indptr[1:])
    index = bm25s.BM25(method="lucene", k1=k1, b=b)
    index.scores = {"data": data, "indices": chunks, "indptr": indptr, "num_docs": n_docs}
    index.vocab_dict = {**vocab, "": len(vocab)}  # bm25s.BM25.index adds the empty token after the vocabulary
    index.unique_token_ids_set = set(index.vocab_dict.values())
    index.nonoccurrence_array = None  # lucene has no score for absent terms
    return index


class BM25Retriever:
    def __init__(self, index: bm25s.BM25, n_chunks: int, language: Language) -> None:
        self._n = n_chunks
        self._language = language
        self._data = np.asarray(index.scores["data"])
        self._postings = np.asarray(index.scores["indices"])
        self._starts = np.asarray(index.scores["indptr"])
        doc_freq = np.diff(self._starts)
        n_docs = int(index.scores["num_docs"])
        vocab: dict[str, int] = index.vocab_dict
        self._terms = {
            token: (tid, math.log(1.0 + (n_docs - doc_freq[tid] + 0.5) / (doc_freq[tid] + 0.5)))
            for token, tid in vocab.items()
            if tid < len(doc_freq) and doc_freq[tid] > 0
        }

    @classmethod
    def build(cls, table: ChunkTable, cache: DiskCache, k1: float = 1.5, b: float = 0.75) -> BM25Retriever:
        def build(folder: Path) -> None:
            build_index(table.passages, k1, b, table.language).save(str(folder))

        index = cache.get_or_build("bm25", bm25_key(table.key, table.language, k1, b), build,
                                   lambda folder: bm25s.BM25.load(str(folder)))
        return cls(index, len(table), table.language)

    def matches(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """The chunks sharing a term with ``query`` (ascending) and their normalized scores; every other chunk scores 0."""
        terms = [(*self._terms[t], repeats) for t, repeats in query_terms(query, self._language) if t in self._terms]
        if not terms:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        raw = np.zeros(self._n, dtype=self._data.dtype)
        for tid, _, repeats in terms:
            span = slice(self._starts[tid], self._starts[tid + 1])
            # a term's postings name distinct chunks; a repeated query term counts as often as the query holds it
            raw[self._postings[span]] += self._data[span] if repeats == 1 else repeats * self._data[span]
        chunks = np.flatnonzero(raw)
        ceiling = sum(idf * repeats for _, idf, repeats in terms)
        scores: np.ndarray = (raw[chunks] / ceiling).clip(0.0, 1.0)
        return chunks, scores

    def search(self, queries: Sequence[str], depth: int, allowed: np.ndarray | None) -> Hits:
        """Per query the ``depth`` best chunks by (normalized score descending, chunk index) among those sharing a
        term with it (empty slots, −1, where fewer do); chunks outside ``allowed`` never."""
        indices = np.full((len(queries), depth), -1, dtype=np.int64)
        values = np.zeros((len(queries), depth), dtype=np.float32)
        for row, query in enumerate(queries):
            chunks, scores = self.matches(query)
            keep = scores > 0.0
            if allowed is not None:
                keep &= allowed[chunks]
            chunks, scores = chunks[keep], scores[keep]
            if len(chunks) > depth:
                cut = np.partition(scores, len(scores) - depth)[len(scores) - depth]  # the depth-th best score
                chunks, scores = chunks[scores >= cut], scores[scores >= cut]
            order = np.lexsort((chunks, -scores))[:depth]
            taken = len(order)
            indices[row, :taken] = chunks[order]
            values[row, :taken] = scores[order]
        return Hits(indices, values)

    def score(self, query: str, indices: np.ndarray) -> np.ndarray:
        chunks, scores = self.matches(query)
        at = np.searchsorted(chunks, indices)
        found = at < len(chunks)
        found[found] = chunks[at[found]] == indices[found]
        out = np.zeros(len(indices), dtype=np.float32)
        out[found] = scores[at[found]]
        return out


@register_retriever("bm25")
def _bm25(table: ChunkTable, settings: RetrievalSettings, cache: DiskCache) -> BM25Retriever:
    return BM25Retriever.build(table, cache)
