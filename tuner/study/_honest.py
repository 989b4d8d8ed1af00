"""Front (trial record → front → **report/export**): what a picked trial must say about itself: whether its robustness
Δ can be told from zero and from its front neighbours' Δ, compared on the cases both trials scored."""

from __future__ import annotations

import math
from dataclasses import dataclass

import optuna

from tuner.metrics import delta_faithful
from tuner.study._front import study_front
from tuner.study._record import TrialRecord


@dataclass(frozen=True)
class Comparison:
    """Two trials' Δ recomputed on the cases both scored at v0 and v3 (``n`` of the study's ``n_total``)."""

    other: int
    delta: float
    other_delta: float
    n: int
    n_total: int

    @property
    def subset(self) -> str:
        """`` on the n/N cases scored in both`` when some case is missing from either trial, else empty."""
        return f" on the {self.n}/{self.n_total} cases scored in both" if self.n < self.n_total else ""


def compare(record: TrialRecord, other: TrialRecord, other_number: int) -> Comparison | None:
    """Both trials' Δ = (mean S(v0) − mean S(v3)) / mean S(v0) over the cases each scored at both variants (the per-case
    scores ``f0``/``f3`` of their records, in the study's one case order); None without such cases or when a
    mean S(v0) is 0 there."""
    if record.f0 is None or record.f3 is None or other.f0 is None or other.f3 is None:
        return None
    both = [i for i, scores in enumerate(zip(record.f0, record.f3, other.f0, other.f3)) if None not in scores]
    if not both:
        return None
    mine = delta_faithful([record.f0[i] or 0.0 for i in both], [record.f3[i] or 0.0 for i in both])
    theirs = delta_faithful([other.f0[i] or 0.0 for i in both], [other.f3[i] or 0.0 for i in both])
    if not (math.isfinite(mine) and math.isfinite(theirs)):
        return None
    return Comparison(other_number, mine, theirs, len(both), record.n_total or len(record.f0))


def pick_notes(study: optuna.Study, number: int) -> list[str]:
    """What the reader of picked trial ``number`` must know: its robustness Δ lies within the noise floor ε of zero
    (it cannot be told from no effect), or within ε of a front neighbour's Δ (the trials next to it by recall@k),
    compared on the cases both scored and saying n/N when that is not every case (said even without a noise floor).
    Empty when none applies."""
    directions, floor, entries = study_front(study)
    names = list(directions)
    robustness = names[1]
    eps = floor.get(robustness, 0.0)
    ordered = sorted(entries, key=lambda e: (e.values[names[0]], e.number))
    position = next((i for i, e in enumerate(ordered) if e.number == number), None)
    if position is None:
        return []
    value = ordered[position].values[robustness]
    notes = []
    # without a noise floor (0: deterministic backends) only equal values would tie, and those show as such
    if eps > 0 and abs(value) <= eps:
        notes.append(f"trial #{number}: {robustness} {value:.3f} is within the noise floor ({eps:.3f}) of zero: "
                     "it cannot be told from no effect")
    record = TrialRecord.from_trial(study.trials[number])
    for neighbour in (ordered[i] for i in (position - 1, position + 1) if 0 <= i < len(ordered)):
        comparison = compare(record, TrialRecord.from_trial(study.trials[neighbour.number]), neighbour.number)
        if comparison is None:
            continue
        if eps > 0 and abs(comparison.delta - comparison.other_delta) <= eps:
            notes.append(
                f"trial #{number}: {robustness} {comparison.delta:.3f} is within the noise floor ({eps:.3f}) of front "
                f"neighbour #{neighbour.number}'s {comparison.other_delta:.3f}{comparison.subset}: the two cannot be "
                "told apart on it"
            )
        elif comparison.subset:
            notes.append(f"trial #{number} vs front neighbour #{neighbour.number}: {robustness} {comparison.delta:.3f} "
                         f"vs {comparison.other_delta:.3f}{comparison.subset}")
    return notes
