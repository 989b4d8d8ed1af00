"""Report (front → **report**): assemble the study report: one self-contained HTML page with plotly.js inlined and no
network reference."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import optuna
import plotly.io as pio
from plotly.offline import get_plotlyjs

from tuner.dataset import LabelProvenance
from tuner.errors import UserError
from tuner.io import atomic_write_text
from tuner.objectives import DELTA, EXPOSURE, RECALL
from tuner.stats import PairedComparison
from tuner.redaction import redact
from tuner.retrieval import SearchLatency
from tuner.pareto import (
    CONTEXT_WORDS,
    FrontEntry,
    Point,
    default_reference,
    front_entries,
    hypervolume,
    hypervolume_history,
    knee,
    pick,
    runner_up,
    tie_groups,
)
from tuner.report._figures import (
    Figure,
    compare_figure,
    front_figure,
    hypervolume_figure,
    importance_figure,
    label,
    sweet_spot_figure,
)
from tuner.report._study import CALL_KINDS, StudySummary, summarize_study
from tuner.settings import RetrievalSettings, format_settings, shared_settings
from tuner.front import (
    REPORT_TEXTS,
    Confirmation,
    PairedComparisons,
    ReportLanguage,
    StudyRecord,
    TrialRecord,
    compared_figures,
    entry_caveat,
    optimism,
    pick_notes,
    report_texts,
    runner_up_comparison,
    separating_cases,
    study_comparisons,
    study_labels,
)
from tuner.objectives import Direction, robustness_objective

Texts = Mapping[str, str]
ENGLISH: Texts = REPORT_TEXTS["en"]

STATES = ("complete", "pruned", "repeated", "fail", "running", "waiting")
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #222; }
h1 { margin-bottom: 4px; } h2 { margin-top: 36px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table { border-collapse: collapse; margin: 10px 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: right; white-space: nowrap; } th { background: #f4f4f4; }
td.text, th { white-space: normal; } .wide { overflow-x: auto; max-width: 100%; }
td.text, th.text { text-align: left; } .note { color: #555; font-style: italic; }
tr.settings td { text-align: left; white-space: normal; font-family: ui-monospace, monospace; font-size: 12px; color: #333;
  border-top: none; padding-top: 0; padding-left: 24px; }
code, pre { background: #f4f4f4; padding: 2px 4px; } dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; }
dt { font-weight: 600; }
"""


def default_picks(entries: Sequence[FrontEntry], summary: StudySummary) -> dict[str, int]:
    """The picks shown when none are given: the knee, and the cheapest tie of it when context words were measured."""
    if not entries:
        return {}
    picks = {"knee": knee(entries, summary.directions, summary.noise_floor).number}
    if all(e.context_words is not None for e in entries):
        picks["cheapest"] = pick("cheapest", entries, summary.directions, summary.noise_floor).number
    return picks


def _esc(value: object) -> str:
    return html.escape(str(value))


def _empty_front(records: Mapping[int, TrialRecord], t: Texts) -> str:
    """Why nothing is on the front: every complete trial unscorable (with the first reason), or none complete."""
    unscorable = [(n, r.unscorable) for n, r in sorted(records.items()) if r.unscorable]
    why = (t["empty_unscorable"].format(count=len(unscorable), number=unscorable[0][0], reason=unscorable[0][1])
           if unscorable else t["empty_none"])
    return f'<p class="note" id="empty-front">{_esc(t["empty_front"].format(why=why))}</p>'


