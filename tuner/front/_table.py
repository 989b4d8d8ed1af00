"""Trial tables (trial record → **tables**): one flat row per trial, for pandas, CSV, Parquet or JSON."""

from __future__ import annotations

from typing import Any

import optuna

from tuner.objectives import CONTEXT_WORDS
from tuner.front._confirm import optimism
from tuner.front._front import directions_of, feasible
from tuner.front._record import StudyRecord, TrialRecord


def trial_rows(study: optuna.Study) -> list[dict[str, Any]]:
    """Every trial of ``study`` as one flat row: number, state, feasibility, each parameter (``param.NAME``),
    each objective value with its 95% interval (``NAME``, ``NAME.low``, ``NAME.high``), ``n``/``n_total``,
    context words, the first stage's search time per question (``latency.p50_ms``, ``latency.p95_ms``), calls, and why a trial was pruned (rival, cases used, p-value), repeated, unscorable,
    left unanswered (``skipped``) or failed. With ``confirm:``, each objective's figure on the held-out cases and the
    optimism beside it (``NAME.confirm``; ``NAME.optimism``: how much better the tuning figure looked, oriented by the
    objective's direction, :func:`tuner.front.optimism`; None off the front). Beside Δ the conflict exposure
    (``exposure`` with ``exposure.low``/``exposure.high``, Wilson, and ``exposed``/``n_total``), the faithfulness
    ``at_risk``, ``susceptibility`` and the measured v3 ``delta`` they split. Missing values are None, so every row has
    the same columns."""
    directions = directions_of(study)
    names = list(directions)
    study_record = StudyRecord.from_study(study)
    confirmed = study_record.confirm if study_record.confirm_cases else None
    trials = sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)
    params = sorted({name for trial in trials for name in trial.params})
    rows = []
    for trial in trials:
        record = TrialRecord.from_trial(trial)
        values = dict(zip(names, trial.values)) if trial.values is not None else {}
        ci = record.ci or {}
        calls = record.calls
        pruning = record.pruning
        row: dict[str, Any] = {
            "trial": trial.number,
            "state": trial.state.name.lower(),
            "feasible": feasible(trial),
            **{f"param.{name}": trial.params.get(name) for name in params},
        }
        for name in names:
            bounds = ci.get(name) or [None, None]
            row.update({name: values.get(name), f"{name}.low": bounds[0], f"{name}.high": bounds[1]})
            if confirmed is not None:
                confirmation = confirmed.get(trial.number)
                held = None if confirmation is None else confirmation.values.get(name)
                better = None if held is None or name not in values else optimism(values[name], held, directions[name])
                row.update({f"{name}.confirm": held, f"{name}.optimism": better})
        share, parts = record.exposure(), record.delta_parts()
        low, high = (None, None) if share is None or share.ci is None else share.ci
        row.update({
            "exposure": (None if record.exposure_not_measured is None else "not measured") if share is None else share.value,
            "exposure.low": low,
            "exposure.high": high,
            "exposed": None if share is None else share.successes,
            "at_risk": None if parts is None else parts.at_risk,
            "susceptibility": None if parts is None else parts.susceptibility,
            "delta": None if parts is None else parts.delta,
        })
        row.update({
            "n": record.n,
            "n_total": record.n_total,
            CONTEXT_WORDS: record.context_words,
            "latency.p50_ms": None if record.search_latency is None else record.search_latency.p50_ms,
            "latency.p95_ms": None if record.search_latency is None else record.search_latency.p95_ms,
            "calls.generator": None if calls is None else calls.generator,
            "calls.judge": None if calls is None else calls.judge,
            "calls.tokens": None if calls is None else calls.tokens,
            "calls.cached_tokens": None if calls is None else calls.cached_tokens,
            "calls.cost": None if calls is None else calls.cost,
            "pruned_by": None if pruning is None else pruning.dominated_by,
            "pruned_after_cases": None if pruning is None else pruning.cases_used,
            "pruned_p_value": None if pruning is None else pruning.p_value,
            "duplicate_of": record.duplicate_of,
            "unscorable": record.unscorable,
            "skipped": record.skipped,
            "failure": record.failure,
        })
        rows.append(row)
    return rows
