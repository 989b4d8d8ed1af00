"""Front (trial record → **front** → report/export): the data a front is built from: one measured configuration per
complete trial."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tuner.objectives import Direction


@dataclass(frozen=True)
class Point:
    """One complete trial: its objective values, their 95% intervals, context cost and parameters."""

    number: int
    values: Mapping[str, float]
    ci: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    context_words: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FrontEntry(Point):
    """A point on the exact front, annotated with what the noise floor says about it.

    ``tie_group`` is the index into ``tie_groups(front, ...)`` of the group this entry belongs to
    (None when no other front trial is within the noise floor of it); ``epsilon_dominated_by``
    lists the trials that beat it by more than the noise floor on some objective while being
    within it on all others (empty: the noise cannot rule it out).
    """

    tie_group: int | None = None
    epsilon_dominated_by: tuple[int, ...] = ()


def goodness(points: Sequence[Point], directions: Mapping[str, Direction]) -> NDArray[np.float64]:
    """Matrix of objective values (one row per point, columns in ``directions`` order), negated for
    minimized objectives so that larger is better everywhere."""
    sign = {"maximize": 1.0, "minimize": -1.0}
    for name, direction in directions.items():
        if direction not in sign:
            raise ValueError(f"objective {name!r} has direction {direction!r}; expected 'maximize' or 'minimize'")
    rows = []
    for point in points:
        missing = [name for name in directions if name not in point.values]
        if missing:
            raise ValueError(f"trial {point.number} has no value for {missing}")
        row = [sign[direction] * float(point.values[name]) for name, direction in directions.items()]
        if not all(math.isfinite(v) for v in row):
            raise ValueError(f"trial {point.number} has a non-finite objective value: {dict(point.values)}")
        rows.append(row)
    return np.array(rows, dtype=float).reshape(len(points), len(directions))


def epsilon_vector(directions: Mapping[str, Direction], eps: Mapping[str, float]) -> NDArray[np.float64]:
    """ε per objective in ``directions`` order; an objective missing from ``eps`` is compared exactly (ε = 0)."""
    vector = np.array([float(eps.get(name, 0.0)) for name in directions], dtype=float)
    if np.any(vector < 0) or not np.all(np.isfinite(vector)):
        raise ValueError(f"noise floors must be finite and ≥ 0, got {dict(eps)}")
    return vector
