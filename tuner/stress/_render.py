"""Stress (ranking → answers → verdicts → **stress matrix**): stress report as Markdown and as one self-contained HTML
page (inline CSS, no scripts, no CDN)."""

from __future__ import annotations

import html
from pathlib import Path

from tuner.io import atomic_write_text
from tuner.stats import Estimate
from tuner.stress._evaluate import UNFILTERED_NOTE, StressReport

MARKDOWN_FILE = "stress.md"
HTML_FILE = "stress.html"

_DEFINITIONS = (
    "accuracy: share of cases whose answer states every keypoint, with its Wilson 95% interval (n = cases scored). "
    "Δ vs clean: accuracy minus clean accuracy over the cases scored in both, in points. "
    "misled: share of the cases right when clean whose answer contradicts a keypoint in the condition. "
    "exposed: cases whose retrieved context held a conflicting chunk."
)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f} pts"


def _accuracy(estimate: Estimate) -> str:
    ci = f" [{estimate.ci[0]:.1%}, {estimate.ci[1]:.1%}]" if estimate.ci else ""
    return f"{_pct(estimate.value)}{ci}"


def _tables(report: StressReport) -> tuple[list[str], list[list[str]], list[str], list[list[str]]]:
    condition_head = ["condition", "accuracy [95% CI]", "n", "Δ vs clean", "misled", "exposed"]
    condition_rows = [
        [
            name,
            _accuracy(r.accuracy),
            f"{r.accuracy.n}/{r.accuracy.n_total}",
            "—" if name == "clean" else _points(r.delta),
            "—" if name == "clean" else f"{_pct(r.misled_rate)} (of {r.misled_n})",
            str(r.exposed),
        ]
        for name, r in report.conditions.items()
    ]
    position_head = ["position", "accuracy [95% CI]", "n"]
    position_rows = [[p, _accuracy(r.accuracy), f"{r.accuracy.n}/{r.accuracy.n_total}"] for p, r in report.positions.items()]
    return condition_head, condition_rows, position_head, position_rows


def _settings_line(report: StressReport) -> str:
    s = report.settings
    return (f"{s.retriever}, top_k={s.top_k}, threshold={s.relevance_threshold}, rerank={s.rerank_strength}, "
            f"chunks={s.chunk_size} {s.chunk_unit}/{s.chunk_overlap:.0%}")


def stress_markdown(report: StressReport) -> str:
    ch, cr, ph, pr = _tables(report)

    def table(head: list[str], rows: list[list[str]]) -> list[str]:
        return ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"] + ["| " + " | ".join(r) + " |" for r in rows]

    lines = ["# tuner stress", "", f"settings: {_settings_line(report)}", "", f"> {UNFILTERED_NOTE}", "",
             "## Conditions (one index, selected by metadata)", "", *table(ch, cr), "",
             f"## Position of injected conflicts ({report.noise_n} per case, cases with at least one)", "",
             *table(ph, pr), "", _DEFINITIONS]
    return "\n".join(lines) + "\n"


def stress_html(report: StressReport) -> str:
    ch, cr, ph, pr = _tables(report)

    def table(head: list[str], rows: list[list[str]]) -> str:
        header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"

    style = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse;margin:1em 0}"
             "th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}th:first-child,td:first-child{text-align:left}"
             ".note{background:#fff4e5;border-left:4px solid #f0a020;padding:.5em 1em}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tuner stress</title>"
        f"<style>{style}</style></head><body>\n<h1>tuner stress</h1>\n"
        f"<p>settings: {html.escape(_settings_line(report))}</p>\n"
        f"<p class=\"note\">{html.escape(UNFILTERED_NOTE)}</p>\n"
        f"<h2>Conditions (one index, selected by metadata)</h2>\n{table(ch, cr)}\n"
        f"<h2>Position of injected conflicts ({report.noise_n} per case, cases with at least one)</h2>\n{table(ph, pr)}\n"
        f"<p>{html.escape(_DEFINITIONS)}</p>\n</body></html>\n"
    )


def write_stress_outputs(report: StressReport, out: str | Path) -> list[Path]:
    folder = Path(out)
    paths = [folder / MARKDOWN_FILE, folder / HTML_FILE]
    atomic_write_text(paths[0], stress_markdown(report))
    atomic_write_text(paths[1], stress_html(report))
    return paths
