"""Front (trial record → **front** → report/export): from an Optuna study to Pareto points and front entries, with
ε-ties from the study's noise floor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import optuna

from tuner.errors import UserError
from tuner.objectives import CONTEXT_WORDS, Direction
from tuner.pareto import FrontEntry, PairedMargins, Point, front_entries
from tuner.front._paired import paired_margins
from tuner.front._record import StudyRecord, TrialRecord


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


def study_margins(study: optuna.Study) -> PairedMargins:
    """The study's noise floor (one configuration's, what is shown as ε), with the paired margin of any two of its
    complete trials from the per-case scores they recorded and the study's run-to-run margins."""
    record = StudyRecord.from_study(study)
    directions = directions_of(study)
    floor = {k: v for k, v in (record.noise_floor or {}).items() if k in directions}
    records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
    return paired_margins(records, list(directions), floor, record.pruning_margin)


def study_front(study: optuna.Study) -> tuple[dict[str, Direction], PairedMargins, list[FrontEntry]]:
    """Directions, the margins two trials are compared with (the noise floor as a mapping; paired per pair of
    trials) and the front entries with their ε-ties and ε-dominance decided paired."""
    directions = directions_of(study)
    margins = study_margins(study)
    return directions, margins, front_entries(points_of(study), directions, margins)


def entry_json(
    entry: FrontEntry, trial: optuna.trial.FrozenTrial, confirmed: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A front row as ``tuner pareto --json`` and ``tuner run --json`` print it; with ``confirmed`` (the trial's entry
    in the study's ``confirm`` record) its figures on the held-out cases, their intervals and the optimism
    (tuning − confirmation) beside the tuning ones."""
    record = TrialRecord.from_trial(trial)
    confirm = {} if confirmed is None else {
        "confirm": dict(confirmed["values"]),
        "confirm_ci": dict(confirmed["ci"]),
        "confirm_n": confirmed["n"],
        "optimism": {name: entry.values[name] - value for name, value in confirmed["values"].items()
                     if value is not None and name in entry.values},
    }
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
        **confirm,
    }