def _value(point: Point, name: str) -> str:
    ci = point.ci.get(name)
    text = f"{point.values[name]:.3f}"
    return text + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], text_columns: Sequence[int] = (),
           settings: Sequence[str] | None = None) -> str:
    """An HTML table; ``settings`` (one text per row) go in a row of their own under each row, across the whole table:
    the configuration, which is what gets deployed, is read in one line instead of a column pushed off the page."""
    def cell(tag: str, i: int, content: str) -> str:
        cls = ' class="text"' if i in text_columns else ""
        return f"<{tag}{cls}>{_esc(content)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(header))
    under = settings or [""] * len(rows)
    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>"
                   + (f'<tr class="settings"><td colspan="{len(header)}">{_esc(line)}</td></tr>' if line else "")
                   for row, line in zip(rows, under))
    # headers wrap, and a table still wider than the page scrolls inside its own box instead of being cut at the edge
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _figure_html(figure: Figure, div_id: str) -> str:
    if figure.figure is None:
        return f'<p class="note">{_esc(figure.note)}</p>'
    html: str = pio.to_html(figure.figure, full_html=False, include_plotlyjs=False, div_id=div_id, config=PLOT_CONFIG)
    return html


def _n_of_total(record: TrialRecord) -> str:
    n, total = record.n, record.n_total
    return "" if n is None else f"{n}/{total}"


def _warnings(records: Mapping[int, TrialRecord], t: Texts) -> str:
    """Every trial warning (a variant short of its injection slots), every trial left unanswered and every unscorable
    one, one line each."""
    lines = [f"trial #{n}: {w}" for n, r in sorted(records.items()) for w in r.warnings or ()]
    for n, record in sorted(records.items()):
        why = t["unscorable"].format(why=record.unscorable) if record.unscorable else t["infeasible"].format(why=record.skipped)
        if record.unscorable or record.skipped:
            unanswered = t["not_answered"] if record.skipped else ""
            lines.append(f"trial #{n}: {t['kept_off'].format(why=why)}{unanswered}")
    if not lines:
        return ""
    return (f'<div class="note"><p>{_esc(t["warnings"])}</p><ul>' + "".join(f"<li>{_esc(line)}</li>" for line in lines)
            + "</ul></div>")


def _header(summary: StudySummary, final_hv: float | None, storage_url: str | None, t: Texts) -> str:
    counts = ", ".join(f"{summary.counts[state]} {t['state_' + state]}" for state in STATES
                       if summary.counts[state] or state in ("complete", "pruned", "fail"))
    objectives = ", ".join(f"{label(n, t)} ({t[d]})" for n, d in summary.directions.items())
    # two significant digits: the floor is itself an estimate (±0.016, not ±0.0155803)
    floor = ", ".join(f"{label(n, t)} ±{v:.2g}" for n, v in summary.noise_floor.items()) or t["floor_none"]
    floor += t["floor_paired"]
    calls = ", ".join(f"{summary.calls[kind]:,} {t['call_' + kind]}" for kind in CALL_KINDS)
    if summary.cost:
        calls += "; " + t["cost"].format(cost=f"{summary.cost:.4g}")
    dashboard = f"optuna-dashboard {redact(storage_url)}" if storage_url else "optuna-dashboard sqlite:///path/to/study.db"
    rows = [
        (t["row_trials"], counts),
        (t["row_objectives"], objectives),
        (t["row_floor"], floor),
        (t["row_intervals"], t["intervals"]),
        (t["row_spent"], calls),
        (t["row_hypervolume"], "—" if final_hv is None else f"{final_hv:.4f}"),
        (t["row_generated"], datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]
    service = summary.retrieval
    if service is not None:  # the trials measured someone else's retrieval: what was searched and how v3 was made
        rows.insert(2, (t["row_retrieval"], t["retrieval"].format(**{key: service[key] for key in (
            "url", "knowledge_id", "searched", "v3", "match")})))
    items = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in rows)
    browse = _esc(t["dashboard"]).format(command=f"<code>{_esc(dashboard)}</code>",
                                         install="<code>pip install optuna-dashboard</code>")
    return f"<h1>{_esc(t['heading'].format(name=summary.name))}</h1><dl>{items}</dl><p>{browse}</p>"


