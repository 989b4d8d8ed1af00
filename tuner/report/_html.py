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

from tuner.dataset import labels_line
from tuner.errors import UserError
from tuner.io import atomic_write_text
from tuner.objectives import DELTA, EXPOSURE, RECALL
from tuner.stats import PairedComparison
from tuner.redaction import redact
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
    Confirmation,
    PairedComparisons,
    StudyRecord,
    TrialRecord,
    compared_figures,
    entry_caveat,
    optimism,
    pick_notes,
    runner_up_comparison,
    separating_cases,
    study_comparisons,
    study_labels,
)
from tuner.objectives import Direction, robustness_objective

STATE_WORDS = {"complete": "complete", "pruned": "pruned", "repeated": "repeated configurations not evaluated again",
               "fail": "failed", "running": "running", "waiting": "waiting"}
CALL_WORDS = {
    "generator": "generator calls", "judge": "judge calls", "tokens": "tokens",
    "cached_tokens": "of them prompt tokens served from the provider's prefix cache",
}
INTERVALS = ("95%, one per figure: a mean of per-case scores in [0, 1] (recall@k) by the Wilson score interval, honest "
             "at 0 and 1; a relative drop Δ by a case bootstrap; a difference of two trials by the paired case bootstrap "
             "plus both trials' run-to-run noise")
"""How every interval of the report is made, said once in its header."""
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


def _empty_front(records: Mapping[int, TrialRecord]) -> str:
    """Why nothing is on the front: every complete trial unscorable (with the first reason), or none complete."""
    unscorable = [(n, r.unscorable) for n, r in sorted(records.items()) if r.unscorable]
    why = (f"every complete trial is unscorable ({len(unscorable)}: trial #{unscorable[0][0]}: {unscorable[0][1]}; "
           "all are listed under warnings above)" if unscorable else "no trial has completed yet")
    return f'<p class="note" id="empty-front">Nothing is on the front: {_esc(why)}. Nothing was exported.</p>'


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


def _warnings(records: Mapping[int, TrialRecord]) -> str:
    """Every trial warning (a variant short of its injection slots), every trial left unanswered and every unscorable
    one, one line each."""
    lines = [f"trial #{n}: {w}" for n, r in sorted(records.items()) for w in r.warnings or ()]
    for n, record in sorted(records.items()):
        why = f"unscorable ({record.unscorable})" if record.unscorable else f"infeasible ({record.skipped})"
        if record.unscorable or record.skipped:
            unanswered = "; not answered: no generator or judge request" if record.skipped else ""
            lines.append(f"trial #{n}: {why}; kept off the front{unanswered}")
    if not lines:
        return ""
    return '<div class="note"><p>Warnings:</p><ul>' + "".join(f"<li>{_esc(line)}</li>" for line in lines) + "</ul></div>"


def _header(summary: StudySummary, final_hv: float | None, storage_url: str | None) -> str:
    counts = ", ".join(f"{summary.counts[state]} {word}" for state, word in STATE_WORDS.items()
                       if summary.counts[state] or state in ("complete", "pruned", "fail"))
    objectives = ", ".join(f"{label(n)} ({d})" for n, d in summary.directions.items())
    # two significant digits: the floor is itself an estimate (±0.016, not ±0.0155803)
    floor = ", ".join(f"{label(n)} ±{v:.2g}" for n, v in summary.noise_floor.items()) or "not recorded (ε = 0: exact dominance)"
    floor += " (one configuration's; two trials are compared paired, on the cases both scored)"
    calls = ", ".join(f"{summary.calls[kind]:,} {CALL_WORDS[kind]}" for kind in CALL_KINDS)
    if summary.cost:
        calls += f"; cost {summary.cost:.4g} (at the backends' pricing)"
    dashboard = f"optuna-dashboard {redact(storage_url)}" if storage_url else "optuna-dashboard sqlite:///path/to/study.db"
    rows = [
        ("trials", counts),
        ("objectives", objectives),
        ("noise floor ε", floor),
        ("intervals", INTERVALS),
        ("spent", calls),
        ("hypervolume", "—" if final_hv is None else f"{final_hv:.4f}"),
        ("generated", datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
    ]
    service = summary.retrieval
    if service is not None:  # the trials measured someone else's retrieval: what was searched and how v3 was made
        rows.insert(2, ("retrieval", f"external service {service['url']}, knowledge {service['knowledge_id']} "
                                     f"(Dify External Knowledge API): only {service['searched']} searched; v3: "
                                     f"{service['v3']}; records matched to golden documents by {service['match']}"))
    items = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in rows)
    return (
        f"<h1>Study {_esc(summary.name)}</h1><dl>{items}</dl>"
        "<p>To browse the same trials interactively (history, slices, parallel coordinates), open the study's "
        f"storage in optuna-dashboard: <code>{_esc(dashboard)}</code> (install it with "
        "<code>pip install optuna-dashboard</code>; it serves a local page on port 8080).</p>"
    )


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


