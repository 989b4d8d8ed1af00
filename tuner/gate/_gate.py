"""Serve (export → **gate** in CI): one gate decision from a measurement, the thresholds, an optional baseline and noise
floor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tuner.errors import UserError
from tuner.gate._baseline import Baseline
from tuner.gate._checks import Check, grade_checks, judge_check, missing_cases, retrieval_checks, trend_checks
from tuner.gate._measure import GateMeasurement
from tuner.gate._thresholds import GateThresholds


@dataclass(frozen=True)
class GateResult:
    measurement: GateMeasurement
    checks: tuple[Check, ...]
    notes: tuple[str, ...]

    @property
    def judge_unstable(self) -> bool:
        return any(c.group == "judge" and c.status == "fail" for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.checks if c.status == "warn"]

    @property
    def verdict(self) -> str:
        """``judge unstable`` (faithfulness not graded), ``regression`` or ``pass`` (warnings allowed)."""
        if self.judge_unstable:
            return "judge unstable"
        return "regression" if self.failures else "pass"

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0

    def failure_lines(self) -> list[str]:
        return [f"{c.group}.{c.name}: {c.message}" for c in self.failures]


def _setting_changes(baseline: Baseline, measurement: GateMeasurement) -> list[str]:
    now = measurement.settings.model_dump(mode="json")
    return [f"{k} {baseline.settings.get(k)!r} → {v!r}" for k, v in now.items() if baseline.settings.get(k) != v]


def evaluate_gate(
    measurement: GateMeasurement,
    thresholds: GateThresholds,
    baseline: Baseline | None = None,
    floors: Mapping[str, float] | None = None,
    history: int = 1,
    baseline_source: str = "baseline",
) -> GateResult:
    """Every check of docs/gate.md. A judge that fails its self-check leaves faithfulness ungraded
    (its checks are skipped, the verdict is "judge unstable"); retrieval is still gated.

    Raises :class:`UserError` when a measured case is missing from the baseline (``baseline_source``
    names the file): comparing means over different cases is what the gate exists to prevent.
    """
    if history < 1:
        raise ValueError(f"history must be at least 1, got {history}")
    checks: list[Check] = []
    notes: list[str] = []
    if baseline is None:
        notes.append("no baseline given: retrieval metrics and trends are not compared")
    else:
        for current, stored, what in (
            (measurement.retrieval_values(), baseline.retrieval, "retrieval"),
            (measurement.faithful_values(), baseline.faithful, "faithfulness"),
        ):
            absent = missing_cases(current, stored)
            if absent:
                shown = ", ".join(absent[:5]) + (" ..." if len(absent) > 5 else "")
                raise UserError(
                    f"{baseline_source}: no {what} values for {len(absent)} measured case(s) ({shown}); "
                    "rewrite the baseline with the same --sample/--always-include"
                )
        if baseline.dataset_hash != measurement.dataset_hash:
            notes.append("the dataset changed since the baseline was written (compared on the shared cases)")
        changes = _setting_changes(baseline, measurement)
        notes.append("settings changed since the baseline: " + "; ".join(changes) if changes else "settings unchanged")
        if baseline.noise and measurement.noise and baseline.noise != measurement.noise.model_dump(mode="json"):
            notes.append("the noise configuration differs from the baseline's: trends compare different variants")
        checks.extend(retrieval_checks(measurement.retrieval_values(), baseline, thresholds.retrieval))
    if measurement.robustness is None:
        notes.append("the dataset has no keypoints: robustness is not measured")
        return GateResult(measurement, tuple(checks), tuple(notes))
    faithfulness = grade_checks(measurement.robustness, thresholds)
    if baseline is not None:
        if floors is None:
            notes.append("no noise floor given: trends fail only when the paired bootstrap 95% CI of the worsening is above 0")
        faithfulness.extend(trend_checks(measurement, baseline, floors, history))
    if measurement.judge_agreement is None:
        notes.append("judge self-check not run")
    else:
        stability = judge_check(measurement.judge_agreement, thresholds.judge_check.min_agreement)
        checks.append(stability)
        if stability.status == "fail":
            faithfulness = [Check(c.group, c.name, "skip", f"not graded: judge unstable ({c.message})") for c in faithfulness]
    return GateResult(measurement, tuple(checks + faithfulness), tuple(notes))