def _confirmed(
    entry: Point, directions: Mapping[str, Direction], names: Sequence[str], confirmed: Mapping[int, Confirmation]
) -> list[str]:
    """The held-out figure of each quality objective with its interval and n, and the optimism (how much better the
    tuning figure looked, oriented by the objective's direction)."""
    held = confirmed.get(entry.number)
    cells = []
    for name in names:
        value = None if held is None else held.values.get(name)
        if held is None or value is None:
            cells += ["—", "—"]
            continue
        ci = held.interval(name)
        interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        cells += [f"{value:.3f}{interval} ({held.n}/{held.n_total})",
                  f"{optimism(entry.values[name], value, directions[name]):+.3f}"]
    return cells


def _latency(latency: SearchLatency | None) -> str:
    return "—" if latency is None else f"{latency.p50_ms:.3g} / {latency.p95_ms:.3g}"


def _front_table(
    entries: Sequence[FrontEntry], summary: StudySummary, records: Mapping[int, TrialRecord],
    confirmed: Mapping[int, Confirmation], t: Texts,
) -> str:
    names = list(summary.directions)
    quality = [n for n in names if n != CONTEXT_WORDS] if confirmed else []
    timed = any(records[e.number].search_latency is not None for e in entries)
    rows = [
        [
            f"#{e.number}", *(_value(e, n) for n in names),
            *([] if CONTEXT_WORDS in names else ["—" if e.context_words is None else f"{e.context_words:.0f}"]),
            *([_latency(records[e.number].search_latency)] if timed else []),
            _n_of_total(records[e.number]),
            *_beside_delta(records[e.number], names),
            *_confirmed(e, summary.directions, quality, confirmed),
            "" if e.tie_group is None else f"T{e.tie_group + 1}",
            ", ".join(f"#{n}" for n in e.epsilon_dominated_by),
        ]
        for e in entries
    ]
    header = [t["col_trial"], *(label(n, t) for n in names), *([] if CONTEXT_WORDS in names else [t[CONTEXT_WORDS]]),
              *([t["col_search_ms"]] if timed else []), t["col_n"],
              *_beside_delta_header(names, t), *_held_out_header(quality, t), t["col_tie"], t["col_dominated_by"]]
    note = f'<p class="note">{_esc(t["note_held_out"])}</p>' if quality else ""
    note += f'<p class="note">{_esc(t["note_exposure"])}</p>'
    if timed:
        note += f'<p class="note">{_esc(t["note_search_ms"])}</p>'
    shared, lines = settings_lines([e.params for e in entries], t)
    return shared + _table(header, rows, settings=lines) + note


def settings_lines(configurations: Sequence[Mapping[str, Any]], t: Texts = ENGLISH) -> tuple[str, list[str]]:
    """The settings of table rows, as a line naming those all of them share (empty when none or one row) and per row
    the line of its own (``settings: top_k=8 · relevance_threshold=0.35``)."""
    shared = shared_settings(configurations)
    lines = [format_settings({k: v for k, v in c.items() if k not in shared}, " · ") for c in configurations]
    note = f'<p class="note">{_esc(t["shared_settings"].format(settings=format_settings(shared)))}</p>' if shared else ""
    return note, [t["settings_line"].format(settings=line) if line else "" for line in lines]


def _held_out_header(quality: Sequence[str], t: Texts) -> list[str]:
    """The held-out and optimism columns of each quality objective (a study with ``confirm:``)."""
    return [t[key].format(name=label(n, t)) for n in quality for key in ("col_held_out", "col_optimism")]


def _beside_delta_header(names: Sequence[str], t: Texts) -> list[str]:
    """The columns shown beside Δ: exposure (unless an objective), the measured Δ (when exposure is one), susceptibility."""
    first = t[EXPOSURE] if EXPOSURE not in names else t["col_measured"].format(name=label(DELTA, t))
    return [first, t["col_susceptibility"]]


def _beside_delta(record: TrialRecord, names: Sequence[str]) -> list[str]:
    share, parts = record.exposure(), record.delta_parts()
    unknown = "—" if record.exposure_not_measured is None else "not measured"
    first = (unknown if share is None else share.describe()) if EXPOSURE not in names else (
        "—" if parts is None or parts.delta is None else f"{parts.delta:.3f}")
    return [first, "—" if parts is None or parts.susceptibility is None else f"{parts.susceptibility:.3f}"]


