"""Metrics (ranking → **metrics** → trial record): context precision@K: are the relevant chunks ranked above the
irrelevant ones."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tuner.metrics._relevance import relevant_set


def context_precision(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """Context precision@K = Σ_{k=1..K} (precision@k · rel_k) / Σ_{k=1..K} rel_k.

    Counted per chunk: rel_k = 1 when the doc of the chunk at rank k is relevant, and precision@k is
    the share of relevant chunks among the first k. The result is 0 when no chunk is relevant
    (including an empty context). ``relevant`` must be non-empty.

    relevant, irrelevant, relevant → (1 + 0 + 2/3) / 2 ≈ 0.833;
    irrelevant, relevant, relevant → (0 + 1/2 + 2/3) / 2 ≈ 0.583.

    >>> round(context_precision(["a", "x", "b"], {"a", "b"}), 3)
    0.833
    """
    labels = relevant_set(relevant)
    hits = 0
    total = 0.0
    for k, doc in enumerate(ranked, start=1):
        if doc in labels:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0
