"""Command line (**CLI** → public package names): terminal rendering of evaluation reports (rich tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from tuner.evaluation.retrieval import RetrievalReport
from tuner.objectives import RECALL

if TYPE_CHECKING:
    from tuner.noisefloor import NoiseFloor
    from tuner.evaluation.robustness import RobustnessReport, VariantSummary
    from tuner.variants import VariantsConfig
    from tuner.stats import Estimate
    from tuner.metrics import TiedExposure


def retrieval_table(report: RetrievalReport) -> Table:
    metrics = list(report.overall)
    table = Table(title=f"retrieval — {_settings_line(report)}", title_justify="left")
    table.add_column("bucket")
    for name in metrics:
        table.add_column(name, justify="right")
    table.add_column("n/N", justify="right")
    first = report.overall[metrics[0]]
    table.add_row(
        "all", *[_fmt(report.overall[m].value, report.overall[m].ci) for m in metrics], f"{first.n}/{first.n_total}"
    )
    for prefix, buckets in (("category", report.by_category), ("difficulty", report.by_difficulty)):
        for label, values in buckets.items():
            head = values[metrics[0]]
            table.add_row(f"{prefix}: {label}", *[_fmt(values[m].value, None) for m in metrics], f"{head.n}/{head.n_total}")
    if report.exposure is not None:
        table.caption = (f"conflict exposure (cases shown a conflicting chunk over the index with conflicts): "
                         f"{report.exposure.describe()}{tie_clause(report.tied_exposure)}")
    elif report.exposure_not_measured is not None:  # as a study's trial says it (TrialRecord.describe_exposure)
        table.caption = f"conflict exposure not measured: {report.exposure_not_measured}"
    table.caption_justify = "left"
    return table


def _settings_line(report: RetrievalReport) -> str:
    s = report.settings
    return (
        f"{s.retriever}, top_k={s.top_k}, threshold={s.relevance_threshold}, rerank={s.rerank_strength}, "
        f"chunks={s.chunk_size} {s.chunk_unit}/{s.chunk_overlap:.0%}, mean context {report.mean_context_words:.0f} words"
    )


def _fmt(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


VARIANT_LABELS = {
    "v0": "v0 base",
    "v1": "v1 irrelevant",
    "v2": "v2 relevant-soft",
    "v3": "v3 relevant-hard",
    "v4": "v4 unrelated-only",
}


def robustness_table(report: RobustnessReport, retrieval: RetrievalReport, variant_config: VariantsConfig) -> Table:
    """The v0–v4 matrix: faithfulness, its relative drop with interval and grade, correctness (states or does
    not contradict) and its drop (their intervals are in the JSON), misled and rejection rates, n/N. Recall@k sits in the caption because faithfulness alone hides retrieval misses; the title
    names the variant configuration, including which v3 mode ran (``in_index`` or ``inject``). v4's Δ is
    shown but not graded (its rejection rate is what it measures)."""
    recall = retrieval.overall[RECALL]
    title = f"robustness — {_settings_line(retrieval)}; {variant_config.describe()}"
    table = Table(title=title, title_justify="left", caption_justify="left")
    columns = ("variant", "faithful", "Δfaithful", "grade", "correct", "Δcorrect", "misled", "rejection", "context support",
               "injected", "n/N", "missing")
    for name in columns:
        table.add_column(name, justify="left" if name in ("variant", "grade", "missing") else "right")
    for variant, summary in report.variants.items():
        faithful = summary.faithful
        injected = f"{summary.injected}" + (f" (short {summary.shortfall})" if summary.shortfall else "")
        table.add_row(
            VARIANT_LABELS.get(variant, variant),
            _fmt(faithful.value, faithful.ci),
            "—" if variant == "v0" else _fmt(summary.delta_faithful, summary.delta_ci) + f" ({summary.delta_n})",
            summary.grade or ("not graded" if variant == "v4" else ""),
            _fmt(summary.correct.value, None),
            "—" if variant == "v0" else _fmt(summary.delta_correct, None),
            _rate(summary.misled_rate),
            _rate(summary.rejection_rate),
            _fmt(summary.context_support.value, None),
            injected,
            f"{faithful.n}/{faithful.n_total}",
            _missing(faithful.missing),
        )
    calls = ", ".join(f"{name} {count}" for name, count in report.calls.items())
    table.caption = f"recall@k {_fmt(recall.value, recall.ci)} ({recall.n}/{recall.n_total}); calls: {calls or 'none'}"
    v3 = report.variants.get("v3")
    if v3 is not None and v3.exposure is not None:
        table.caption += "\n" + exposure_line(v3)
    table.caption += "".join(f"\n[bold yellow]warning:[/] {warning}" for warning in report.warnings)
    return table


def tie_clause(ties: TiedExposure | None) -> str:
    """``, 114 more if tied scores at the cut were ordered the other way`` after an exposure's n/N; empty when no tie
    decided a case (or nobody looked)."""
    said = None if ties is None else ties.describe()
    return "" if said is None else f", {said}"


def exposure_line(v3: VariantSummary) -> str:
    """v3's Δfaithful as exposure × susceptibility: ``exposure 0.120 [0.083, 0.170] (27/225); faithfulness at risk
    0.110, susceptibility 0.450: Δ 0.050 = 0.110 × 0.450 + unexposed 0.000``."""
    parts = v3.parts
    line = f"v3 conflict exposure {v3.exposure.describe() if v3.exposure else 'n/a'}{tie_clause(v3.exposure_ties)}"
    if parts is None or parts.at_risk is None:
        return line + "; no case scored at v0 and v3"
    line += f"; faithfulness at risk {parts.at_risk:.3f}, susceptibility " + (
        "— (no exposed case scores at v0)" if parts.susceptibility is None else f"{parts.susceptibility:.3f}"
    )
    if parts.susceptibility is not None and parts.unexposed_loss is not None and v3.delta_faithful is not None:
        line += (f": Δ {v3.delta_faithful:.3f} = {parts.at_risk:.3f} × {parts.susceptibility:.3f} "
                 f"+ unexposed {parts.unexposed_loss:.3f}")
    if v3.unexposed_changed:
        line += f" ({v3.unexposed_changed} unexposed cases have a context other than v0's)"
    return line


def robustness_buckets_table(report: RobustnessReport) -> Table:
    """Per category and difficulty: faithfulness at v0 and Δfaithful per variant (no intervals)."""
    noisy = [v for v in report.variants if v != "v0"]
    table = Table(title="robustness per bucket (Δfaithful per variant)", title_justify="left")
    table.add_column("bucket")
    table.add_column("faithful v0", justify="right")
    for variant in noisy:
        table.add_column(f"Δ {variant}", justify="right")
    table.add_column("n/N", justify="right")
    for prefix, buckets in (("category", report.by_category), ("difficulty", report.by_difficulty)):
        for label, summaries in buckets.items():
            base = summaries["v0"].faithful
            deltas = [_delta_cell(summaries[v]) for v in noisy]
            table.add_row(f"{prefix}: {label}", _fmt(base.value, None), *deltas, f"{base.n}/{base.n_total}")
    return table


def noise_floor_table(floor: NoiseFloor) -> Table:
    """Per objective: the noise floor and the parts it is made of."""
    table = Table(
        title=f"noise floor — {floor.runs} runs, {floor.n_cases} cases, z={floor.z}", title_justify="left",
        caption_justify="left",
    )
    for name in ("objective", "noise floor", "run SD", "bootstrap SD", "judge share", "generator share", "n/N"):
        table.add_column(name, justify="left" if name == "objective" else "right")
    for name, component in floor.components.items():
        table.add_row(
            name,
            f"{floor.objectives[name]:.3f}",
            f"{component.run_sd:.3f}",
            f"{component.bootstrap_sd:.3f}",
            _share(component.judge_share),
            _share(component.generator_share),
            f"{component.n}/{component.n_total}" + (f" ({_missing(component.missing)})" if component.missing else ""),
        )
    notes = [f"{name}: {reason}" for name, reason in floor.undefined.items()]
    notes.append("calls: " + ", ".join(f"{k} {v}" for k, v in floor.calls.items()))
    table.caption = "; ".join(notes)
    return table


def _delta_cell(summary: VariantSummary) -> str:
    if summary.delta_faithful is None:
        return "n/a"
    return f"{summary.delta_faithful:+.3f}" + (f" {summary.grade}" if summary.grade else "")


def _rate(estimate: Estimate | None) -> str:
    return "" if estimate is None else _fmt(estimate.value, None)


def _share(share: float | None) -> str:
    return "— (no run noise)" if share is None else f"{share:.0%}"


def _missing(missing: dict[str, int]) -> str:
    return ", ".join(f"{reason} {count}" for reason, count in missing.items())