def _front_table(
    entries: Sequence[FrontEntry], summary: StudySummary, records: Mapping[int, TrialRecord],
    confirmed: Mapping[int, Confirmation],
) -> str:
    names = list(summary.directions)
    quality = [n for n in names if n != CONTEXT_WORDS] if confirmed else []
    rows = [
        [
            f"#{e.number}", *(_value(e, n) for n in names),
            *([] if CONTEXT_WORDS in names else ["—" if e.context_words is None else f"{e.context_words:.0f}"]),
            _n_of_total(records[e.number]),
            *_beside_delta(records[e.number], names),
            *_confirmed(e, summary.directions, quality, confirmed),
            "" if e.tie_group is None else f"T{e.tie_group + 1}",
            ", ".join(f"#{n}" for n in e.epsilon_dominated_by),
        ]
        for e in entries
    ]
    header = ["trial", *(label(n) for n in names), *([] if CONTEXT_WORDS in names else ["context words"]),
              "n/N", *_beside_delta_header(names),
              *(h for n in quality for h in (f"{label(n)} held out", f"{label(n)} optimism")),
              "ε-tie", "ε-dominated by"]
    note = ('<p class="note">Held out: each front member evaluated when the study ended on the confirmation cases the '
            "search never saw (confirm: in the study file); optimism: how much better the tuning figure looked than the "
            "held-out one, in the objective's direction (positive: the search's figure did not hold; for a minimized "
            "objective, held out − tuning). Pick rules use the held-out figures.</p>") if quality else ""
    note += ('<p class="note">Conflict exposure: the share of cases whose context over the index with its conflicting '
             "documents holds a conflicting chunk, exposed/all with its Wilson 95% interval — a retrieval fact, exact "
             "like recall@k. Susceptibility: what the reader loses once shown one, Σ(f0 − f3) / Σ f0 over the exposed "
             "cases (— when none is). v3 Δfaithful = faithfulness at risk × susceptibility when unexposed cases keep "
             "their v0 context.</p>")
    shared, lines = settings_lines([e.params for e in entries])
    return shared + _table(header, rows, settings=lines) + note


def settings_lines(configurations: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]]:
    """The settings of table rows, as a line naming those all of them share (empty when none or one row) and per row
    the line of its own (``settings: top_k=8 · relevance_threshold=0.35``)."""
    shared = shared_settings(configurations)
    lines = [format_settings({k: v for k, v in c.items() if k not in shared}, " · ") for c in configurations]
    note = f'<p class="note">Every configuration below has {_esc(format_settings(shared))}.</p>' if shared else ""
    return note, [f"settings: {line}" if line else "" for line in lines]


def _beside_delta_header(names: Sequence[str]) -> list[str]:
    """The columns shown beside Δ: exposure (unless an objective), the measured Δ (when exposure is one), susceptibility."""
    return [*(["conflict exposure"] if EXPOSURE not in names else [label(DELTA) + " (measured)"]), "susceptibility"]


def _beside_delta(record: TrialRecord, names: Sequence[str]) -> list[str]:
    share, parts = record.exposure(), record.delta_parts()
    first = ("—" if share is None else share.describe()) if EXPOSURE not in names else (
        "—" if parts is None or parts.delta is None else f"{parts.delta:.3f}")
    return [first, "—" if parts is None or parts.susceptibility is None else f"{parts.susceptibility:.3f}"]


def _difference(c: PairedComparison) -> str:
    """A paired difference with its interval, whether it holds 0, and the cases at which it would separate."""
    needed = separating_cases(c)
    return (f"{c.difference:+.3f} [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}] " + ("tied" if c.tied else "apart")
            + f" ({c.n} cases" + ("" if needed is None else f"; separates at ~{needed}") + ")")


