"""Serve (export → **gate** in CI): the gate's checks: each compares one measured number with a limit and gives pass,
warn, fail or skip.

Retrieval metrics are deterministic and gate hard against the baseline. Δfaithful is graded on its
own value (≤ warn passes, ≤ fail warns, above fails). Probabilistic means are compared with the
baseline as a trend, paired on the cases both runs scored (``tuner.stats.paired_comparison``): a worsening fails when
its 95% interval (case bootstrap of the per-case differences, plus both runs' run-to-run noise when a noise floor is
given) lies wholly above 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from tuner.evaluation.robustness import RobustnessReport, VariantSummary
from tuner.gate._baseline import Baseline
from tuner.gate._measure import GRADED_VARIANTS, GateMeasurement, JudgeAgreement
from tuner.gate._thresholds import DeltaLimits, GateThresholds, RetrievalLimits
from tuner.metrics import grade_delta
from tuner.stats import delta_statistic, mean_statistic, paired_comparison

Status = Literal["pass", "warn", "fail", "skip"]
_GRADE_STATUS: dict[str, Status] = {"robust": "pass", "watch": "warn", "sensitive": "fail"}


@dataclass(frozen=True)
class Check:
    """One line of the gate: ``group`` (retrieval, robustness, trend, judge), a dotted ``name``, the
    outcome and a message saying what was compared and by how much."""

    group: str
    name: str
    status: Status
    message: str
    value: float | None = None
    reference: float | None = None


def relative_drop(baseline: float, current: float) -> float:
    """relative drop = (baseline − current) / baseline; 0 when the baseline is 0 (nothing to lose).

    >>> round(relative_drop(1.0, 0.917), 3)
    0.083
    """
    if baseline == 0:
        return 0.0
    return (baseline - current) / baseline


def retrieval_checks(
    current: Mapping[str, Mapping[str, float]], baseline: Baseline, limits: RetrievalLimits
) -> list[Check]:
    """Each retrieval metric's mean vs the baseline's mean over the same cases (every current case
    must be in the baseline: see ``missing_cases``)."""
    checks = []
    for metric, values in current.items():
        ids = list(values)
        now = float(np.mean([values[i] for i in ids]))
        before = float(np.mean([baseline.retrieval[metric][i] for i in ids]))
        drop = relative_drop(before, now)
        limit = getattr(limits, metric, None)
        text = f"{before:.3f} → {now:.3f} ({0.0 - drop:+.1%} relative, n={len(ids)})"
        if limit is None:
            checks.append(Check("retrieval", metric, "skip", f"{text}; not gated (no limit set)", now, before))
        elif drop > limit:
            checks.append(Check("retrieval", metric, "fail", f"{text}: fell by more than {limit:.0%}", now, before))
        else:
            checks.append(Check("retrieval", metric, "pass", f"{text}: within {limit:.0%}", now, before))
    return checks


def missing_cases(current: Mapping[str, Mapping[str, object]], baseline: Mapping[str, Mapping[str, object]]) -> list[str]:
    """Case ids measured now that the baseline has no value for (under any metric or variant it has)."""
    missing: dict[str, None] = {}
    for key, values in current.items():
        known = baseline.get(key)
        if known is None:
            continue
        missing.update((case_id, None) for case_id in values if case_id not in known)
    return list(missing)


def paired_cases(measurement: GateMeasurement, baseline: Baseline) -> tuple[list[str], list[str]]:
    """(compared, changed): the measured case ids whose content is the one the baseline measured, and those
    whose question, relevant documents or keypoints changed under the same id. A baseline without
    fingerprints (written before they existed) pairs every case by id."""
    changed = [i for i in measurement.retrieval.case_ids if i in baseline.cases and baseline.cases[i] != measurement.fingerprints.get(i)]
    gone = set(changed)
    return [i for i in measurement.retrieval.case_ids if i not in gone], changed


def _grade(group: str, name: str, summary: VariantSummary, limits: DeltaLimits) -> Check:
    delta = summary.delta_faithful
    if delta is None or math.isnan(delta):
        return Check(group, name, "warn", f"Δfaithful undefined (no case scored at v0, n={summary.delta_n})")
    status = _GRADE_STATUS[grade_delta(delta, limits.warn, limits.fail)]
    ci = f" [{summary.delta_ci[0]:.1%}, {summary.delta_ci[1]:.1%}]" if summary.delta_ci else ""
    bound = {"pass": f"≤ {limits.warn:.0%}", "warn": f"> {limits.warn:.0%}", "fail": f"> {limits.fail:.0%}"}[status]
    return Check(group, name, status, f"Δfaithful {delta:.1%}{ci} {bound} (n={summary.delta_n})", delta, limits.fail)


def grade_checks(report: RobustnessReport, thresholds: GateThresholds) -> list[Check]:
    """Δfaithful of every graded variant, overall and per category (categories with fewer than
    ``category_min_cases`` paired cases are shown as skipped)."""
    checks = []
    for variant in (v for v in GRADED_VARIANTS if v in report.variants):
        checks.append(_grade("robustness", f"{variant}.delta_faithful", report.variants[variant], thresholds.delta_faithful))
        for category, per_variant in report.by_category.items():
            summary = per_variant[variant]
            name = f"{variant}.delta_faithful[{category}]"
            if summary.delta_n < thresholds.category_min_cases:
                checks.append(Check("robustness", name, "skip",
                                    f"{summary.delta_n} paired case(s) < category_min_cases {thresholds.category_min_cases}"))
            else:
                checks.append(_grade("robustness", name, summary, thresholds.category_limits(category)))
    return checks


def _scored_in_both(base: Mapping[str, float | None], now: Mapping[str, float | None], ids: Sequence[str]) -> list[str]:
    return [i for i in ids if base.get(i) is not None and now.get(i) is not None]


@dataclass(frozen=True)
class _Trend:
    """One probabilistic metric over the cases scored in both runs: ``statistic`` of the per-case
    arrays (one row per case), computed on the baseline's and on the current arrays."""

    key: str
    statistic: Callable[..., NDArray[np.float64]]
    base: tuple[np.ndarray, ...]
    now: tuple[np.ndarray, ...]
    higher_is_better: bool

    @property
    def n(self) -> int:
        return len(self.base[0])

    def values(self, cases: np.ndarray) -> tuple[float, float]:
        """(baseline, current) statistic over the given case indices."""
        return float(self.statistic(*(a[cases] for a in self.base))), float(self.statistic(*(a[cases] for a in self.now)))

    def worsening(self, cases: np.ndarray) -> float:
        before, now = self.values(cases)
        return before - now if self.higher_is_better else now - before

    def paired(self, run_sd: float, seed: int) -> tuple[float, float, float]:
        """The worsening and its paired 95% interval (``paired_comparison`` of now against the baseline, with
        ``run_sd`` for each of the two runs)."""
        comparison = paired_comparison(self.now, self.base, self.statistic, run_sd=(run_sd, run_sd), seed=seed)
        sign = -1.0 if self.higher_is_better else 1.0
        low, high = sorted(sign * bound for bound in comparison.ci)
        return sign * comparison.difference, low, high


