"""Candidates (indexes → **candidates**): how long the first stage takes to search one question, the figure a
search-time index knob (``hnsw_ef``, ``ivf_nprobe``) trades against recall and a study's ``constraints.max_latency_ms``
bounds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

LATENCY_QUESTIONS = 32
"""How many golden questions (the first ones) are searched one per call to time a first-stage configuration."""


def nearest_rank(values: Sequence[float], percent: float) -> float:
    """The ``percent``-th percentile of ``values`` by the nearest-rank rule: the ⌈p/100 · n⌉-th smallest value (the
    smallest for p = 0), so it is always a value that was measured.

    >>> nearest_rank([4.0, 1.0, 3.0, 2.0], 50), nearest_rank([4.0, 1.0, 3.0, 2.0], 95), nearest_rank([7.0], 50)
    (2.0, 4.0, 7.0)
    """
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return ordered[max(1, math.ceil(percent / 100 * len(ordered))) - 1]


@dataclass(frozen=True)
class SearchLatency:
    """Milliseconds one first-stage search of one question took: the median (``p50_ms``) and the 95th percentile
    (``p95_ms``) by nearest rank over ``n`` questions, each searched alone with its vector already computed (question
    embedding and reranking are not in it: they cost the same whatever the index knobs)."""

    p50_ms: float
    p95_ms: float
    n: int

    @classmethod
    def of(cls, seconds: Sequence[float]) -> SearchLatency:
        """The latency of searches that took ``seconds`` each.

        >>> SearchLatency.of([0.004, 0.001, 0.003, 0.002])
        SearchLatency(p50_ms=2.0, p95_ms=4.0, n=4)
        """
        ms = [s * 1000 for s in seconds]
        return cls(round(nearest_rank(ms, 50), 3), round(nearest_rank(ms, 95), 3), len(ms))

    def to_dict(self) -> dict[str, Any]:
        return {"p50_ms": self.p50_ms, "p95_ms": self.p95_ms, "n": self.n}

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> SearchLatency:
        return cls(float(stored["p50_ms"]), float(stored["p95_ms"]), int(stored["n"]))
