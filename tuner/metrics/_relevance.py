"""Metrics (ranking → **metrics**): the relevant-document set every retrieval metric starts from."""

from __future__ import annotations

from collections.abc import Collection


def relevant_set(relevant: Collection[str]) -> frozenset[str]:
    """The relevant doc ids as a set; a case without relevant documents cannot be scored on retrieval."""
    labels = frozenset(relevant)
    if not labels:
        raise ValueError("retrieval metrics need at least one relevant doc id")
    return labels