def _trends(measurement: GateMeasurement, baseline: Baseline, cases: Collection[str] | None) -> tuple[list[_Trend], list[Check]]:
    """faithful(v0) and each graded variant's Δfaithful, paired by case (among ``cases``, all when None); skip
    checks for what cannot be compared."""
    if "v0" not in baseline.faithful:
        return [], [Check("trend", "faithful_v0", "skip", "the baseline has no faithfulness values")]
    before, now = baseline.faithful, measurement.faithful_values()

    def column(values: Mapping[str, float | None], ids: list[str]) -> np.ndarray:
        return np.array([values[i] for i in ids], dtype=float)

    ids = [o.case.id for o in measurement.outcomes if cases is None or o.case.id in cases]
    shared = _scored_in_both(before["v0"], now["v0"], ids)
    trends = [_Trend("faithful_v0", mean_statistic, (column(before["v0"], shared),), (column(now["v0"], shared),), True)] if shared else []
    skipped = []
    for variant in (v for v in GRADED_VARIANTS if v in measurement.variants):
        key = f"{variant}_delta_faithful"
        if variant not in before:
            skipped.append(Check("trend", key, "skip", f"the baseline has no {variant} values"))
            continue
        both = _scored_in_both(before[variant], now[variant], shared)
        trend = _Trend(key, delta_statistic, (column(before["v0"], both), column(before[variant], both)),
                       (column(now["v0"], both), column(now[variant], both)), False)
        if not both or any(math.isnan(v) for v in trend.values(np.arange(len(both)))):
            skipped.append(Check("trend", key, "skip", "Δfaithful undefined on the shared cases (no faithfulness at v0)"))
            continue
        trends.append(trend)
    return trends, skipped


