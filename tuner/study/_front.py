"""From an Optuna study to Pareto points and front entries (with ε-ties from the study's noise floor)."""

from __future__ import annotations

from typing import Any

import optuna

from tuner.pareto import Direction, FrontEntry, Point, front_entries


def directions_of(study: optuna.Study) -> dict[str, Direction]:
    names = study.user_attrs.get("objectives") or ["recall_at_k", "v3_delta_faithful"]
    return {
        name: "maximize" if d == optuna.study.StudyDirection.MAXIMIZE else "minimize"
        for name, d in zip(names, study.directions)
    }


def points_of(study: optuna.Study) -> list[Point]:
    """One point per complete trial, with its objective values, intervals, context cost and full settings."""
    names = list(directions_of(study))
    points = []
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        ci = {k: tuple(v) for k, v in (trial.user_attrs.get("ci") or {}).items() if v and None not in v}
        points.append(
            Point(
                number=trial.number,
                values=dict(zip(names, trial.values)),
                ci=ci,
                context_words=trial.user_attrs.get("context_words"),
                params=dict(trial.params),
            )
        )
    return points


def study_front(study: optuna.Study) -> tuple[dict[str, Direction], dict[str, float], list[FrontEntry]]:
    directions = directions_of(study)
    floor = {k: float(v) for k, v in (study.user_attrs.get("noise_floor") or {}).items() if k in directions}
    return directions, floor, front_entries(points_of(study), directions, floor)


def entry_json(entry: FrontEntry, trial: optuna.trial.FrozenTrial) -> dict[str, Any]:
    return {
        "trial": entry.number,
        "params": dict(entry.params),
        "values": dict(entry.values),
        "ci": {k: list(v) for k, v in entry.ci.items()},
        "context_words": entry.context_words,
        "n": trial.user_attrs.get("n"),
        "n_total": trial.user_attrs.get("n_total"),
        "tie_group": entry.tie_group,
        "epsilon_dominated_by": list(entry.epsilon_dominated_by),
    }
