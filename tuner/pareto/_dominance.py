"""Front (trial record → **front** → report/export): exact and ε-dominance, the fronts they define, and groups of front
trials tied within the noise floor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from tuner.objectives import CONTEXT_WORDS, Direction
from tuner.pareto._types import FrontEntry, Point, goodness, margin_tensor

P = TypeVar("P", bound=Point)

_ROUNDING = 1e-12
"""Slack for float rounding in ε comparisons, so that 0.80 − 0.75 counts as "within 0.05"."""


def _dominance_matrix(
    good: NDArray[np.float64], eps: NDArray[np.float64], columns: NDArray[np.float64] | None = None
) -> NDArray[np.bool_]:
    """``m[a, b]`` is True when row a ≻_ε column b (columns: the rows themselves by default); ``eps`` is one ε per
    objective or one per (a, b, objective) (ε = 0 gives exact dominance)."""
    diff = good[:, None, :] - (good if columns is None else columns)[None, :, :]
    # numpy's stubs cannot tell that a reduction over axis 2 of a 3-d array is an array: name the type
    dominates: NDArray[np.bool_]
    if not eps.any():
        dominates = np.all(diff >= 0, axis=2) & np.any(diff > 0, axis=2)
    else:
        dominates = np.all(diff >= -eps - _ROUNDING, axis=2) & np.any(diff > eps + _ROUNDING, axis=2)
    return dominates


def _front_order(points: Sequence[P], good: NDArray[np.float64]) -> list[int]:
    """Indices sorted best-first on the first objective, then the second, ..., then by trial number."""
    return sorted(range(len(points)), key=lambda i: (*(-good[i]), points[i].number))


def pareto_front(points: Sequence[P], directions: Mapping[str, Direction]) -> list[P]:
    """The points no other point dominates, best-first on the first objective.

    a ≻ b iff a is at least as good as b on every objective and strictly better on at least one.
    Points with identical values do not dominate each other, so duplicates stay on the front together.

    >>> from tuner.pareto import Point
    >>> pts = [Point(0, {"r": 0.9, "d": 0.2}), Point(1, {"r": 0.8, "d": 0.1}), Point(2, {"r": 0.7, "d": 0.15})]
    >>> [p.number for p in pareto_front(pts, {"r": "maximize", "d": "minimize"})]
    [0, 1]
    """
    good = goodness(points, directions)
    dominated: NDArray[np.bool_] = np.any(_dominance_matrix(good, np.zeros(len(directions))), axis=0)
    return [points[i] for i in _front_order(points, good) if not dominated[i]]


def epsilon_front(points: Sequence[P], directions: Mapping[str, Direction], eps: Mapping[str, float]) -> list[P]:
    """The points no other point ε-dominates: the set the measurement noise cannot rule out.

    With goodness gᵢ (the value for maximized objectives, its negation for minimized ones) and
    per-objective noise floor εᵢ ≥ 0 (an objective missing from ``eps`` has εᵢ = 0, i.e. exact):

        a ≻_ε b  iff  gᵢ(a) ≥ gᵢ(b) − εᵢ for every i   (a is better than b or within εᵢ of it)
                 and  gᵢ(a) > gᵢ(b) + εᵢ for some i     (a is better than b by more than εᵢ)

    εᵢ is one number per objective, or, with ``PairedMargins``, the paired margin of each pair (a, b).
    With every εᵢ = 0 this is exact dominance. It is neither a subset nor a superset of the exact
    front: a front trial whose only advantage is within the noise is ε-dominated, and a trial that
    is dominated only by a margin within the noise is not.

    >>> from tuner.pareto import Point
    >>> pts = [Point(0, {"r": 0.9, "d": 0.20}), Point(1, {"r": 0.7, "d": 0.19}), Point(2, {"r": 0.88, "d": 0.21})]
    >>> [p.number for p in epsilon_front(pts, {"r": "maximize", "d": "minimize"}, {"r": 0.05, "d": 0.05})]
    [0, 2]
    """
    good = goodness(points, directions)
    dominated: NDArray[np.bool_] = np.any(_dominance_matrix(good, margin_tensor(points, points, directions, eps)), axis=0)
    return [points[i] for i in _front_order(points, good) if not dominated[i]]


def _tie_matrix(
    good: NDArray[np.float64],
    eps: NDArray[np.float64],
    quality: NDArray[np.bool_],
    columns: NDArray[np.float64] | None = None,
) -> NDArray[np.bool_]:
    diff = np.abs(good[:, None, :] - (good if columns is None else columns)[None, :, :])
    tied: NDArray[np.bool_] = np.all((diff <= eps + _ROUNDING) | ~quality, axis=2)
    return tied


def _quality_mask(directions: Mapping[str, Direction]) -> NDArray[np.bool_]:
    # Context cost is measured exactly and is what ties are broken on, so it is not part of the tie test.
    return np.array([name != CONTEXT_WORDS for name in directions], dtype=bool)


def ties_of(
    target: Point, points: Sequence[P], directions: Mapping[str, Direction], eps: Mapping[str, float]
) -> list[P]:
    """The points within the noise floor of ``target`` on every quality objective (``target`` included
    if it is among ``points``): |vᵢ(a) − vᵢ(target)| ≤ εᵢ for every objective except context_words (εᵢ of the pair
    with ``PairedMargins``)."""
    good = goodness([target, *points], directions)
    eps_row = margin_tensor([target], [target, *points], directions, eps)
    tied = _tie_matrix(good[:1], eps_row, _quality_mask(directions), good)[0, 1:]
    return [p for p, t in zip(points, tied, strict=True) if t]


def tie_groups(
    points: Sequence[Point], directions: Mapping[str, Direction], eps: Mapping[str, float]
) -> list[tuple[int, ...]]:
    """Groups of trial numbers whose points cannot be told apart by the noise floor.

    Two points are tied when |vᵢ(a) − vᵢ(b)| ≤ εᵢ on every quality objective (every objective but
    context_words); with ``PairedMargins`` εᵢ is the pair's paired margin (z · se of their paired comparison). A group is a connected component of that relation with at least two members,
    so a chain a~b~c is one group even when a and c are further apart than ε. Groups keep the order
    of ``points``, and are ordered by their first member.

    >>> from tuner.pareto import Point
    >>> pts = [Point(0, {"r": 0.90, "d": 0.20}), Point(1, {"r": 0.88, "d": 0.18}), Point(2, {"r": 0.7, "d": 0.1})]
    >>> tie_groups(pts, {"r": "maximize", "d": "minimize"}, {"r": 0.05, "d": 0.05})
    [(0, 1)]
    """
    good = goodness(points, directions)
    tied = _tie_matrix(good, margin_tensor(points, points, directions, eps), _quality_mask(directions))
    component = list(range(len(points)))

    def root(i: int) -> int:
        while component[i] != i:
            component[i] = component[component[i]]
            i = component[i]
        return i

    for a, b in zip(*np.nonzero(np.triu(tied, k=1)), strict=True):
        ra, rb = root(int(a)), root(int(b))
        if ra != rb:
            component[max(ra, rb)] = min(ra, rb)
    members: dict[int, list[int]] = {}
    for i in range(len(points)):
        members.setdefault(root(i), []).append(points[i].number)
    return [tuple(group) for group in members.values() if len(group) > 1]


def front_entries(
    points: Sequence[Point], directions: Mapping[str, Direction], eps: Mapping[str, float]
) -> list[FrontEntry]:
    """The exact front (see ``pareto_front``) with each trial's tie group and the trials that ε-dominate it."""
    front = pareto_front(points, directions)
    group_of = {number: index for index, group in enumerate(tie_groups(front, directions, eps)) for number in group}
    # only the front's columns are needed: paired margins are worked out per pair, so fewer pairs is less work
    beaten = _dominance_matrix(
        goodness(points, directions), margin_tensor(points, front, directions, eps), goodness(front, directions)
    )
    column = {p.number: j for j, p in enumerate(front)}
    return [
        FrontEntry(
            number=p.number,
            values=p.values,
            ci=p.ci,
            context_words=p.context_words,
            params=p.params,
            tie_group=group_of.get(p.number),
            epsilon_dominated_by=tuple(sorted(points[int(a)].number for a in np.nonzero(beaten[:, column[p.number]])[0])),
        )
        for p in front
    ]
