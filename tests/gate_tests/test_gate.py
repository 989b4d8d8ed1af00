"""The gate's decisions on the tiny dataset: retrieval drops, Δfaithful grades, trends, judge stability."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.gate_tests.conftest import FlakyJudge
from tuner.errors import UserError
from tuner.gate import (
    BaselineRun,
    GateThresholds,
    JudgeAgreement,
    RobustnessSetup,
    evaluate_gate,
    junit_xml,
    measure,
    relative_drop,
    summary_markdown,
    thresholds_from_mapping,
    verdict_agreement,
    write_gate_outputs,
)
from tuner.judging import KeypointVerdict
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

LENIENT = thresholds_from_mapping({"delta_faithful": {"fail": 0.30}}, "test")
ALL = ["q1", "q2", "q3", "q4", "q5", "q6"]


def _checks(result, status: str) -> dict[str, str]:
    return {f"{c.group}.{c.name}": c.message for c in result.checks if c.status == status}


def test_relative_drop_and_verdict_agreement_by_hand() -> None:
    assert relative_drop(0.8, 0.776) == pytest.approx(0.03)
    assert relative_drop(0.5, 0.6) == pytest.approx(-0.2)
    assert relative_drop(0.0, 0.0) == 0.0
    s, a, c = "supported", "absent", "contradicted"
    first = [[KeypointVerdict(s, s), KeypointVerdict(a, s)], [KeypointVerdict(c, s)]]
    second = [[KeypointVerdict(s, s), KeypointVerdict(a, a)], [KeypointVerdict(s, s)]]
    agreement = verdict_agreement(first, second)
    assert (agreement.identical, agreement.compared) == (1, 3)
    assert agreement.rate == pytest.approx(1 / 3)
    assert JudgeAgreement(0, 0).rate is None


def test_unchanged_config_passes_against_its_own_baseline(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    measurement = measure(pipeline, RetrievalSettings(), ALL, setup)
    result = evaluate_gate(measurement, LENIENT, measurement.to_baseline())
    assert result.verdict == "pass" and result.exit_code == 0
    assert _checks(result, "fail") == {}
    passed = _checks(result, "pass")
    assert "retrieval.recall_at_k" in passed and "judge.self_check" in passed
    assert "trend.faithful_v0" in passed and "trend.v3_delta_faithful" in passed
    assert "settings unchanged" in result.notes
    # Δfaithful(v3) on the tiny set is 2/11 = 18.2%: a warning under the lenient limits.
    assert _checks(result, "warn")["robustness.v3.delta_faithful"].startswith("Δfaithful 18.2%")


def test_default_limits_fail_a_delta_above_15_percent(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    measurement = measure(pipeline, RetrievalSettings(), ALL, setup)
    result = evaluate_gate(measurement, GateThresholds(), measurement.to_baseline())
    assert result.verdict == "regression" and result.exit_code == 1
    assert list(_checks(result, "fail")) == ["robustness.v3.delta_faithful"]
    assert "> 15%" in _checks(result, "fail")["robustness.v3.delta_faithful"]
    # categories are smaller than category_min_cases (5): shown, not gated
    assert "robustness.v3.delta_faithful[single_hop]" in _checks(result, "skip")


def test_critical_category_gets_its_own_tighter_limit(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    measurement = measure(pipeline, RetrievalSettings(), ALL, setup)
    limits = {"delta_faithful": {"fail": 0.5}, "category_min_cases": 1,
              "category_default": {"fail": 0.9}, "categories": {"single_hop": {"fail": 0.10}}}
    result = evaluate_gate(measurement, thresholds_from_mapping(limits, "test"))
    # single_hop: q1 goes from right to wrong under the stale price, 1 of 4 keypoints = 25% > 10%
    assert list(_checks(result, "fail")) == ["robustness.v3.delta_faithful[single_hop]"]
    assert "no baseline given: retrieval metrics and trends are not compared" in result.notes


def test_dropping_top_k_fails_recall(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    baseline = measure(pipeline, RetrievalSettings(top_k=5), ALL, None).to_baseline()
    result = evaluate_gate(measure(pipeline, RetrievalSettings(top_k=1), ALL, None), LENIENT, baseline)
    failed = _checks(result, "fail")
    assert list(failed) == ["retrieval.recall_at_k"]
    assert failed["retrieval.recall_at_k"] == "1.000 → 0.917 (-8.3% relative, n=6): fell by more than 3%"
    assert "top_k 5 → 1" in next(n for n in result.notes if n.startswith("settings changed"))
    assert result.exit_code == 1


def test_trend_is_compared_paired_with_both_runs_noise(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    measurement = measure(pipeline, RetrievalSettings(), ALL, setup)
    stored = measurement.to_baseline()
    # a past run in which the conflicts misled nobody: Δ was 0, now it is 18.2%, all of it from one case of six
    better = stored.model_copy(update={"faithful": {**stored.faithful, "v3": dict(stored.faithful["v0"])}})
    # the single-configuration floor 0.10 would have failed it (0.182 > 0.10); paired, one case of six is no evidence
    paired = evaluate_gate(measurement, LENIENT, better, floors={"v3_delta_faithful": 0.10})
    message = _checks(paired, "pass")["trend.v3_delta_faithful"]
    assert message.startswith("0.000 → 0.182 on 6 paired cases: worsening +0.182, paired 95% interval [")
    assert message.endswith("(case bootstrap only: no run-to-run noise given)")
    assert any(n.startswith("no noise floor given") for n in paired.notes)
    # both runs' run-to-run noise widens it: run_sd 0.108 per run
    noisy = evaluate_gate(measurement, LENIENT, better, run_sd={"v3_delta_faithful": 0.108})
    widened = _checks(noisy, "pass")["trend.v3_delta_faithful"]
    assert widened.endswith("(case bootstrap plus both runs' run-to-run sd 0.108)")
    low = float(widened.split("interval [")[1].split(",")[0])
    low_paired = float(message.split("interval [")[1].split(",")[0])
    assert low < low_paired < 0


def test_history_compares_with_the_mean_of_the_last_runs(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    measurement = measure(pipeline, RetrievalSettings(), ALL, setup)
    stored = measurement.to_baseline()
    past = [BaselineRun(written_at="t", tool_version="0", dataset_hash="h", n_cases=6,
                        summary={"v3_delta_faithful": value, "faithful_v0": 0.95}) for value in (0.0, 0.0)]
    with_history = stored.model_copy(update={"history": past})
    result = evaluate_gate(measurement, LENIENT, with_history, floors={"v3_delta_faithful": 0.1}, history=3)
    # mean of (0, 0, 0.182) = 0.061; 0.182 − 0.061 = 0.121 > 0.1
    assert _checks(result, "fail")["trend.v3_delta_faithful"].startswith("mean of last 3 runs 0.061 → 0.182")
    assert _checks(result, "skip")["trend.faithful_v0"] == "history comparison skipped: no noise floor for it"


def test_unstable_judge_stops_the_faithfulness_verdict(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    flaky = RobustnessSetup(setup.generator, FlakyJudge(seed=1), setup.variant_config, recheck=FlakyJudge(seed=2))
    measurement = measure(pipeline, RetrievalSettings(), ALL, flaky)
    assert measurement.judge_agreement is not None and measurement.judge_agreement.compared == 14
    result = evaluate_gate(measurement, LENIENT, measurement.to_baseline())
    assert result.verdict == "judge unstable" and result.exit_code == 1
    assert list(_checks(result, "fail")) == ["judge.self_check"]
    assert _checks(result, "fail")["judge.self_check"].startswith("judge unstable: ")
    skipped = _checks(result, "skip")
    assert skipped["robustness.v3.delta_faithful"].startswith("not graded: judge unstable")
    assert "trend.faithful_v0" in skipped
    assert "retrieval.recall_at_k" in _checks(result, "pass")


def test_a_stable_judge_rerun_agrees(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    measurement = measure(pipeline, RetrievalSettings(), ALL, setup)
    assert measurement.judge_agreement == JudgeAgreement(14, 14)


def test_cases_missing_from_the_baseline_are_bad_input(pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    baseline = measure(pipeline, RetrievalSettings(), ["q1", "q2"], setup).to_baseline()
    measurement = measure(pipeline, RetrievalSettings(), ["q1", "q2", "q3"], setup)
    with pytest.raises(UserError, match=r"^b.json: no faithfulness values for 1 measured case\(s\) \(q3\)"):
        evaluate_gate(measurement, LENIENT, baseline, baseline_source="b.json")


def test_outputs_summary_and_junit(tmp_path: Path, pipeline: RetrievalPipeline, setup: RobustnessSetup) -> None:
    baseline = measure(pipeline, RetrievalSettings(top_k=5), ALL, setup).to_baseline()
    result = evaluate_gate(measure(pipeline, RetrievalSettings(top_k=1), ALL, setup), GateThresholds(), baseline)
    paths = write_gate_outputs(result, baseline, tmp_path / "out", header=["config: `deploy.yaml`"])
    assert [p.name for p in paths] == ["gate-summary.md", "gate-junit.xml"]
    summary = paths[0].read_text("utf-8")
    assert summary == summary_markdown(result, baseline, ["config: `deploy.yaml`"])
    assert summary.startswith("# tuner gate: REGRESSION\n")
    assert "- `retrieval.recall_at_k`: 1.000 → 0.917 (-8.3% relative, n=6): fell by more than 3%" in summary
    assert "| category: multi_hop | 1.000 (was 1.000) | 1.000 (was 1.000) | 0.500 (was 1.000) |" in summary
    assert "## Robustness per bucket (sampled cases)" in summary
    exposure = result.measurement.retrieval.exposure
    assert exposure is not None and f"- conflict exposure (cases shown a conflicting chunk, all cases): {exposure.describe()}" in summary
    assert "| misled v3 | exposure v3 | susceptibility v3 | n |" in summary
    root = ET.fromstring(paths[1].read_text("utf-8").split("\n", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None and int(suite.get("tests", "0")) == len(result.checks)
    failures = {c.get("name"): c.find("failure").get("message") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert set(failures) == {"recall_at_k", "v3.delta_faithful"}
    assert failures["recall_at_k"].endswith("fell by more than 3%")
    assert paths[1].read_text("utf-8") == junit_xml(result)
