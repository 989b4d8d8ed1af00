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


def recall_lower_bound(recall: float, answered: int, no_answer: int) -> float:
    """Recall over every drafted case a reviewer decided answerable or not, counting the ``no_answer`` cases (marked "no
    answer in the knowledge base", so left out of the golden set) as misses:

        recall_lb = recall · n / (n + m),   n = ``answered`` cases the recall is the mean over, m = ``no_answer``.

    A lower bound: a case marked no answer may still have one the reviewer did not find. Applied to the bounds of a
    recall interval it gives the interval of the lower bound (the map is increasing). ``answered`` 0 with
    ``no_answer`` 0 raises ``ValueError``.

    >>> recall_lower_bound(0.9, 90, 10)
    0.81
    """
    if answered < 0 or no_answer < 0 or answered + no_answer == 0:
        raise ValueError(f"need at least one case, got answered={answered}, no_answer={no_answer}")
    return recall * answered / (answered + no_answer)
