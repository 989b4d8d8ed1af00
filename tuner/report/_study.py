"""Report (front → **report**): read a tuner study (its study and trial records, see docs/report.md) into the plain data
the report needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from tuner.objectives import Direction
from tuner.pareto import PairedMargins, Point
from tuner.front import PairedComparisons, StudyRecord, TrialRecord, directions_of, points_of, study_margins, study_summary

CALL_KINDS = ("generator", "judge", "tokens", "cached_tokens")


@dataclass(frozen=True)
class StudySummary:
    """A study as the report reads it.

    ``directions`` maps each objective name (study user attr ``objectives``) to its direction, in the
    order of ``trial.values``; ``noise_floor`` one configuration's noise floor per objective, which also compares
    two trials paired (``PairedMargins``); ``points`` are the complete trials in trial-number order; ``pruned`` the trials
    pruned on evidence; ``counts`` has one entry per Optuna state plus ``repeated``, the trials that repeated an
    evaluated configuration (Optuna stores them as pruned; they are counted there and not under ``pruned``, as the
    run's own summary line counts them); ``calls`` sums the ``calls`` user attr over every trial, pruned and failed
    ones included, since they were spent too, and ``cost`` their price at the backends' ``pricing`` (0 when none is
    configured); ``retrieval`` the retrieval service the study measured (None: tuner's own retrieval).
    """

    name: str
    directions: dict[str, Direction]
    noise_floor: PairedMargins
    points: tuple[Point, ...]
    pruned: tuple[FrozenTrial, ...]
    counts: dict[str, int]
    calls: dict[str, int]
    cost: float
    retrieval: dict[str, Any] | None = None


def summarize_study(study: optuna.Study, comparisons: PairedComparisons | None = None) -> StudySummary:
    """Objectives, directions, noise floor, complete trials as points, pruned trials, counts by state and calls spent
    (``comparisons``: the paired comparisons of this reading of the study, to reuse)."""
    directions = directions_of(study)
    trials = sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)
    records = [TrialRecord.from_trial(t) for t in trials]
    repeated = {t.number for t, r in zip(trials, records) if r.duplicate_of is not None}
    pruned = tuple(t for t in trials if t.state == TrialState.PRUNED and t.number not in repeated)
    counts = {state.name.lower(): sum(t.state == state for t in trials) for state in TrialState}
    counts.update(pruned=len(pruned), repeated=len(repeated))
    spent = study_summary(study).calls
    return StudySummary(
        name=study.study_name,
        directions=directions,
        noise_floor=study_margins(study, comparisons),
        points=tuple(points_of(study)),
        pruned=pruned,
        counts=counts,
        calls={kind: getattr(spent, kind) for kind in CALL_KINDS},
        cost=spent.cost,
        retrieval=StudyRecord.from_study(study).retrieval,
    )
