"""Front (trial record → **front** → report/export): the front's figures on the confirmation cases (``confirm:`` in a
study file), which the pick rules use, and how much better the search's own figures looked (optimism)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import optuna

from tuner.front._record import StudyRecord
from tuner.objectives import CONTEXT_WORDS, Direction
from tuner.pareto import FrontEntry


def optimism(tuning: float, held_out: float, direction: Direction) -> float:
    """How much better the tuning figure looked than the held-out one, in the objective's own units: tuning − held out
    for a maximized objective, held out − tuning for a minimized one. Positive: the search's figure overstated the
    configuration (the winner's curse); negative: it did better on the cases the search never saw.

    >>> optimism(0.95, 0.90, "maximize"), optimism(0.10, 0.25, "minimize")
    (0.04999999999999993, 0.15)
    """
    return tuning - held_out if direction == "maximize" else held_out - tuning


def confirmed_entries(study: optuna.Study, entries: Sequence[FrontEntry]) -> list[FrontEntry]:
    """The front with each member's values and intervals replaced by its confirmation figures (what pick rules use,
    and what a figure printed beside a pick must be) when every member has them for every quality objective; else the
    front as it is (a study without ``confirm:``). A held-out figure without an interval keeps none."""
    results = StudyRecord.from_study(study).confirm
    held = [results.get(e.number) for e in entries]
    if not entries or not all(
        c is not None and all(c.values.get(name) is not None for name in e.values if name != CONTEXT_WORDS)
        for e, c in zip(entries, held)
    ):
        return list(entries)
    confirmed = []
    for entry, confirmation in zip(entries, held):
        assert confirmation is not None
        names = [name for name in entry.values if name in confirmation.values]
        intervals = {name: ci for name in names if (ci := confirmation.interval(name)) is not None}
        kept = {name: ci for name, ci in entry.ci.items() if name not in names}
        confirmed.append(replace(entry, values={**entry.values, **{n: float(confirmation.values[n] or 0.0) for n in names}},
                                 ci={**kept, **intervals}))
    return confirmed
