"""Front (trial record → **front** → report/export): from an Optuna study to Pareto points and front entries, with
ε-ties from the study's noise floor."""

from __future__ import annotations

from typing import Any

import optuna

from tuner.errors import UserError
from tuner.objectives import CONTEXT_WORDS, Direction
from tuner.pareto import FrontEntry, Point, front_entries
from tuner.study._record import StudyRecord, TrialRecord


def directions_of(study: optuna.Study) -> dict[str, Direction]:
    """Objective name → direction, in the order of ``trial.values`` (the study's ``objectives`` record)."""
    names = StudyRecord.from_study(study).objectives
    if len(names) != len(study.directions):
        raise UserError(
            f"study {study.study_name!r}: user attr 'objectives' must list one name per direction "
            f"({len(study.directions)}), got {names!r}; was it created by tuner?"
        )
    return {
        name: "maximize" if d == optuna.study.StudyDirection.MAXIMIZE else "minimize"
        for name, d in zip(names, study.directions)
    }


def trial_point(trial: optuna.trial.FrozenTrial, objectives: list[str]) -> Point:
    """A complete trial as a front point: values named by ``objectives``, intervals and context words from its record."""
    assert trial.values is not None, f"trial {trial.number} is complete but has no values"
    record = TrialRecord.from_trial(trial)
    return Point(
        number=trial.number,
        values=dict(zip(objectives, (float(v) for v in trial.values), strict=True)),
        ci=record.intervals(),
        context_words=record.context_words,
        params=dict(trial.params),
    )


def feasible(trial: optuna.trial.FrozenTrial) -> bool:
    """Optuna's feasibility rule: every constraint the trial set (``min_recall``, ``scorable``) is ≤ 0."""
    return all(value <= 0.0 for value in trial.constraints.values())


def points_of(study: optuna.Study) -> list[Point]:
    """One point per complete feasible trial, in trial-number order: the trials ``study.best_trials`` draws
    its front from, so fronts, picks, reports and pruning rivals agree."""
    names = list(directions_of(study))
    trials = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    return [trial_point(trial, names) for trial in sorted(trials, key=lambda t: t.number) if feasible(trial)]


def study_front(study: optuna.Study) -> tuple[dict[str, Direction], dict[str, float], list[FrontEntry]]:
    directions = directions_of(study)
    floor = {k: v for k, v in (StudyRecord.from_study(study).noise_floor or {}).items() if k in directions}
    return directions, floor, front_entries(points_of(study), directions, floor)


def entry_json(entry: FrontEntry, trial: optuna.trial.FrozenTrial) -> dict[str, Any]:
    record = TrialRecord.from_trial(trial)
    return {
        "trial": entry.number,
        "params": dict(entry.params),
        "values": dict(entry.values),
        "ci": {k: list(v) for k, v in entry.ci.items()},
        CONTEXT_WORDS: entry.context_words,
        "n": record.n,
        "n_total": record.n_total,
        "tie_group": entry.tie_group,
        "epsilon_dominated_by": list(entry.epsilon_dominated_by),
    }