def _neighbour_table(entries: Sequence[FrontEntry], summary: StudySummary, records: Mapping[int, TrialRecord],
                     comparisons: PairedComparisons) -> str:
    """Each front member against the next by recall@k: the paired 95% interval of their difference per objective, and
    the cases at which that difference would separate."""
    names = [n for n in summary.directions if n != CONTEXT_WORDS]
    rows = []
    for row in comparisons.neighbours(entries, records, names):
        cells = ["—" if (c := row.objectives.get(name)) is None else _difference(c) for name in names]
        rows.append([f"#{row.trial} − #{row.other}", *cells])
    if not rows:
        return ""
    table = _table(["front neighbours", *(f"{label(n)} difference" for n in names)], rows, text_columns=[0])
    return ('<p class="note">Neighbouring front members compared paired on the cases both scored: the difference, its '
            "95% interval (case bootstrap of the per-case differences, plus both trials' run-to-run noise), whether "
            "it holds 0, and about how many cases would separate a difference of that size (80% power, α 5% "
            "two-sided). ε-ties and ε-dominance above are decided the same way.</p>" + table)


def _labels_section(study: optuna.Study, entries: Sequence[FrontEntry]) -> str:
    """Where the golden set's labels came from, and per front member its recall beside the lower bound that counts the
    no-answer cases as misses, with the pooling caveat of a retriever that helped label."""
    provenance = study_labels(study)
    text = f'<p class="labels">Labels: {_esc(labels_line(provenance))}.</p>'
    caveats = [(e, c) for e in entries if (c := entry_caveat(provenance, e, study.trials[e.number])) is not None]
    if not caveats:
        return text
    rows = [[f"#{e.number}", _value(e, RECALL),
             f"{c.lower_bound:.3f}" + ("" if c.lower_bound_ci is None else f" [{c.lower_bound_ci[0]:.3f}, {c.lower_bound_ci[1]:.3f}]"),
             c.pooled or ""] for e, c in caveats]
    return text + _table(["trial", label(RECALL), f"{label(RECALL)}, {caveats[0][1].no_answer} no-answer case(s) as misses (lower bound)",
                          "pooling"], rows, text_columns=[3])


def _pruned_table(summary: StudySummary) -> str:
    if not summary.pruned:
        return ""
    rows = []
    for trial in summary.pruned:
        pruning = TrialRecord.from_trial(trial).pruning
        cells = ["", "", "", ""] if pruning is None else [
            str(pruning.look), str(pruning.cases_used), f"#{pruning.dominated_by}", f"{pruning.p_value:.2g}"
        ]
        rows.append([f"#{trial.number}", *cells])
    shared, lines = settings_lines([trial.params for trial in summary.pruned])
    table = _table(["trial", "look", "cases used", "dominated by", "p (Δ)"], rows, settings=lines)
    return f"<details><summary>{len(rows)} pruned trial(s)</summary>{shared}{table}</details>"


def _runner_ups(
    picks: Mapping[str, int], study: optuna.Study, entries: Sequence[FrontEntry], summary: StudySummary,
    comparisons: PairedComparisons, min_recall: float | None,
) -> str:
    """Each pick against its runner-up (what its rule would pick without it), paired on the figures the rules use,
    with the cases at which each difference would separate."""
    if not entries:
        return ""
    figures, _, where = compared_figures(study, entries)
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
        rows.append([", ".join(rules), f"#{number} − #{other}", *(_difference(row.objectives[n]) for n in row.objectives)])
    if not rows:
        return ""
    names = [n for n in summary.directions if n != CONTEXT_WORDS]
    return (f'<p class="note">Each pick against its runner-up (what its rule picks without it), paired {_esc(where)}, '
            "as the front neighbours above.</p>"
            + _table(["rule", "pick − runner-up", *(f"{label(n)} difference" for n in names)], rows, text_columns=[0]))


