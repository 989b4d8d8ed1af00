"""Front (trial record → **front** → report/export): the front's figures on the confirmation cases (``confirm:`` in a
study file), which the pick rules use, and the per-case scores they come from, which the pick notes compare paired."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import optuna

from tuner.front._record import StudyRecord, TrialRecord
from tuner.objectives import CONTEXT_WORDS
from tuner.pareto import FrontEntry


def confirmed_entries(study: optuna.Study, entries: Sequence[FrontEntry]) -> list[FrontEntry]:
    """The front with each member's values replaced by its confirmation figures (what pick rules use) when every member
    has them for every quality objective; else the front as it is (a study without ``confirm:``)."""
    results = StudyRecord.from_study(study).confirm
    figures = [results.get(str(e.number), {}).get("values", {}) for e in entries]
    if not entries or not all(
        all(f.get(name) is not None for name in e.values if name != CONTEXT_WORDS) for e, f in zip(entries, figures)
    ):
        return list(entries)
    return [replace(e, values={**e.values, **{k: float(v) for k, v in f.items() if k in e.values}})
            for e, f in zip(entries, figures)]


def held_out_record(confirmed: Mapping[str, Any]) -> TrialRecord | None:
    """A front member's per-case scores on the held-out cases (its entry in the study's ``confirm`` record) as a
    trial record that :func:`tuner.front.compare_trials` reads; None for an entry written before they were
    kept."""
    if "recall_cases" not in confirmed:
        return None
    f0, f3 = confirmed.get("f0"), confirmed.get("f3")
    return TrialRecord(
        recall_cases=tuple(confirmed["recall_cases"]), f0=None if f0 is None else tuple(f0),
        f3=None if f3 is None else tuple(f3), n_total=None if f0 is None else len(f0),
    )
