"""Serve (export → **gate** in CI): one gate decision from a measurement, the thresholds, an optional baseline and noise
floor."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tuner.errors import UserError
from tuner.gate._baseline import Baseline
from tuner.gate._checks import Check, grade_checks, judge_check, missing_cases, paired_cases, retrieval_checks, trend_checks
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


def _compare_with_baseline(
    measurement: GateMeasurement,
    thresholds: GateThresholds,
    baseline: Baseline,
    baseline_source: str,
    checks: list[Check],
    notes: list[str],
) -> list[str]:
    """The measured cases the baseline measured too (same contents), after checking there are enough of them; adds
    the retrieval checks on those cases to ``checks`` and what differs from the baseline to ``notes``."""
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
    compared, changed = paired_cases(measurement, baseline)
    measured = len(measurement.retrieval.case_ids)
    if len(compared) < thresholds.min_compared * measured:
        raise UserError(
            f"{baseline_source}: only {len(compared)} of {measured} measured cases ask what the baseline measured "
            f"({len(changed)} changed question, relevant documents or keypoints under the same id; at least "
            f"{thresholds.min_compared:.0%} must match): write a new baseline with --write-baseline"
        )
    if not baseline.cases:
        notes.append("the baseline records no case contents (written by an older tuner): cases are paired by id only")
    shown = f" ({', '.join(changed[:5])}{' ...' if len(changed) > 5 else ''})" if changed else ""
    notes.append(f"compared {len(compared)} of {measured} cases with the baseline; {len(changed)} changed since it{shown}, not compared")
    if baseline.dataset_hash != measurement.dataset_hash:
        notes.append("the dataset changed since the baseline was written (compared on the unchanged cases)")
    changes = _setting_changes(baseline, measurement)
    notes.append("settings changed since the baseline: " + "; ".join(changes) if changes else "settings unchanged")
    if baseline.variant_config and measurement.variant_config and baseline.variant_config != measurement.variant_config.model_dump(mode="json"):
        notes.append("the variant configuration differs from the baseline's: trends compare different variants")
    kept = set(compared)
    current = {metric: {i: v for i, v in values.items() if i in kept} for metric, values in measurement.retrieval_values().items()}
    checks.extend(retrieval_checks(current, baseline, thresholds.retrieval))
    return compared


def evaluate_gate(
    measurement: GateMeasurement,
    thresholds: GateThresholds,
    baseline: Baseline | None = None,
    floors: Mapping[str, float] | None = None,
    history: int = 1,
    baseline_source: str = "baseline",
    config_dataset_hash: str | None = None,
    run_sd: Mapping[str, float] | None = None,
    config_held_out: int | None = None,
) -> GateResult:
    """Every check of docs/gate.md. A judge that fails its self-check leaves faithfulness ungraded
    (its checks are skipped, the verdict is "judge unstable"); retrieval is still gated.

    Only cases whose content (question, relevant documents, keypoints) is the one the baseline measured
    are compared; the notes say how many were compared and how many changed. ``config_dataset_hash`` is
    the dataset hash the configuration's provenance names (the study that chose it), noted when it is
    not the measured dataset's; ``config_held_out`` the cases its study held out for confirmation (provenance
    ``confirm_split``; None without ``confirm:``), noted when the measured dataset is that study's. ``run_sd`` (``NoiseFloor.run_sd``: one
    configuration's run-to-run sd per objective) adds both runs' run-to-run noise to the paired trend intervals.

    Raises :class:`UserError` when a measured case is missing from the baseline, or when fewer than
    ``thresholds.min_compared`` of the measured cases still match it (``baseline_source`` names the file):
    comparing means over different cases is what the gate exists to prevent.
    """
    if history < 1:
        raise ValueError(f"history must be at least 1, got {history}")
    checks: list[Check] = []
    notes: list[str] = []
    if config_dataset_hash is not None and config_dataset_hash != measurement.dataset_hash:
        notes.append(f"the configuration was chosen on another dataset (provenance dataset_hash {config_dataset_hash[:12]}, "
                     f"measured {measurement.dataset_hash[:12]}): its study's figures do not describe this one")
    elif config_dataset_hash is not None and config_held_out is not None:
        notes.append(f"the configuration was chosen on this dataset's tuning share and confirmed on its {config_held_out} "
                     "held-out cases (its study's confirm:): the gate measures every case, the ones the search saw among "
                     "them; the figures on the held-out cases alone are in the config's provenance (confirm)")
    compared: list[str] | None = None
    if baseline is None:
        notes.append("no baseline given: retrieval metrics and trends are not compared")
    else:
        compared = _compare_with_baseline(measurement, thresholds, baseline, baseline_source, checks, notes)
    if measurement.robustness is None:
        notes.append("the dataset has no keypoints: robustness is not measured")
        return GateResult(measurement, tuple(checks), tuple(notes))
    faithfulness = grade_checks(measurement.robustness, thresholds)
    if baseline is not None:
        if run_sd is None:
            notes.append("no noise floor given: trends fail when the paired case bootstrap 95% interval of the worsening "
                         "is above 0, with no run-to-run noise added")
        faithfulness.extend(trend_checks(measurement, baseline, floors, history, cases=compared, run_sd=run_sd))
    if measurement.judge_agreement is None:
        notes.append("judge self-check not run")
    else:
        stability = judge_check(measurement.judge_agreement, thresholds.judge_check.min_agreement)
        checks.append(stability)
        if stability.status == "fail":
            faithfulness = [Check(c.group, c.name, "skip", f"not graded: judge unstable ({c.message})") for c in faithfulness]
    return GateResult(measurement, tuple(checks + faithfulness), tuple(notes))