def _difference(c: PairedComparison, t: Texts) -> str:
    """A paired difference with its interval, whether it holds 0, and the cases at which it would separate."""
    needed = separating_cases(c)
    return (f"{c.difference:+.3f} [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}] " + t["tied" if c.tied else "apart"]
            + f" ({t['cases'].format(n=c.n)}" + ("" if needed is None else t["separates"].format(n=needed)) + ")")


def _neighbour_table(entries: Sequence[FrontEntry], summary: StudySummary, records: Mapping[int, TrialRecord],
                     comparisons: PairedComparisons, t: Texts) -> str:
    """Each front member against the next by recall@k: the paired 95% interval of their difference per objective, and
    the cases at which that difference would separate."""
    names = [n for n in summary.directions if n != CONTEXT_WORDS]
    rows = []
    for row in comparisons.neighbours(entries, records, names):
        cells = ["—" if (c := row.objectives.get(name)) is None else _difference(c, t) for name in names]
        rows.append([f"#{row.trial} − #{row.other}", *cells])
    if not rows:
        return ""
    table = _table([t["col_neighbours"], *(t["col_difference"].format(name=label(n, t)) for n in names)], rows,
                   text_columns=[0])
    return f'<p class="note">{_esc(t["note_neighbours"])}</p>' + table


def _labels_section(study: optuna.Study, entries: Sequence[FrontEntry], t: Texts) -> str:
    """Where the golden set's labels came from, and per front member its recall beside the lower bound that counts the
    no-answer cases as misses, with the pooling caveat of a retriever that helped label."""
    provenance = study_labels(study)
    line = t["labels_unknown"] if provenance is None else provenance.summary(t)
    text = f'<p class="labels">{_esc(t["labels"].format(line=line))}</p>'
    caveats = [(e, c) for e in entries if (c := entry_caveat(provenance, e, study.trials[e.number])) is not None]
    if provenance is None or not caveats:
        return text
    rows = [[f"#{e.number}", _value(e, RECALL),
             f"{c.lower_bound:.3f}" + ("" if c.lower_bound_ci is None else f" [{c.lower_bound_ci[0]:.3f}, {c.lower_bound_ci[1]:.3f}]"),
             _pool_note(provenance, study.trials[e.number], t)] for e, c in caveats]
    header = [t["col_trial"], label(RECALL, t), t["col_lower_bound"].format(name=label(RECALL, t), n=caveats[0][1].no_answer),
              t["col_pooling"]]
    return text + _table(header, rows, text_columns=[3])


def _pool_note(provenance: LabelProvenance, trial: optuna.trial.FrozenTrial, t: Texts) -> str:
    """The pooling caveat of ``trial``'s configuration in the report's language ('' when the pool does not favour it)."""
    settings = TrialRecord.from_trial(trial).settings or {}
    return provenance.pool_note(str(settings["retriever"]), int(settings["top_k"]), t) or ""


def _pruned_table(summary: StudySummary, t: Texts) -> str:
    if not summary.pruned:
        return ""
    rows = []
    for trial in summary.pruned:
        pruning = TrialRecord.from_trial(trial).pruning
        cells = ["", "", "", ""] if pruning is None else [
            str(pruning.look), str(pruning.cases_used), f"#{pruning.dominated_by}", f"{pruning.p_value:.2g}"
        ]
        rows.append([f"#{trial.number}", *cells])
    shared, lines = settings_lines([trial.params for trial in summary.pruned], t)
    table = _table([t["col_trial"], t["col_look"], t["col_cases_used"], t["col_dominated_by"], t["col_p"]], rows, settings=lines)
    return f"<details><summary>{_esc(t['pruned_summary'].format(n=len(rows)))}</summary>{shared}{table}</details>"