def trend_checks(
    measurement: GateMeasurement,
    baseline: Baseline,
    floors: Mapping[str, float] | None,
    history: int = 1,
    seed: int = 0,
    cases: Collection[str] | None = None,
    run_sd: Mapping[str, float] | None = None,
) -> list[Check]:
    """faithful(v0) and each graded variant's Δfaithful vs the baseline, on the measured cases among ``cases``
    (all when None: see :func:`paired_cases`).

    ``history`` = 1: against the baseline's per-case values, paired (``tuner.stats.paired_comparison`` on the
    cases both scored); fails when the 95% interval of the worsening lies above 0. Its run-to-run term is each
    run's sd from ``run_sd`` (``NoiseFloor.run_sd``), 0 without. ``history`` > 1:
    against the mean of the last ``history`` accepted runs' means, which have no cases to pair, so it needs
    ``floors`` and fails when the worsening exceeds ``floors[key]``.
    """
    trends, checks = _trends(measurement, baseline, cases)
    runs = baseline.runs(history)
    for spec in trends:
        floor = None if floors is None else floors.get(spec.key)
        base_value, now_value = spec.values(np.arange(spec.n))
        if history > 1:
            past = [r.summary.get(spec.key) for r in runs]
            past_values = [v for v in past if v is not None]
            if floor is None or not past_values:
                why = "no noise floor for it" if floor is None else "no past value"
                checks.append(Check("trend", spec.key, "skip", f"history comparison skipped: {why}"))
                continue
            before = float(np.mean(past_values))
            worse = before - now_value if spec.higher_is_better else now_value - before
            text = f"mean of last {len(past_values)} runs {before:.3f} → {now_value:.3f}"
            checks.append(_floor_check(spec.key, worse, floor, text, now_value, before))
            continue
        text = f"{base_value:.3f} → {now_value:.3f} on {spec.n} paired cases"
        if spec.n < 2:
            checks.append(Check("trend", spec.key, "skip", f"{text}: too few cases for an interval"))
            continue
        sd = (run_sd or {}).get(spec.key)
        worse, low, high = spec.paired(sd or 0.0, seed)
        source = "case bootstrap only: no run-to-run noise given" if sd is None else (
            f"case bootstrap plus both runs' run-to-run sd {sd:.3f}")
        interval = f"worsening {worse:+.3f}, paired 95% interval [{low:+.3f}, {high:+.3f}] ({source})"
        status: Status = "fail" if low > 0 else "pass"
        checks.append(Check("trend", spec.key, status, f"{text}: {interval}", now_value, base_value))
    return checks


def _floor_check(key: str, worse: float, floor: float, text: str, now: float, before: float) -> Check:
    if worse > floor:
        return Check("trend", key, "fail", f"{text}: worse by {worse:.3f} > noise floor {floor:.3f}", now, before)
    return Check("trend", key, "pass", f"{text}: change {worse:+.3f} within noise floor {floor:.3f}", now, before)


def judge_check(agreement: JudgeAgreement, min_agreement: float) -> Check:
    rate = agreement.rate
    if rate is None:
        return Check("judge", "self_check", "skip", "no keypoint verdicts to compare")
    text = f"{rate:.1%} of {agreement.compared} keypoint verdicts identical when judged twice"
    if rate < min_agreement:
        return Check("judge", "self_check", "fail", f"judge unstable: {text} (< {min_agreement:.0%})", rate, min_agreement)
    return Check("judge", "self_check", "pass", f"{text} (≥ {min_agreement:.0%})", rate, min_agreement)
