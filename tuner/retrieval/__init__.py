"""Retrieval (chunks → **indexes → candidates → ranking**): chunk tables, first-stage retrievers (BM25, dense, hybrid),
reranking and the candidate cache.

Every retriever's scores are normalized to [0, 1] so one ``relevance_threshold`` means the same
thing whichever retriever a trial uses: dense = cosine clipped to [0, 1]; BM25 = the fraction of the
query's attainable score ``Σ idf`` (see ``_bm25``); hybrid = convex combination of the two.
"""

from tuner.retrieval import _hybrid  # noqa: F401  (registers hybrid; bm25 and dense register as imported)
from tuner.retrieval._base import RETRIEVERS, FirstStage, Hits
from tuner.retrieval._bm25 import BM25Retriever, build_index
from tuner.retrieval._hybrid import reciprocal_rank_fusion
from tuner.retrieval._filter import (
    FILTER_FIELDS, OPERATORS, Condition, condition_mask, filter_mask, first_stage_mask, operator_value,
)
from tuner.retrieval._dense import DenseRetriever
from tuner.retrieval._latency import LATENCY_QUESTIONS, SearchLatency, nearest_rank
from tuner.retrieval._keys import TEXT_RULES, first_stage_reads
from tuner.retrieval._pipeline import Candidates, RetrievalPipeline, RetrievedContext
from tuner.retrieval._ranking import ChunkVersions, chunk_versions, final_ranking, rerank_row
from tuner.retrieval._table import ChunkTable, load_chunk_table

__all__ = [
    "reciprocal_rank_fusion",
    "FILTER_FIELDS",
    "LATENCY_QUESTIONS",
    "OPERATORS",
    "RETRIEVERS",
    "TEXT_RULES",
    "BM25Retriever",
    "Candidates",
    "ChunkTable",
    "ChunkVersions",
    "Condition",
    "DenseRetriever",
    "FirstStage",
    "Hits",
    "RetrievalPipeline",
    "RetrievedContext",
    "SearchLatency",
    "build_index",
    "chunk_versions",
    "condition_mask",
    "filter_mask",
    "final_ranking",
    "first_stage_mask",
    "first_stage_reads",
    "load_chunk_table",
    "nearest_rank",
    "operator_value",
    "rerank_row",
]