def _runner_ups(
    picks: Mapping[str, int], study: optuna.Study, entries: Sequence[FrontEntry], summary: StudySummary,
    comparisons: PairedComparisons, min_recall: float | None, t: Texts,
) -> str:
    """Each pick against its runner-up (what its rule would pick without it), paired on the figures the rules use,
    with the cases at which each difference would separate."""
    if not entries:
        return ""
    figures, _, where = compared_figures(study, entries, t["language"])
    by_number = {e.number: e for e in figures}
    # one row per (pick, runner-up) pair, naming every rule that gave it
    rules_of: dict[tuple[int, int], list[str]] = {}
    for rule, number in picks.items():
        chosen = by_number.get(number)
        second = None if chosen is None else runner_up(rule, chosen, figures, summary.directions, summary.noise_floor,
                                                       min_recall)
        if second is not None:
            rules_of.setdefault((number, second.number), []).append(rule)
    rows = []
    for (number, other), rules in rules_of.items():
        row = runner_up_comparison(study, number, other, comparisons)
        rows.append([", ".join(rules), f"#{number} − #{other}", *(_difference(row.objectives[n], t) for n in row.objectives)])
    if not rows:
        return ""
    names = [n for n in summary.directions if n != CONTEXT_WORDS]
    return (f'<p class="note">{_esc(t["note_runner_up"].format(where=where))}</p>'
            + _table([t["col_rule"], t["col_pick_runner_up"], *(t["col_difference"].format(name=label(n, t)) for n in names)],
                     rows, text_columns=[0]))


def _picks_section(
    picks: Mapping[str, int], summary: StudySummary, records: Mapping[int, TrialRecord], study: optuna.Study,
    comparisons: PairedComparisons, t: Texts,
) -> str:
    if not picks:
        return f'<p class="note">{_esc(t["no_pick"])}</p>'
    points = {p.number: p for p in summary.points}
    names = list(summary.directions)
    # beside the tuning figures, the held-out ones the pick rules and notes use (a study with confirm:)
    confirmed = StudyRecord.from_study(study).confirm
    quality = [n for n in names if n != CONTEXT_WORDS] if confirmed else []
    header = [t["col_rule"], t["col_trial"], *(t["col_tuning"].format(name=label(n, t)) if quality else label(n, t) for n in names),
              t["col_n"], *_held_out_header(quality, t)]
    # one row per picked trial, naming every rule that picked it ("knee, cheapest")
    rules_of: dict[int, list[str]] = {}
    for rule, number in picks.items():
        rules_of.setdefault(number, []).append(rule)
    overview = _table(
        header,
        [[", ".join(rules), f"#{n}", *(_value(points[n], m) for m in names), _n_of_total(records[n]),
          *_confirmed(points[n], summary.directions, quality, confirmed)]
         for n, rules in rules_of.items()],
        text_columns=[0],
        settings=[t["settings_line"].format(settings=format_settings(points[n].params, " · ")) for n in rules_of],  # whole: deployed
    )
    # what the noise floor says about each pick: indistinguishable from zero or from a front neighbour
    overview += "".join(f'<p class="note">{html.escape(note)}</p>'
                        for number in rules_of for note in pick_notes(study, number, comparisons, t["language"]))
    # per category, one set of columns per picked trial, headed by every rule that picked it ("knee, cheapest #27")
    by_category = {number: records[number].by_category or {} for number in rules_of}
    categories = sorted({c for cats in by_category.values() for c in cats})
    if not categories:
        return overview + f'<p class="note">{_esc(t["no_categories"])}</p>'

    # recall@k, the study's robustness objective and beside it what the study measured but did not optimize (exposure
    # in a Δ study, Δ in an exposure study), each shown only where some pick has a value for it: a study recorded
    # before trials kept exposure per category shows no column of dashes
    robustness = robustness_objective(names)
    beside = (DELTA, t["col_measured"].format(name=label(DELTA, t))) if robustness == EXPOSURE else (EXPOSURE, label(EXPOSURE, t))
    columns = [(name, heading) for name, heading in ((RECALL, label(RECALL, t)), (robustness, label(robustness, t)), beside)
               if any(scores.get(name) is not None for cats in by_category.values() for scores in cats.values())]

    def cells(category: str, number: int) -> list[str]:
        scores = by_category[number].get(category)
        if scores is None:
            return ["—"] * (len(columns) + 1)
        values = [scores.get(name) for name, _ in columns]
        return [*("—" if value is None else f"{value:.3f}" for value in values), str(scores.get("n", ""))]

    header = [t["col_category"], *(t["col_pick_column"].format(rules=", ".join(rules), number=number, heading=h)
                                   for number, rules in rules_of.items() for h in (*(h for _, h in columns), "n"))]
    rows = [[c, *(v for number in rules_of for v in cells(c, number))] for c in categories]
    return overview + _table(header, rows, text_columns=[0])


