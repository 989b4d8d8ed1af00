"""Stress (stress matrix → **report**): the stress report as Markdown, as one self-contained HTML page (inline CSS, a
type × severity heat map, no scripts, no CDN) and as JSON with stable keys."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

from tuner.corruption import SEVERITIES
from tuner.io import atomic_write_text
from tuner.stats import Estimate
from tuner.stress._checks import StressComparison, check_hypotheses
from tuner.stress._evaluate import CLEAN, CLEAN_PLUS, NO_RETRIEVAL, UNFILTERED_NOTE, ConditionResult, StressReport
from tuner.stress._metrics import Difference, mean_over_severities

MARKDOWN_FILE = "stress.md"
HTML_FILE = "stress.html"
JSON_FILE = "stress.json"

DEFINITIONS = (
    "accuracy: share of cases whose answer states every keypoint, Wilson 95% interval (n = cases scored). "
    "Δ = Acc(clean) − Acc(condition) over the cases scored in both, in points, Newcombe paired 95% interval: "
    "positive = accuracy lost. "
    "ρ: share of queries with nothing retrieved, Wilson 95% interval. "
    "misled: share of the cases right under clean that are wrong under the condition, Wilson 95% interval. "
    "corrupted: corrupted chunks / retrieved chunks over every query. "
    "Γ_t(A, B) = Δ̄(A, t) − Δ̄(B, t), Δ̄ = mean of Δ over the severities present in both, in points, percentile "
    "bootstrap 95% interval over the cases scored under every condition of both (n). "
    "See docs/stress.md."
)


GAMMA_HEAD = ["type", "Γ [95% CI]", "n"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _estimate(estimate: Estimate) -> str:
    ci = f" [{estimate.ci[0]:.1%}, {estimate.ci[1]:.1%}]" if estimate.ci else ""
    return f"{_pct(estimate.value)}{ci} ({estimate.n}/{estimate.n_total})"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f}"


def _difference(diff: Difference) -> str:
    ci = f" [{_points(diff.ci[0])}, {_points(diff.ci[1])}]" if diff.ci else ""
    return f"{_points(diff.value)}{ci} pts"


def _condition_rows(results: Sequence[ConditionResult]) -> list[list[str]]:
    rows = []
    for r in results:
        name = r.condition.name
        share = r.corrupted_share
        rows.append([
            name,
            _estimate(r.accuracy),
            "—" if name in (CLEAN, NO_RETRIEVAL) else _difference(r.delta),
            _estimate(r.rho),
            "—" if name == CLEAN else _estimate(r.misled),
            "—" if share is None else f"{share:.1%} ({r.corrupted_chunks}/{r.retrieved_chunks})",
        ])
    return rows


CONDITION_HEAD = ["condition", "accuracy [95% CI] (n/N)", "Δ [95% CI]", "ρ [95% CI]", "misled [95% CI]", "corrupted share"]
MATRIX_HEAD = ["type", *SEVERITIES, "Δ̄"]


def _split(report: StressReport) -> tuple[list[ConditionResult], list[ConditionResult]]:
    """(the fifteen conditions and any other matrix cell, the ``clean+`` extras)."""
    main = [r for name, r in report.conditions.items() if not name.startswith(CLEAN_PLUS)]
    extra = [r for name, r in report.conditions.items() if name.startswith(CLEAN_PLUS)]
    return main, extra


def _settings_line(report: StressReport) -> str:
    s = report.settings
    return (f"{s.retriever}, top_k={s.top_k}, threshold={s.relevance_threshold}, rerank={s.rerank_strength}, "
            f"chunks={s.chunk_size} {s.chunk_unit}/{s.chunk_overlap:.0%}")


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"] + ["| " + " | ".join(r) + " |" for r in rows]


def _matrix_rows(report: StressReport) -> list[list[str]]:
    rows = []
    for kind, row in report.matrix().items():
        cells = [
            f"{_pct(row[s].accuracy.value)}, Δ {_difference(row[s].delta)}" if s in row else "—" for s in SEVERITIES
        ]
        rows.append([kind, *cells, f"{_points(mean_over_severities({s: r.delta.value for s, r in row.items()}))} pts"])
    return rows


def _report_markdown(report: StressReport, level: str) -> list[str]:
    main, extra = _split(report)
    lines = [f"configuration: {report.label or '—'}; settings: {_settings_line(report)}", "",
             f"{level} Conditions (one index, selected by metadata)", "", *_md_table(CONDITION_HEAD, _condition_rows(main)), ""]
    if report.absent:
        lines += [f"absent (no corrupted documents of that type and severity): {', '.join(report.absent)}", ""]
    lines += [f"{level} Type × severity: accuracy and Δ", "", *_md_table(MATRIX_HEAD, _matrix_rows(report)), "",
              f"{level} Hypotheses (as measured)", "", *(f"- {line}" for line in check_hypotheses(report).lines()), ""]
    if extra:
        lines += [f"{level} Extra: clean+type (the clean corpus plus one type and severity of corrupted documents)", "",
                  *_md_table(CONDITION_HEAD, _condition_rows(extra)), ""]
    position_rows = [[p, _estimate(r.accuracy)] for p, r in report.positions.items()]
    lines += [f"{level} Position of injected conflicts ({report.injected_conflicts} per case, cases with at least one)", "",
              *_md_table(["position", "accuracy [95% CI] (n/N)"], position_rows), ""]
    return lines


def _gamma_rows(comparison: StressComparison) -> list[list[str]]:
    return [[kind, _difference(diff), str(diff.n)] for kind, diff in comparison.gamma_intervals().items()]


def stress_markdown(subject: StressReport | StressComparison) -> str:
    """The report of one configuration, or of two with Γ per type first."""
    lines = ["# tuner stress", "", f"> {UNFILTERED_NOTE}", ""]
    if isinstance(subject, StressReport):
        lines += _report_markdown(subject, "##")
    else:
        first, second = subject.first.label, subject.second.label
        lines += [f"## Γ_t({first}, {second}) = Δ̄({first}, t) − Δ̄({second}, t)", "",
                  *_md_table(GAMMA_HEAD, _gamma_rows(subject)), ""]
        for report in (subject.first, subject.second):
            lines += [f"## {report.label}", "", *_report_markdown(report, "###")]
    lines.append(DEFINITIONS)
    return "\n".join(lines) + "\n"


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def heat_colour(loss: float | None) -> str:
    """Cell background for Δ: red for a loss, green for a gain, opacity |Δ| / 0.5 capped at 1; grey when n/a."""
    if loss is None:
        return "#eeeeee"
    alpha = min(abs(loss) / 0.5, 1.0)
    return f"rgba(214,39,40,{alpha:.2f})" if loss > 0 else f"rgba(44,160,44,{alpha:.2f})"


def _heat_map(report: StressReport) -> str:
    header = "".join(f"<th>{html.escape(h)}</th>" for h in MATRIX_HEAD)
    rows = []
    for kind, row in report.matrix().items():
        cells = []
        for severity in SEVERITIES:
            result = row.get(severity)
            if result is None:
                cells.append('<td class="cell" style="background:#eeeeee">absent</td>')
                continue
            acc = html.escape(_estimate(result.accuracy))
            cells.append(f'<td class="cell" style="background:{heat_colour(result.delta.value)}">'
                         f"acc {acc}<br>Δ {html.escape(_difference(result.delta))}</td>")
        mean = mean_over_severities({s: r.delta.value for s, r in row.items()})
        cells.append(f'<td style="background:{heat_colour(mean)}">{html.escape(_points(mean))} pts</td>')
        rows.append(f"<tr><th>{html.escape(kind)}</th>{''.join(cells)}</tr>")
    return f'<table class="heat"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _report_html(report: StressReport, level: int) -> str:
    main, extra = _split(report)
    h = f"h{level}"
    hypotheses = "".join(f"<li>{html.escape(line)}</li>" for line in check_hypotheses(report).lines())
    parts = [
        f"<p>configuration: {html.escape(report.label or '—')}; settings: {html.escape(_settings_line(report))}</p>",
        f"<{h}>Type × severity heat map (accuracy and Δ with 95% intervals; red = loss vs clean)</{h}>",
        _heat_map(report),
        f"<{h}>Conditions (one index, selected by metadata)</{h}>",
        _html_table(CONDITION_HEAD, _condition_rows(main)),
    ]
    if report.absent:
        parts.append(f"<p>absent (no corrupted documents of that type and severity): {html.escape(', '.join(report.absent))}</p>")
    parts += [f"<{h}>Hypotheses (as measured)</{h}>", f"<ul>{hypotheses}</ul>"]
    if extra:
        parts += [f"<{h}>Extra: clean+type (the clean corpus plus one type and severity of corrupted documents)</{h}>",
                  _html_table(CONDITION_HEAD, _condition_rows(extra))]
    position_rows = [[p, _estimate(r.accuracy)] for p, r in report.positions.items()]
    parts += [f"<{h}>Position of injected conflicts ({report.injected_conflicts} per case, cases with at least one)</{h}>",
              _html_table(["position", "accuracy [95% CI] (n/N)"], position_rows)]
    return "\n".join(parts)


STYLE = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:72em}table{border-collapse:collapse;margin:1em 0}"
         "th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}th:first-child,td:first-child{text-align:left}"
         "td.cell{text-align:center;min-width:12em}"
         ".note{background:#fff4e5;border-left:4px solid #f0a020;padding:.5em 1em}")


def stress_html(subject: StressReport | StressComparison) -> str:
    if isinstance(subject, StressReport):
        body = _report_html(subject, 2)
    else:
        first, second = subject.first.label, subject.second.label
        body = "\n".join([
            f"<h2>{html.escape(f'Γ_t({first}, {second}) = Δ̄({first}, t) − Δ̄({second}, t)')}</h2>",
            _html_table(GAMMA_HEAD, _gamma_rows(subject)),
            *(f"<h2>{html.escape(r.label)}</h2>\n{_report_html(r, 3)}" for r in (subject.first, subject.second)),
        ])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tuner stress</title>"
        f"<style>{STYLE}</style></head><body>\n<h1>tuner stress</h1>\n"
        f"<p class=\"note\">{html.escape(UNFILTERED_NOTE)}</p>\n{body}\n"
        f"<p>{html.escape(DEFINITIONS)}</p>\n</body></html>\n"
    )


def _report_dict(report: StressReport) -> dict[str, object]:
    return {
        "label": report.label,
        "settings": report.settings.model_dump(mode="json"),
        "conditions": {name: r.to_dict() for name, r in report.conditions.items() if not name.startswith(CLEAN_PLUS)},
        "clean_plus_type": {name: r.to_dict() for name, r in report.conditions.items() if name.startswith(CLEAN_PLUS)},
        "absent": list(report.absent),
        "hypotheses": check_hypotheses(report).to_dict(),
        "positions": {name: r.to_dict() for name, r in report.positions.items()},
        "injected_conflicts": report.injected_conflicts,
    }


def stress_json(subject: StressReport | StressComparison) -> dict[str, object]:
    """Stable keys: one report → its dict; a comparison → ``{"gamma", "first", "second", "reports": [..]}``."""
    head: dict[str, object] = {"note": UNFILTERED_NOTE, "definitions": DEFINITIONS}
    if isinstance(subject, StressReport):
        return {**head, **_report_dict(subject)}
    return {**head, **subject.to_dict(), "reports": [_report_dict(subject.first), _report_dict(subject.second)]}


def write_stress_outputs(subject: StressReport | StressComparison, out: str | Path) -> list[Path]:
    """stress.md, stress.html and stress.json in ``out``, each written atomically."""
    folder = Path(out)
    paths = [folder / MARKDOWN_FILE, folder / HTML_FILE, folder / JSON_FILE]
    atomic_write_text(paths[0], stress_markdown(subject))
    atomic_write_text(paths[1], stress_html(subject))
    atomic_write_text(paths[2], json.dumps(stress_json(subject), indent=2, ensure_ascii=False) + "\n")
    return paths
