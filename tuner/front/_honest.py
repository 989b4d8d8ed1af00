"""Front (trial record → front → **report/export**): what a picked trial must say about itself: whether its robustness
Δ can be told from zero and from its front neighbours' Δ, compared paired on the cases both trials scored (the held-out
cases in a study with ``confirm:``)."""

from __future__ import annotations

from collections.abc import Sequence

import optuna

from tuner.pareto import FrontEntry
from tuner.stats import PairedComparison
from tuner.front._confirm import confirmed_entries, held_out_record
from tuner.front._front import study_front
from tuner.front._paired import compare_trials
from tuner.front._record import StudyRecord, TrialRecord


def _interval(comparison: PairedComparison) -> str:
    low, high = comparison.ci
    return f"[{low:.3f}, {high:.3f}]"


def _compared(
    study: optuna.Study, entries: Sequence[FrontEntry]
) -> tuple[list[FrontEntry], dict[int, TrialRecord], str]:
    """The front with the figures the notes are about, the per-case scores they compare, and the words that say which:
    the held-out figures when every front member was confirmed with its per-case scores (``confirm:``), else the
    tuning figures (said as such in a study with ``confirm:``, unsaid in one without, where they are the only ones)."""
    record = StudyRecord.from_study(study)
    held_out = {e.number: held_out_record(record.confirm.get(str(e.number), {})) for e in entries}
    if record.confirm and all(r is not None for r in held_out.values()):
        records = {number: r for number, r in held_out.items() if r is not None}
        return confirmed_entries(study, entries), records, " on the held-out cases"
    records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
    return list(entries), records, " on the tuning cases" if record.confirm_cases else ""


def pick_notes(study: optuna.Study, number: int) -> list[str]:
    """What the reader of picked trial ``number`` must know, from paired comparisons (``tuner.stats.paired_comparison``
    with the study's run-to-run margins): its robustness Δ cannot be told from zero (its 95% interval, case bootstrap
    plus run-to-run noise, holds 0), or from a front neighbour's Δ (the trials next to it by recall@k; the paired
    interval of the two trials' difference on the cases both scored holds 0), saying n/N when that is not every case
    (said even when the two can be told apart). In a study with ``confirm:`` the notes are about the figures the pick
    rules use, those on the held-out cases, and say so. Empty when none applies."""
    directions, _, front = study_front(study)
    entries, records, where = _compared(study, front)
    names = list(directions)
    robustness = names[1]
    ordered = sorted(entries, key=lambda e: (e.values[names[0]], e.number))
    position = next((i for i, e in enumerate(ordered) if e.number == number), None)
    if position is None:
        return []
    run_margins = StudyRecord.from_study(study).pruning_margin
    record = records[number]
    measured = f"{robustness}{where}"
    notes = []
    alone = compare_trials(record, None, robustness, run_margins)
    if alone is not None and alone.n and alone.tied:
        notes.append(f"trial #{number}: {measured} {alone.difference:.3f} {_interval(alone)} holds zero: "
                     "it cannot be told from no effect")
    for neighbour in (ordered[i] for i in (position - 1, position + 1) if 0 <= i < len(ordered)):
        comparison = compare_trials(record, records[neighbour.number], robustness, run_margins)
        if comparison is None or comparison.n == 0:
            continue
        total = record.n_total or len(record.f0 or ())
        subset = f" on the {comparison.n}/{total} cases scored in both" if comparison.n < total else ""
        difference = f"paired difference {comparison.difference:+.3f} {_interval(comparison)}{subset}"
        if comparison.tied:
            notes.append(f"trial #{number}: {measured} cannot be told from front neighbour #{neighbour.number}'s: "
                         f"{difference}")
        elif subset:
            notes.append(f"trial #{number} vs front neighbour #{neighbour.number}: {measured} {difference}")
    return notes