def knobs_used(entries: Sequence[FrontEntry]) -> dict[str, int]:
    """Per setting searched, how many front members set it off its built-in default (``RetrievalSettings``): the
    knobs the front uses (``version_policy`` 3 = three front members drop stale versions)."""
    fields = RetrievalSettings.model_fields
    used: dict[str, int] = {}
    for entry in entries:
        for name, value in entry.params.items():
            if name in fields and value != fields[name].default:
                used[name] = used.get(name, 0) + 1
    return used


def _compare_section(study: optuna.Study, summary: StudySummary, entries: Sequence[FrontEntry], other: optuna.Study,
                     t: Texts) -> str:
    """``study``'s front beside ``other``'s (a study of the same objectives, e.g. without the version knobs): both
    fronts in one figure, each one's hypervolume against one reference point, and the knobs each front uses."""
    theirs = summarize_study(other)
    if list(theirs.directions) != list(summary.directions):
        raise UserError(f"--compare: study {theirs.name!r} has objectives {list(theirs.directions)}, "
                        f"not {list(summary.directions)}")
    their_entries = front_entries(theirs.points, theirs.directions, theirs.noise_floor) if theirs.points else []
    points = [*summary.points, *theirs.points]
    reference = default_reference(points, summary.directions) if points else {}
    names = list(summary.directions)
    rows = []
    for name, shown, front in ((summary.name, summary, entries), (theirs.name, theirs, their_entries)):
        volume = hypervolume(shown.points, summary.directions, reference) if shown.points else 0.0
        used = knobs_used(front)
        rows.append([name, t["front_of"].format(front=len(front), complete=len(shown.points)), f"{volume:.4f}",
                     "; ".join(f"#{e.number} " + ", ".join(_value(e, n) for n in names) for e in front),
                     ", ".join(f"{knob} ({count}/{len(front)})" for knob, count in sorted(used.items())) or t["knobs_none"]])
    figure = compare_figure({summary.name: entries, theirs.name: their_entries}, names, t)
    note = f'<p class="note">{_esc(t["note_compare"].format(reference=format_settings(reference)))}</p>'
    header = [t["col_study"], t["col_front_of"], t["row_hypervolume"], t["col_front"], t["col_knobs"]]
    return _figure_html(figure, "compare") + _table(header, rows, text_columns=[0, 3, 4]) + note


def report_language(study: optuna.Study, language: str | None = None) -> ReportLanguage:
    """The language the report of ``study`` is written in: ``language`` when given (``en``, ``zh``; the study file's
    ``report_language``), else the language of its golden cases recorded when it was created (a study recorded before
    that: English)."""
    chosen = language or StudyRecord.from_study(study).language
    return "zh" if chosen == "zh" else "en"


