"""Metrics (ranking, verdicts → **metrics** → trial record): metrics on one case: retrieval (from labeled doc ids) and
answer-level robustness (from judge verdicts).

Every function is pure and carries its formula in its docstring; see docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from tuner.metrics.context_precision import context_precision
from tuner.metrics.correct import correct
from tuner.metrics.delta import Grade, delta_faithful, grade_delta
from tuner.metrics.exposure import DeltaParts, TiedExposure, delta_parts, exposed, tie_flip
from tuner.metrics.faithfulness import contradicted_share, faithful, missing_reason
from tuner.metrics.hit_at_k import hit_at_k
from tuner.metrics.misled import misled
from tuner.metrics.mrr import mrr
from tuner.metrics.recall_at_k import recall_at_k, recall_lower_bound
from tuner.metrics.rejection import ABSTENTION_PHRASES, rejected

RetrievalMetric = Callable[[Sequence[str], Collection[str]], float]
"""A retrieval metric on one query: (doc id of each context chunk in rank order, relevant doc ids) → score."""

RETRIEVAL_METRICS: dict[str, RetrievalMetric] = {
    "hit_at_k": hit_at_k,
    "mrr": mrr,
    "recall_at_k": recall_at_k,
    "context_precision": context_precision,
}
"""Retrieval metrics keyed by the name used in configuration and JSON output."""

__all__ = [
    "ABSTENTION_PHRASES",
    "RETRIEVAL_METRICS",
    "DeltaParts",
    "Grade",
    "RetrievalMetric",
    "TiedExposure",
    "context_precision",
    "contradicted_share",
    "correct",
    "delta_faithful",
    "delta_parts",
    "exposed",
    "faithful",
    "grade_delta",
    "hit_at_k",
    "misled",
    "missing_reason",
    "mrr",
    "recall_at_k",
    "recall_lower_bound",
    "rejected",
    "tie_flip",
]
