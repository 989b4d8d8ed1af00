"""Front (trial record → **front** → report/export): rules that pick one configuration from the front, keyed by the name
used on the command line."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from tuner.errors import PickUnmet, UserError
from tuner.pareto._dominance import ties_of
from tuner.objectives import RECALL, Direction, robustness_objective
from tuner.pareto._types import FrontEntry, goodness


class PickRule(Protocol):
    def __call__(
        self,
        entries: Sequence[FrontEntry],
        directions: Mapping[str, Direction],
        eps: Mapping[str, float],
        *,
        min_recall: float | None,
    ) -> FrontEntry: ...


def knee(
    entries: Sequence[FrontEntry],
    directions: Mapping[str, Direction],
    eps: Mapping[str, float],
    *,
    min_recall: float | None = None,
) -> FrontEntry:
    """The front point that bulges furthest from the straight trade-off between the two extremes.

    On recall_at_k and the study's robustness objective (v3_delta_faithful or v3_delta_correct, named by
    ``tuner.objectives.robustness_objective``, wherever they sit in ``directions``), each is min-max
    normalized over the entries to u ∈ [0, 1] with 1 = best (an objective on which all entries are
    equal gets u = 1). A is the entry best on the first objective, B the entry best on the second.
    The knee maximizes the signed distance to the line AB,

        d(p) = ((B − A) × (p − A)) / ‖B − A‖,   signed so that the ideal corner (1, 1) is positive,

    i.e. the point where giving up some of one objective buys the most of the other. Ties (a front
    of one or two points, or a straight front) go to the entry best on the first objective.
    ``eps`` and ``min_recall`` are not used.
    """
    names = [RECALL, robustness_objective(directions)]
    good = goodness(entries, {name: directions[name] for name in names})
    low, high = good.min(axis=0), good.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    unit = np.where(high > low, (good - low) / span, 1.0)
    a = unit[max(range(len(entries)), key=lambda i: (unit[i, 0], unit[i, 1]))]
    b = unit[max(range(len(entries)), key=lambda i: (unit[i, 1], unit[i, 0]))]
    direction = b - a
    length = math.hypot(*direction)
    if length == 0:
        distance = np.zeros(len(entries))
    else:
        distance = (direction[0] * (unit[:, 1] - a[1]) - direction[1] * (unit[:, 0] - a[0])) / length
        ideal_side = direction[0] * (1 - a[1]) - direction[1] * (1 - a[0])
        if ideal_side < 0:
            distance = -distance
    best = max(range(len(entries)), key=lambda i: (round(float(distance[i]), 12), *good[i], -entries[i].number))
    return entries[best]


def min_delta(
    entries: Sequence[FrontEntry],
    directions: Mapping[str, Direction],
    eps: Mapping[str, float],
    *,
    min_recall: float | None,
) -> FrontEntry:
    """The entry with the lowest robustness objective (v3_delta_faithful or v3_delta_correct, whichever ``directions``
    names) among those with recall_at_k ≥ ``min_recall`` (ties: higher recall, then lower trial number)."""
    if min_recall is None:
        raise UserError("the min-delta rule needs a recall floor (min_recall)")
    delta = robustness_objective(directions)
    qualified = [e for e in entries if e.values[RECALL] >= min_recall]
    if not qualified:
        closest = max(entries, key=lambda e: (e.values[RECALL], -e.values[delta], -e.number))
        raise PickUnmet(
            f"no front trial reaches {RECALL} ≥ {min_recall:g}; the closest is trial {closest.number} "
            f"({RECALL} {closest.values[RECALL]:.3f}, {delta} {closest.values[delta]:.3f})",
            closest,
        )
    return min(qualified, key=lambda e: (e.values[delta], -e.values[RECALL], e.number))


def cheapest(
    entries: Sequence[FrontEntry],
    directions: Mapping[str, Direction],
    eps: Mapping[str, float],
    *,
    min_recall: float | None = None,
) -> FrontEntry:
    """Among the knee (see ``knee``) and the entries tied with it (within the noise floor on every
    quality objective, see ``ties_of``), the one with the fewest context words: the same quality,
    as far as the measurements can tell, for less context. Ties on context words go to the knee."""
    chosen = knee(entries, directions, eps, min_recall=min_recall)
    candidates = ties_of(chosen, entries, directions, eps)
    if len(candidates) <= 1:
        return chosen
    unmeasured = [e.number for e in candidates if e.context_words is None]
    if unmeasured:
        raise UserError(f"the cheapest rule needs context_words, which trials {unmeasured} do not have")
    return min(candidates, key=lambda e: (e.context_words, e.number != chosen.number, e.number))


PICK_RULES: dict[str, PickRule] = {"knee": knee, "min-delta": min_delta, "cheapest": cheapest}
"""Pick rules keyed by the name used in configuration and on the command line."""


def pick(
    rule: str,
    entries: Sequence[FrontEntry],
    directions: Mapping[str, Direction],
    eps: Mapping[str, float],
    min_recall: float | None = None,
) -> FrontEntry:
    """Pick one front entry with the rule named ``rule`` (a key of ``PICK_RULES``)."""
    if rule not in PICK_RULES:
        raise UserError(f"unknown pick rule {rule!r}; choose one of: {', '.join(sorted(PICK_RULES))}")
    if not entries:
        raise UserError("the study has no complete trial on its front to pick from")
    return PICK_RULES[rule](entries, directions, eps, min_recall=min_recall)


def runner_up(
    rule: str,
    chosen: FrontEntry,
    entries: Sequence[FrontEntry],
    directions: Mapping[str, Direction],
    eps: Mapping[str, float],
    min_recall: float | None = None,
) -> FrontEntry | None:
    """The entry rule ``rule`` would pick if ``chosen`` were not on the front: the configuration a team would take
    instead, which a pick is compared with. None when nothing else is on the front or nothing else meets the rule."""
    others = [e for e in entries if e.number != chosen.number]
    if not others:
        return None
    try:
        return pick(rule, others, directions, eps, min_recall=min_recall)
    except PickUnmet:
        return None