def render_report(
    study: optuna.Study, picks: Mapping[str, int] | None = None, storage_url: str | None = None,
    compare: optuna.Study | None = None, comparisons: PairedComparisons | None = None, min_recall: float | None = None,
    language: str | None = None,
) -> str:
    """The report of ``study`` as one HTML page (see ``write_report``), in :func:`report_language`."""
    t = report_texts(report_language(study, language))
    comparisons = comparisons or study_comparisons(study)
    summary = summarize_study(study, comparisons)
    names = list(summary.directions)
    records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
    entries = front_entries(summary.points, summary.directions, summary.noise_floor) if summary.points else []
    groups = tie_groups(entries, summary.directions, summary.noise_floor)
    chosen = default_picks(compared_figures(study, entries)[0], summary) if picks is None else dict(picks)
    complete = {p.number for p in summary.points}
    for rule, number in chosen.items():
        if number not in complete:
            raise UserError(f"pick {rule!r} names trial {number}, which is not a complete trial of study {summary.name!r}")
    reference = default_reference(summary.points, summary.directions) if summary.points else {}
    history = hypervolume_history(summary.points, summary.directions, reference) if summary.points else []
    final_hv = hypervolume(summary.points, summary.directions, reference) if summary.points else None
    on_front = {e.number for e in entries}
    sections = [
        (t["section_front"], _figure_html(front_figure(summary, entries, groups, chosen, t), "front")
         + (_front_table(entries, summary, records, StudyRecord.from_study(study).confirm, t) if entries
            else _empty_front(records, t))
         + _labels_section(study, entries, t)
         + _neighbour_table(entries, summary, records, comparisons, t)
         + _pruned_table(summary, t)),
        (t["section_hypervolume"], _figure_html(
            hypervolume_figure([p.number for p in summary.points], history, reference, t), "hypervolume")),
        (t["section_sweet"], _figure_html(sweet_spot_figure(summary, on_front, names[:2], t), "sweet-spot")),
        (t["section_importances"], _figure_html(importance_figure(study, summary, t), "importances")),
        (t["section_picks"], _picks_section(chosen, summary, records, study, comparisons, t)
         + _runner_ups(chosen, study, entries, summary, comparisons, min_recall, t)),
    ]
    if compare is not None:
        sections.append((t["section_compare"].format(name=compare.study_name),
                         _compare_section(study, summary, entries, compare, t)))
    body = _header(summary, final_hv, storage_url, t) + _warnings(records, t) + "".join(
        f"<section><h2>{_esc(title)}</h2>{content}</section>" for title, content in sections
    )
    return (
        f'<!DOCTYPE html>\n<html lang="{t["html_lang"]}"><head><meta charset="utf-8">'
        f"<title>{_esc(t['title'].format(name=summary.name))}</title><style>{STYLE}</style>"
        f'<script type="text/javascript">{get_plotlyjs()}</script></head>'
        f"<body>{body}</body></html>\n"
    )


def write_report(
    study: optuna.Study, path: Path, picks: Mapping[str, int] | None = None, storage_url: str | None = None,
    compare: optuna.Study | None = None, comparisons: PairedComparisons | None = None, min_recall: float | None = None,
    language: str | None = None,
) -> Path:
    """Write the study report to ``path`` atomically and return ``path``.

    One self-contained HTML file: plotly.js is inlined, nothing is fetched when it is opened. Sections:
    header (name, trial counts, noise floor, calls spent, optuna-dashboard command — exact when
    ``storage_url`` is given), 1. front with 95% error bars, ε-ties and pruned trials, 2. hypervolume
    history, 3. objectives against top_k, 4. parameter importances per objective, 5. the ``picks``
    (rule name → trial number; default: the knee and its cheapest ε-tie) per category, and with ``compare`` (a study
    of the same objectives, e.g. the same study file without the version knobs) 6. both fronts side by side, their
    hypervolumes against one reference and the knobs each front uses. ``comparisons``: the paired comparisons of this
    reading of the study, to reuse (a fresh one by default); ``min_recall``: the recall floor of a ``min-delta`` pick,
    for its runner-up. ``language``: ``en`` or ``zh``; by default the language of the study's golden cases
    (:func:`report_language`).
    """
    atomic_write_text(path, render_report(study, picks, storage_url, compare, comparisons, min_recall, language))
    return Path(path)
