"""Metrics (ranking → **metrics** → trial record): document-level recall@K: the share of relevant documents that reached
the context."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tuner.metrics._relevance import relevant_set


def recall_at_k(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """recall@K = |relevant ∩ set(ranked)| / |relevant|.

    Counted per document, not per chunk: several chunks of one relevant document count once.
    An empty ``relevant`` raises ``ValueError`` (the ratio is undefined).

    >>> recall_at_k(["a", "a", "x"], {"a", "b"})
    0.5
    """
    labels = relevant_set(relevant)
    return len(labels.intersection(ranked)) / len(labels)
