"""Front (trial record → front → **report/export**): what a picked trial must say about itself: whether its robustness
Δ can be told from zero and from its front neighbours' Δ, compared paired on the cases both trials scored (the held-out
cases in a study with ``confirm:``), and how many cases would separate it from the runner-up."""

from __future__ import annotations

from collections.abc import Sequence

import optuna

from tuner.front._confirm import confirmed_entries
from tuner.front._front import study_comparisons, study_front
from tuner.front._paired import NeighbourComparison, PairedComparisons
from tuner.front._record import StudyRecord, TrialRecord
from tuner.front._texts import report_texts
from tuner.objectives import CONTEXT_WORDS, RECALL, robustness_objective
from tuner.pareto import FrontEntry
from tuner.stats import PairedComparison


def _interval(comparison: PairedComparison) -> str:
    low, high = comparison.ci
    return f"[{low:+.3f}, {high:+.3f}]"


def compared_figures(
    study: optuna.Study, entries: Sequence[FrontEntry], language: str | None = None
) -> tuple[list[FrontEntry], dict[int, TrialRecord], str]:
    """The front with the figures the pick rules and notes are about, the per-case scores they compare, and the words
    (in ``language``, English by default) that say which cases they come from: the held-out figures when every front
    member was confirmed with its per-case scores (``confirm:``), else the tuning figures."""
    texts = report_texts(language)
    record = StudyRecord.from_study(study)
    held_out = {e.number: None if (c := record.confirm.get(e.number)) is None else c.held_out_record() for e in entries}
    if record.confirm and all(r is not None for r in held_out.values()):
        records = {number: r for number, r in held_out.items() if r is not None}
        return confirmed_entries(study, entries), records, texts["where_held_out"].format(n=len(record.confirm_cases))
    records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
    return list(entries), records, texts["where_tuning"]


def pick_notes(study: optuna.Study, number: int, comparisons: PairedComparisons | None = None,
               language: str | None = None) -> list[str]:
    """What the reader of picked trial ``number`` must know, from paired comparisons (``tuner.stats.paired_comparison``
    with the study's run-to-run sd): its robustness Δ cannot be told from zero (its paired 95% interval, case
    bootstrap plus run-to-run noise, holds 0), or from a front neighbour's Δ (the trials next to it by recall@k; the
    paired interval of the two trials' difference on the cases both scored holds 0), saying n/N when that is not every
    case (said even when the two can be told apart). Each note says which cases its figures come from (the held-out
    ones in a study with ``confirm:``, which the pick rules use). A figure is printed with no second interval: the
    notes print intervals of differences only. Empty when none applies. In ``language``'s words (:func:`report_texts`;
    English by default)."""
    texts = report_texts(language)
    comparisons = comparisons or study_comparisons(study)
    directions, _, front = study_front(study, comparisons)
    entries, records, where = compared_figures(study, front, language)
    robustness = robustness_objective(directions)
    ordered = sorted(entries, key=lambda e: (e.values[RECALL], e.number))
    position = next((i for i, e in enumerate(ordered) if e.number == number), None)
    if position is None:
        return []
    record = records[number]
    measured = f"{robustness} {where}"
    notes = []
    alone = comparisons.compare(record, None, robustness)
    if alone is not None and alone.n and alone.tied:
        notes.append(texts["pick_from_zero"].format(number=number, measured=measured, value=f"{alone.difference:.3f}"))
    for neighbour in (ordered[i] for i in (position - 1, position + 1) if 0 <= i < len(ordered)):
        comparison = comparisons.compare(record, records[neighbour.number], robustness)
        if comparison is None or comparison.n == 0:
            continue
        total = record.n_total or len(record.f0 or ())
        subset = texts["pick_subset"].format(n=comparison.n, total=total) if comparison.n < total else ""
        difference = texts["pick_difference"].format(difference=f"{comparison.difference:+.3f}",
                                                     interval=_interval(comparison), subset=subset)
        if comparison.tied:
            notes.append(texts["pick_from_neighbour"].format(number=number, measured=measured, neighbour=neighbour.number,
                                                             difference=difference))
        elif subset:
            notes.append(texts["pick_vs_neighbour"].format(number=number, measured=measured, neighbour=neighbour.number,
                                                           difference=difference))
    return notes


def runner_up_comparison(
    study: optuna.Study, number: int, runner_up: int, comparisons: PairedComparisons | None = None
) -> NeighbourComparison:
    """Picked trial ``number`` against ``runner_up`` (what the pick rule would choose without it), per quality
    objective, paired on the figures the pick rules use (held-out ones with ``confirm:``)."""
    comparisons = comparisons or study_comparisons(study)
    directions, _, front = study_front(study, comparisons)
    _, records, _ = compared_figures(study, front)
    names = [name for name in directions if name != CONTEXT_WORDS]
    return NeighbourComparison(number, runner_up, comparisons.between(records[number], records[runner_up], names))