def _picks_section(
    picks: Mapping[str, int], summary: StudySummary, records: Mapping[int, TrialRecord], study: optuna.Study,
    comparisons: PairedComparisons,
) -> str:
    if not picks:
        return '<p class="note">No configuration picked.</p>'
    points = {p.number: p for p in summary.points}
    names = list(summary.directions)
    # beside the tuning figures, the held-out ones the pick rules and notes use (a study with confirm:)
    confirmed = StudyRecord.from_study(study).confirm
    quality = [n for n in names if n != CONTEXT_WORDS] if confirmed else []
    header = ["rule", "trial", *(f"{label(n)} (tuning)" if quality else label(n) for n in names), "n/N",
              *(h for n in quality for h in (f"{label(n)} held out", f"{label(n)} optimism"))]
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
        settings=[f"settings: {format_settings(points[n].params, ' · ')}" for n in rules_of],  # each pick whole: it is deployed
    )
    # what the noise floor says about each pick: indistinguishable from zero or from a front neighbour
    overview += "".join(f'<p class="note">{html.escape(note)}</p>'
                        for number in rules_of for note in pick_notes(study, number, comparisons))
    # per category, one set of columns per picked trial, headed by every rule that picked it ("knee, cheapest #27")
    by_category = {number: records[number].by_category or {} for number in rules_of}
    categories = sorted({c for cats in by_category.values() for c in cats})
    if not categories:
        return overview + '<p class="note">The picked trials have no per-category scores (user attr by_category).</p>'

    # recall@k, the study's robustness objective and beside it what the study measured but did not optimize (exposure
    # in a Δ study, Δ in an exposure study), each shown only where some pick has a value for it: a study recorded
    # before trials kept exposure per category shows no column of dashes
    robustness = robustness_objective(names)
    beside = (DELTA, f"{label(DELTA)} (measured)") if robustness == EXPOSURE else (EXPOSURE, label(EXPOSURE))
    columns = [(name, heading) for name, heading in ((RECALL, label(RECALL)), (robustness, label(robustness)), beside)
               if any(scores.get(name) is not None for cats in by_category.values() for scores in cats.values())]

    def cells(category: str, number: int) -> list[str]:
        scores = by_category[number].get(category)
        if scores is None:
            return ["—"] * (len(columns) + 1)
        values = [scores.get(name) for name, _ in columns]
        return [*("—" if value is None else f"{value:.3f}" for value in values), str(scores.get("n", ""))]

    header = ["category", *(f"{', '.join(rules)} #{number}: {h}"
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


def _compare_section(study: optuna.Study, summary: StudySummary, entries: Sequence[FrontEntry], other: optuna.Study) -> str:
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
        rows.append([name, f"{len(front)} of {len(shown.points)}", f"{volume:.4f}",
                     "; ".join(f"#{e.number} " + ", ".join(_value(e, n) for n in names) for e in front),
                     ", ".join(f"{knob} ({count}/{len(front)})" for knob, count in sorted(used.items())) or "none"])
    figure = compare_figure({summary.name: entries, theirs.name: their_entries}, names)
    note = (f'<p class="note">hypervolume against one reference point ({format_settings(reference)}); a knob is used '
            "when a front member sets it off its built-in default.</p>")
    return _figure_html(figure, "compare") + _table(
        ["study", "front of complete", "hypervolume", "front", "knobs the front uses"], rows, text_columns=[0, 3, 4]) + note


def render_report(
    study: optuna.Study, picks: Mapping[str, int] | None = None, storage_url: str | None = None,
    compare: optuna.Study | None = None, comparisons: PairedComparisons | None = None, min_recall: float | None = None,
) -> str:
    """The report of ``study`` as one HTML page (see ``write_report``)."""
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
        ("1. Front", _figure_html(front_figure(summary, entries, groups, chosen), "front")
         + (_front_table(entries, summary, records, StudyRecord.from_study(study).confirm) if entries else _empty_front(records))
         + _labels_section(study, entries)
         + _neighbour_table(entries, summary, records, comparisons)
         + _pruned_table(summary)),
        ("2. Hypervolume history", _figure_html(
            hypervolume_figure([p.number for p in summary.points], history, reference), "hypervolume")),
        ("3. Sweet spot: top_k", _figure_html(sweet_spot_figure(summary, on_front, names[:2]), "sweet-spot")),
        ("4. Parameter importances", _figure_html(importance_figure(study, summary), "importances")),
        ("5. Picked configurations by category", _picks_section(chosen, summary, records, study, comparisons)
         + _runner_ups(chosen, study, entries, summary, comparisons, min_recall)),
    ]
    if compare is not None:
        sections.append((f"6. Side by side with study '{compare.study_name}'", _compare_section(study, summary, entries, compare)))
    body = _header(summary, final_hv, storage_url) + _warnings(records) + "".join(
        f"<section><h2>{_esc(title)}</h2>{content}</section>" for title, content in sections
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>tuner study {_esc(summary.name)}</title><style>{STYLE}</style>"
        f'<script type="text/javascript">{get_plotlyjs()}</script></head>'
        f"<body>{body}</body></html>\n"
    )


def write_report(
    study: optuna.Study, path: Path, picks: Mapping[str, int] | None = None, storage_url: str | None = None,
    compare: optuna.Study | None = None, comparisons: PairedComparisons | None = None, min_recall: float | None = None,
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
    for its runner-up.
    """
    atomic_write_text(path, render_report(study, picks, storage_url, compare, comparisons, min_recall))
    return Path(path)
