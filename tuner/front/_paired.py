"""Front (trial record → **front** → report/export): two trials of a study compared paired, on the cases both scored,
from the per-case scores their records keep (nothing is evaluated again)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tuner.objectives import RECALL, ROBUSTNESS_OBJECTIVES
from tuner.pareto import FrontEntry, PairedMargins
from tuner.stats import CaseScores, PairedComparison, delta_statistic, mean_statistic, paired_comparison
from tuner.front._record import TrialRecord

Z = 1.96
"""The z of the study's noise floor (``NoiseFloor.z``) and of every paired margin."""


def case_scores(record: TrialRecord, objective: str) -> CaseScores | None:
    """The per-case lists ``objective`` is computed from, in the study's case order: recall@k per case, or the
    scores at v0 and v3 the robustness Δ is the relative drop of; None when the record has none (a trial written
    before they were kept, or context words, which is exact)."""
    if objective == RECALL:
        return None if record.recall_cases is None else (record.recall_cases,)
    if objective in ROBUSTNESS_OBJECTIVES and record.f0 is not None and record.f3 is not None:
        return (record.f0, record.f3)
    return None


def run_sd(run_margin: float) -> float:
    """One configuration's run-to-run sd from the study's pruning margin z · √2 · run_sd (``NoiseFloor.run_margins``)."""
    return run_margin / (Z * math.sqrt(2))


MEMO_SIZE = 100_000
"""Paired comparisons a process keeps (a few hundred bytes each): both objectives of every pair of a 300-trial study.
When full it starts again empty."""

_MEMO: dict[tuple[bytes, bytes | None, str, float], PairedComparison] = {}


def _digest(scores: CaseScores) -> bytes:
    """A digest of per-case lists (None read as NaN, as ``paired_comparison`` reads it), length and values: two
    records hold the same scores exactly when their digests are equal."""
    array = np.array(scores, dtype=np.float64)
    return hashlib.blake2b(repr(array.shape).encode() + array.tobytes(), digest_size=16).digest()


def compare_trials(
    a: TrialRecord, b: TrialRecord | None, objective: str, run_margins: Mapping[str, float]
) -> PairedComparison | None:
    """``objective`` of trial a minus that of trial b (of 0 when b is None), paired on the cases both scored, with
    both trials' run-to-run sd (the study's calibrated one; 0 with deterministic backends); None without per-case
    scores.

    The paired bootstrap is seeded, so its result depends only on the two trials' per-case scores, the objective and
    the run-to-run sd: it is kept under exactly those (the scores by their digest), and the front, the pick notes,
    the report and the export of one run compute each pair once. A trial whose scores differ is another key: nothing
    computed from other scores is returned."""
    first = case_scores(a, objective)
    second = None if b is None else case_scores(b, objective)
    if first is None or (b is not None and second is None):
        return None
    sd = run_sd(run_margins.get(objective, 0.0))
    key = (_digest(first), None if second is None else _digest(second), objective, sd)
    if key not in _MEMO:
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.clear()
        statistic = mean_statistic if objective == RECALL else delta_statistic
        _MEMO[key] = paired_comparison(first, second, statistic, run_sd=(sd, sd), z=Z)
    return _MEMO[key]


def paired_margins(
    records: Mapping[int, TrialRecord], objectives: Sequence[str], floor: Mapping[str, float],
    run_margins: Mapping[str, float],
) -> PairedMargins:
    """The study's noise floor with, for two trials, the margin z · se of their paired comparison per objective."""

    def pair(a: int, b: int) -> dict[str, float]:
        margins = {}
        for name in objectives:
            comparison = compare_trials(records[a], records[b], name, run_margins)
            if comparison is not None and math.isfinite(comparison.margin):
                margins[name] = comparison.margin
        return margins

    return PairedMargins(floor, pair)


@dataclass(frozen=True)
class NeighbourComparison:
    """Front member ``trial`` against the next one by recall@k, ``other``: per objective the paired comparison."""

    trial: int
    other: int
    objectives: dict[str, PairedComparison]

    def to_json(self) -> dict[str, object]:
        return {
            "trial": self.trial,
            "other": self.other,
            **{
                name: {"difference": c.difference, "ci": list(c.ci), "n": c.n, "tied": c.tied}
                for name, c in self.objectives.items()
            },
        }


def neighbour_comparisons(
    entries: Sequence[FrontEntry], records: Mapping[int, TrialRecord], objectives: Sequence[str],
    run_margins: Mapping[str, float],
) -> list[NeighbourComparison]:
    """Each front member (best recall@k first) against its next neighbour: the paired interval of their difference."""
    ordered = sorted(entries, key=lambda e: (-e.values[RECALL], e.number))
    rows = []
    for first, second in zip(ordered, ordered[1:]):
        compared = {
            name: c for name in objectives
            if (c := compare_trials(records[first.number], records[second.number], name, run_margins)) is not None
        }
        rows.append(NeighbourComparison(first.number, second.number, compared))
    return rows
