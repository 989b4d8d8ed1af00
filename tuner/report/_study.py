"""Read a tuner study (see the trial data contract in docs/report.md) into the plain data the report and the front need."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from tuner.errors import UserError
from tuner.pareto import Direction, Point

CALL_KINDS = ("generator", "judge", "tokens")
PARTIAL_VALUES_ATTR = "partial_values"
"""User attr of a pruned trial holding {objective: value} measured on the cases it ran before it was pruned."""


@dataclass(frozen=True)
class StudySummary:
    """A study as the report reads it.

    ``directions`` maps each objective name (study user attr ``objectives``) to its direction, in the
    order of ``trial.values``; ``points`` are the complete trials in trial-number order; ``calls`` sums
    the ``calls`` user attr over every trial, pruned and failed ones included, since they were spent too.
    """

    name: str
    directions: dict[str, Direction]
    noise_floor: dict[str, float]
    points: tuple[Point, ...]
    pruned: tuple[FrozenTrial, ...]
    counts: dict[str, int]
    calls: dict[str, int]


def _ci(raw: Mapping[str, Any] | None) -> dict[str, tuple[float, float]]:
    """Intervals by objective; an objective whose interval is missing or has an undefined bound is left out."""
    return {
        name: (float(bounds[0]), float(bounds[1]))
        for name, bounds in (raw or {}).items()
        if bounds is not None and None not in bounds
    }


def trial_point(trial: FrozenTrial, objectives: list[str]) -> Point:
    """A complete trial as a front point: values named by ``objectives``, ``ci``/``context_words`` from its user attrs."""
    assert trial.values is not None, f"trial {trial.number} is complete but has no values"
    words = trial.user_attrs.get("context_words")
    return Point(
        number=trial.number,
        values=dict(zip(objectives, (float(v) for v in trial.values), strict=True)),
        ci=_ci(trial.user_attrs.get("ci")),
        context_words=None if words is None else float(words),
        params=dict(trial.params),
    )


def summarize_study(study: optuna.Study) -> StudySummary:
    """Objectives, directions, noise floor, complete trials as points, pruned trials, counts by state and calls spent."""
    objectives = study.user_attrs.get("objectives")
    if not isinstance(objectives, list) or len(objectives) != len(study.directions):
        raise UserError(
            f"study {study.study_name!r}: user attr 'objectives' must list one name per direction "
            f"({len(study.directions)}), got {objectives!r}; was it created by tuner?"
        )
    directions: dict[str, Direction] = {
        name: "maximize" if d == optuna.study.StudyDirection.MAXIMIZE else "minimize"
        for name, d in zip(objectives, study.directions, strict=True)
    }
    trials = sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)
    counts = {state.name.lower(): sum(t.state == state for t in trials) for state in TrialState}
    calls = {kind: sum(int(t.user_attrs.get("calls", {}).get(kind, 0)) for t in trials) for kind in CALL_KINDS}
    return StudySummary(
        name=study.study_name,
        directions=directions,
        noise_floor={name: float(v) for name, v in (study.user_attrs.get("noise_floor") or {}).items()},
        points=tuple(trial_point(t, objectives) for t in trials if t.state == TrialState.COMPLETE),
        pruned=tuple(t for t in trials if t.state == TrialState.PRUNED),
        counts=counts,
        calls=calls,
    )
