"""Metrics (ranking → **metrics** → trial record): hit@K: did any relevant document reach the context at all."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tuner.metrics._relevance import relevant_set


def hit_at_k(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """hit@K = 1 if ∃ k ≤ K: ranked[k] ∈ relevant, else 0.

    ``ranked`` holds the doc id of each chunk in the final context, in rank order (K = len(ranked));
    ``relevant`` the case's relevant doc ids (non-empty, else ``ValueError``).

    >>> hit_at_k(["x", "a"], {"a"})
    1.0
    """
    labels = relevant_set(relevant)
    return 1.0 if any(doc in labels for doc in ranked) else 0.0
