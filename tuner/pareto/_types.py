"""Front (trial record → **front** → report/export): the data a front is built from: one measured configuration per
complete trial."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
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


class PairedMargins(dict[str, float]):
    """The noise floor of one configuration per objective (the mapping itself: what a reader is shown as ε), and for
    two trials the margins their paired difference must clear (:meth:`between`).

    ``pair(a, b)`` gives, per objective it can compare, z · se of the paired comparison of trials a and b on the
    cases both scored (``tuner.stats.paired_comparison``); an objective it leaves out (no per-case scores, or
    context words) falls back to the floor. Results are cached per pair: a front asks for each pair once.
    """

    def __init__(self, floor: Mapping[str, float], pair: Callable[[int, int], Mapping[str, float]]) -> None:
        super().__init__(floor)
        self._pair = pair
        self._cache: dict[tuple[int, int], dict[str, float]] = {}

    def between(self, a: int, b: int) -> dict[str, float]:
        key = (min(a, b), max(a, b))
        if key not in self._cache:
            self._cache[key] = {**self, **self._pair(*key)}
        return self._cache[key]


def margin_tensor(
    rows: Sequence[Point], columns: Sequence[Point], directions: Mapping[str, Direction], eps: Mapping[str, float]
) -> NDArray[np.float64]:
    """ε per objective for each (row, column) pair, shape [rows, columns, objectives] (one ε broadcast when ``eps``
    is not paired); a point compared with itself keeps the floor."""
    if not isinstance(eps, PairedMargins):
        return np.broadcast_to(epsilon_vector(directions, eps), (len(rows), len(columns), len(directions)))
    tensor = np.empty((len(rows), len(columns), len(directions)))
    for i, row in enumerate(rows):
        for j, column in enumerate(columns):
            margins = eps if row.number == column.number else eps.between(row.number, column.number)
            tensor[i, j] = epsilon_vector(directions, margins)
    return tensor


def epsilon_vector(directions: Mapping[str, Direction], eps: Mapping[str, float]) -> NDArray[np.float64]:
    """ε per objective in ``directions`` order; an objective missing from ``eps`` is compared exactly (ε = 0)."""
    vector = np.array([float(eps.get(name, 0.0)) for name in directions], dtype=float)
    if np.any(vector < 0) or not np.all(np.isfinite(vector)):
        raise ValueError(f"noise floors must be finite and ≥ 0, got {dict(eps)}")
    return vector
