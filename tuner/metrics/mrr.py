"""Metrics (ranking → **metrics** → trial record): reciprocal rank: how high the first relevant chunk sits in the
context."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tuner.metrics._relevance import relevant_set


def mrr(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """RR = 1 / rank of the first chunk whose doc is relevant (ranks 1-based), 0 if there is none.

    Averaged over cases this is the mean reciprocal rank. ``relevant`` must be non-empty.

    >>> mrr(["x", "y", "a"], {"a"})
    0.3333333333333333
    """
    labels = relevant_set(relevant)
    for rank, doc in enumerate(ranked, start=1):
        if doc in labels:
            return 1.0 / rank
    return 0.0
