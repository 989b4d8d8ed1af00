"""Serve (export → **gate** in CI): gate outputs a person and a CI system can read: ``gate-summary.md`` and
``gate-junit.xml``."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tuner.gate._baseline import Baseline
from tuner.gate._gate import GateResult
from tuner.io import atomic_write_text

SUMMARY_FILE = "gate-summary.md"
JUNIT_FILE = "gate-junit.xml"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fmt(value: float | None, pct: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:.1%}" if pct else f"{value:.3f}"


def _buckets(ids: Sequence[str], categories: dict[str, str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {"all": list(ids)}
    for case_id in ids:
        groups.setdefault(f"category: {categories[case_id]}", []).append(case_id)
    return groups


def _retrieval_table(result: GateResult, baseline: Baseline | None) -> list[str]:
    measurement = result.measurement
    values = measurement.retrieval_values()
    metrics = list(values)
    rows = ["| bucket | " + " | ".join(metrics) + " | n |", "|---" * (len(metrics) + 2) + "|"]
    for bucket, ids in _buckets(measurement.retrieval.case_ids, measurement.categories).items():
        cells = []
        for metric in metrics:
            cell = _fmt(float(np.mean([values[metric][i] for i in ids])))
            if baseline is not None:
                cell += f" (was {_fmt(float(np.mean([baseline.retrieval[metric][i] for i in ids])))})"
            cells.append(cell)
        rows.append(f"| {_cell(bucket)} | " + " | ".join(cells) + f" | {len(ids)} |")
    return rows


def _robustness_table(result: GateResult) -> list[str]:
    report = result.measurement.robustness
    if report is None:
        return []
    variants = [v for v in report.variants if v != "v0"]
    head = ["faithful v0"] + [f"Δfaithful {v}" if v != "v4" else "rejection v4" for v in variants]
    if "v3" in variants:
        head += ["misled v3", "exposure v3", "susceptibility v3"]
    rows = ["| bucket | " + " | ".join(head) + " | n |", "|---" * (len(head) + 2) + "|"]
    buckets = {"all": report.variants, **{f"category: {k}": v for k, v in report.by_category.items()}}
    for bucket, per_variant in buckets.items():
        v0 = per_variant["v0"].faithful
        cells = [_fmt(v0.value)]
        for variant in variants:
            summary = per_variant[variant]
            if variant == "v4":
                cells.append(_fmt(None if summary.rejection_rate is None else summary.rejection_rate.value, pct=True))
            else:
                cells.append(_fmt(summary.delta_faithful, pct=True) + (f" ({summary.grade})" if summary.grade else ""))
        if "v3" in variants:
            v3 = per_variant["v3"]
            misled, exposure = v3.misled_rate, v3.exposure
            cells += [
                _fmt(None if misled is None else misled.value, pct=True),
                "n/a" if exposure is None else f"{_fmt(exposure.value, pct=True)} ({exposure.successes}/{exposure.n_total})",
                _fmt(v3.susceptibility, pct=True),
            ]
        rows.append(f"| {_cell(bucket)} | " + " | ".join(cells) + f" | {v0.n}/{v0.n_total} |")
    return rows


def summary_markdown(result: GateResult, baseline: Baseline | None, header: Sequence[str] = ()) -> str:
    """The gate's verdict, what failed and by how much, warnings, notes, every check and per-bucket tables."""
    lines = [f"# tuner gate: {result.verdict.upper()}", ""]
    lines += [f"- {item}" for item in header]
    measurement = result.measurement
    sample = len(measurement.outcomes)
    lines += [f"- retrieval: {len(measurement.retrieval.case_ids)} cases; variants {', '.join(measurement.variants)}: "
              f"{sample} sampled case(s)" if measurement.robustness else
              f"- retrieval: {len(measurement.retrieval.case_ids)} cases; robustness not measured"]
    exposure = measurement.retrieval.exposure
    if exposure is not None:
        lines.append(f"- conflict exposure (cases shown a conflicting chunk, all cases): {exposure.describe()}")
    lines.append("")
    for title, checks in (("Failed", result.failures), ("Warnings", result.warnings)):
        if checks:
            lines += [f"## {title}", ""] + [f"- `{c.group}.{c.name}`: {c.message}" for c in checks] + [""]
    if result.notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in result.notes] + [""]
    lines += ["## Checks", "", "| check | status | detail |", "|---|---|---|"]
    lines += [f"| `{c.group}.{_cell(c.name)}` | {c.status} | {_cell(c.message)} |" for c in result.checks]
    lines += ["", "## Retrieval per bucket", ""] + _retrieval_table(result, baseline)
    robustness = _robustness_table(result)
    if robustness:
        lines += ["", "## Robustness per bucket (sampled cases)", ""] + robustness
    return "\n".join(lines) + "\n"


def junit_xml(result: GateResult) -> str:
    """JUnit XML: one testcase per check; ``fail`` is a failure, ``skip`` skipped, ``warn`` passes
    with the warning in ``system-out`` (JUnit has no warning state)."""
    suite = ET.Element(
        "testsuite",
        name="tuner gate",
        tests=str(len(result.checks)),
        failures=str(len(result.failures)),
        errors="0",
        skipped=str(sum(c.status == "skip" for c in result.checks)),
    )
    for check in result.checks:
        case = ET.SubElement(suite, "testcase", classname=f"tuner.gate.{check.group}", name=check.name)
        if check.status == "fail":
            ET.SubElement(case, "failure", message=check.message).text = check.message
        elif check.status == "skip":
            ET.SubElement(case, "skipped", message=check.message)
        else:
            ET.SubElement(case, "system-out").text = f"{check.status.upper()}: {check.message}"
    root = ET.Element("testsuites", name="tuner gate", tests=suite.get("tests", "0"), failures=suite.get("failures", "0"))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_gate_outputs(result: GateResult, baseline: Baseline | None, out: str | Path, header: Sequence[str] = ()) -> list[Path]:
    """Write both files into ``out`` (each atomically) and return their paths."""
    folder = Path(out)
    summary, junit = folder / SUMMARY_FILE, folder / JUNIT_FILE
    atomic_write_text(summary, summary_markdown(result, baseline, header))
    atomic_write_text(junit, junit_xml(result))
    return [summary, junit]
