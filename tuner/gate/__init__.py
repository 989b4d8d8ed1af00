"""Serve (export → **gate** in CI): the CI regression gate (``tuner gate``): measure one configuration, compare it with
a baseline.

Retrieval metrics are deterministic and gate hard (relative drop vs the baseline on the same
cases); Δfaithful is graded on its value (pass / warn / fail); probabilistic means are compared with
the baseline only beyond the calibrated noise floor; a judge that disagrees with itself stops the
faithfulness verdict. See docs/gate.md.

>>> measurement = measure(pipeline, settings, case_ids, RobustnessSetup(generator, judge, VariantsConfig()))  # doctest: +SKIP
>>> result = evaluate_gate(measurement, GateThresholds(), load_baseline("baseline.json"))  # doctest: +SKIP
>>> result.verdict, result.failure_lines()  # doctest: +SKIP
"""

from tuner.gate._baseline import Baseline, BaselineRun, load_baseline, write_baseline
from tuner.gate._checks import Check, Status, relative_drop
from tuner.gate._gate import GateResult, evaluate_gate
from tuner.gate._measure import (
    GRADED_VARIANTS,
    GateMeasurement,
    JudgeAgreement,
    RobustnessSetup,
    measure,
    recheck_judge,
    verdict_agreement,
)
from tuner.gate._report import JUNIT_FILE, SUMMARY_FILE, junit_xml, summary_markdown, write_gate_outputs
from tuner.gate._sample import read_case_list, select_cases
from tuner.gate._thresholds import DeltaLimits, GateThresholds, JudgeCheck, RetrievalLimits, load_thresholds, thresholds_from_mapping

__all__ = [
    "GRADED_VARIANTS",
    "JUNIT_FILE",
    "SUMMARY_FILE",
    "Baseline",
    "BaselineRun",
    "Check",
    "DeltaLimits",
    "GateMeasurement",
    "GateResult",
    "GateThresholds",
    "JudgeAgreement",
    "JudgeCheck",
    "RetrievalLimits",
    "RobustnessSetup",
    "Status",
    "evaluate_gate",
    "junit_xml",
    "load_baseline",
    "load_thresholds",
    "measure",
    "read_case_list",
    "recheck_judge",
    "relative_drop",
    "select_cases",
    "summary_markdown",
    "thresholds_from_mapping",
    "verdict_agreement",
    "write_baseline",
    "write_gate_outputs",
]
