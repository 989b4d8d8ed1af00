"""Front (trial record → **front** → report/export): from an Optuna study to Pareto points and front entries, with
ε-ties from the study's noise floor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import optuna

from tuner.errors import UserError
from tuner.objectives import CONTEXT_WORDS, Direction
from tuner.pareto import FrontEntry, PairedMargins, Point, front_entries
from tuner.front._confirm import optimism
from tuner.front._paired import PairedComparisons
from tuner.front._record import Confirmation, StudyRecord, TrialRecord


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


def _feasible_complete(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    """The complete feasible trials of ``study`` (not copied), in trial-number order: what fronts are drawn from."""
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    return sorted((t for t in complete if feasible(t)), key=lambda t: t.number)


def front_trials(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    """``study.best_trials`` from one read of the storage: the complete feasible trials no other complete feasible trial
    dominates (at least as good on every objective, better on one; equal values stay together), in trial-number
    order. Optuna's property reads the trials twice and deep-copies every one of them; the study loop asks for the
    front at every look of every trial and in every progress line. Not :func:`~tuner.pareto.pareto_front`: that
    refuses non-finite values, which Optuna stores and ``best_trials`` ranks."""
    trials = _feasible_complete(study)
    sign = [1.0 if d == optuna.study.StudyDirection.MINIMIZE else -1.0 for d in study.directions]
    losses = np.array([[s * v for s, v in zip(sign, t.values)] for t in trials]).reshape(len(trials), len(sign))
    # one trial at a time against all: memory linear in the trials
    return [t for t, loss in zip(trials, losses)
            if not np.any(np.all(losses <= loss, axis=1) & np.any(losses < loss, axis=1))]


def points_of(study: optuna.Study) -> list[Point]:
    """One point per complete feasible trial, in trial-number order: the trials ``study.best_trials`` draws
    its front from, so fronts, picks, reports and pruning rivals agree."""
    names = list(directions_of(study))
    return [trial_point(trial, names) for trial in _feasible_complete(study)]


def study_comparisons(study: optuna.Study) -> PairedComparisons:
    """A fresh keeper of the paired comparisons of ``study``'s trials, with its recorded run-to-run sd: pass one to the
    functions below to compute each pair once across them (what ``tuner run`` does at its end)."""
    return PairedComparisons(StudyRecord.from_study(study).run_sd)


def study_margins(study: optuna.Study, comparisons: PairedComparisons | None = None) -> PairedMargins:
    """The study's noise floor (one configuration's, what is shown as ε), with the paired margin of any two of its
    complete trials from the per-case scores they recorded and the study's run-to-run sd (``comparisons``: kept
    comparisons to reuse; a fresh :func:`study_comparisons` by default)."""
    record = StudyRecord.from_study(study)
    directions = directions_of(study)
    floor = {k: v for k, v in (record.noise_floor or {}).items() if k in directions}
    records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
    return (comparisons or study_comparisons(study)).margins(records, list(directions), floor)


def study_front(
    study: optuna.Study, comparisons: PairedComparisons | None = None
) -> tuple[dict[str, Direction], PairedMargins, list[FrontEntry]]:
    """Directions, the margins two trials are compared with (the noise floor as a mapping; paired per pair of
    trials) and the front entries with their ε-ties and ε-dominance decided paired."""
    directions = directions_of(study)
    margins = study_margins(study, comparisons)
    return directions, margins, front_entries(points_of(study), directions, margins)


def entry_json(
    entry: FrontEntry, trial: optuna.trial.FrozenTrial, directions: Mapping[str, Direction],
    confirmed: Confirmation | None = None,
) -> dict[str, Any]:
    """A front row as ``tuner pareto --json`` and ``tuner run --json`` print it; with ``confirmed`` (the trial's
    :class:`Confirmation`) its figures on the held-out cases, their intervals and the optimism beside the tuning ones
    (:func:`tuner.front.optimism`, oriented by each objective's direction: positive = the tuning figure looked
    better). Beside Δ: the conflict ``exposure`` (``{"value", "ci"}``, Wilson, and ``tied``/``range`` where the trial
    recorded which cases a tie at the cut decided), ``exposed`` (n/N), faithfulness
    ``at_risk``, ``susceptibility`` (null when no case is exposed) and ``delta`` (the v3 Δ the trial measured, also where
    the study optimizes exposure) — None each where the trial has no record of them; each of the trial tables' columns
    (:data:`tuner.front.TRIAL_COLUMNS`: ``search_latency``) as stored."""
    record = TrialRecord.from_trial(trial)
    share, parts = record.exposure(), record.delta_parts()
    confirm = {} if confirmed is None else {
        "confirm": dict(confirmed.values),
        "confirm_ci": dict(confirmed.ci),
        "confirm_n": confirmed.n,
        "optimism": {name: optimism(entry.values[name], value, directions[name])
                     for name, value in confirmed.values.items() if value is not None and name in entry.values},
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
        "exposure": record.exposure_dict(),
        "exposed": (None if record.exposure_not_measured is None else "not measured") if share is None
        else f"{share.successes}/{share.n_total}",
        "at_risk": None if parts is None else parts.at_risk,
        "susceptibility": None if parts is None else parts.susceptibility,
        "delta": None if parts is None else parts.delta,
        **record.column_values(),
        **confirm,
    }
