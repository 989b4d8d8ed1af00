"""Metrics (ranking, verdicts → **metrics** → trial record): metrics on one case: retrieval (from labeled doc ids) and
answer-level robustness (from judge verdicts).

Every function is pure and carries its formula in its docstring; see docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

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



@dataclass(frozen=True)
class RetrievalMetricEntry:
    """One retrieval metric of the registry: its function (the entry is called as it) and ``gate_drop``, the largest
    relative drop vs the baseline ``tuner gate`` allows by default (None: reported, not gated; docs/gate.md). The gate's
    thresholds and the noise floor's metrics are read from the registry, so a metric is its module and its entry."""

    score: RetrievalMetric
    gate_drop: float | None = None

    def __call__(self, ranked: Sequence[str], relevant: Collection[str]) -> float:
        return self.score(ranked, relevant)


RETRIEVAL_METRICS: dict[str, RetrievalMetricEntry] = {
    "hit_at_k": RetrievalMetricEntry(hit_at_k, gate_drop=0.02),
    "mrr": RetrievalMetricEntry(mrr),
    "recall_at_k": RetrievalMetricEntry(recall_at_k, gate_drop=0.03),
    "context_precision": RetrievalMetricEntry(context_precision),
}
"""Retrieval metrics keyed by the name used in configuration and JSON output (this order is the outputs' order)."""

__all__ = [
    "ABSTENTION_PHRASES",
    "RETRIEVAL_METRICS",
    "DeltaParts",
    "Grade",
    "RetrievalMetric",
    "RetrievalMetricEntry",
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
