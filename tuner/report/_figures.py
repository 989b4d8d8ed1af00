"""Report (front → **report**): the report's plotly figures; each takes plain data (see ``_study``) and returns a figure
or a note why it has none."""

from __future__ import annotations

import statistics
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import optuna
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tuner.objectives import CONTEXT_WORDS, DELTA, DELTA_CORRECT, EXPOSURE, RECALL
from tuner.pareto import FrontEntry, Point
from tuner.report._study import StudySummary
from tuner.front import PruneEvidence, TrialRecord, report_texts

MIN_IMPORTANCE_TRIALS = 10
"""Below this many complete trials PED-ANOVA's top quantile holds one or two trials and its importances are noise."""

FRONT_COLOR = "#1f5fbf"
DOMINATED_COLOR = "rgba(120, 120, 120, 0.35)"
PRUNED_COLOR = "#e07b00"
TIE_COLORS = ("#2ca02c", "#9467bd", "#d62728", "#17becf", "#bcbd22", "#8c564b")
ENGLISH = report_texts("en")
_OBJECTIVES = (RECALL, DELTA, DELTA_CORRECT, EXPOSURE, CONTEXT_WORDS)


def label(name: str, texts: Mapping[str, str] = ENGLISH) -> str:
    """An objective as the report names it in the language of ``texts`` (any other name as it is)."""
    return texts.get(name, name) if name in _OBJECTIVES else name


def _axis(name: str, direction: str, texts: Mapping[str, str]) -> str:
    return texts["axis"].format(name=label(name, texts), direction=texts[direction])


@dataclass(frozen=True)
class Figure:
    """A figure of the report, or ``None`` with ``note`` saying why it could not be drawn."""

    figure: go.Figure | None
    note: str = ""


def _layout(fig: go.Figure, title: str, height: int = 480) -> go.Figure:
    fig.update_layout(
        title=title, height=height, template="plotly_white", margin={"l": 60, "r": 30, "t": 60, "b": 50},
        legend={"orientation": "h", "y": -0.18},
    )
    return fig


def _error(point: Point, name: str) -> dict[str, object]:
    lo, hi = point.ci.get(name, (point.values[name], point.values[name]))
    value = point.values[name]
    # A percentile interval need not contain the mean; a negative bar length would be drawn upside down.
    return {"plus": max(hi - value, 0.0), "minus": max(value - lo, 0.0)}


def _bars(points: Sequence[Point], name: str) -> dict[str, object]:
    errors = [_error(p, name) for p in points]
    return {
        "type": "data", "symmetric": False, "thickness": 1, "width": 0,
        "array": [e["plus"] for e in errors], "arrayminus": [e["minus"] for e in errors],
    }


def hover(point: Point, directions: Mapping[str, str], texts: Mapping[str, str] = ENGLISH) -> str:
    lines = [texts["hover_trial"].format(number=point.number)]
    for name in directions:
        value = point.values[name]
        ci = point.ci.get(name)
        lines.append(f"{label(name, texts)} {value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))
    if point.context_words is not None and CONTEXT_WORDS not in directions:
        lines.append(f"{texts[CONTEXT_WORDS]} {point.context_words:.0f}")
    lines.extend(f"{key} = {value}" for key, value in sorted(point.params.items()))
    return "<br>".join(lines)


def _scatter(points: Sequence[Point], x: str, y: str, directions: Mapping[str, str], texts: Mapping[str, str],
             **style: object) -> go.Scatter:
    return go.Scatter(
        x=[p.values[x] for p in points], y=[p.values[y] for p in points],
        error_x=_bars(points, x), error_y=_bars(points, y),
        text=[hover(p, directions, texts) for p in points], hoverinfo="text", mode="markers", **style,
    )


def front_figure(
    summary: StudySummary, entries: Sequence[FrontEntry], groups: Sequence[tuple[int, ...]], picks: Mapping[str, int],
    texts: Mapping[str, str] = ENGLISH,
) -> Figure:
    """All complete trials on the first two objectives with 95% error bars: front trials bold (open when a
    trial ε-dominates them), dominated ones faded, ε-tie groups ringed in one colour each, pruned trials
    as crosses at their partial values, picks as labelled stars."""
    if not summary.points:
        return Figure(None, texts["fig_no_front"])
    x, y = list(summary.directions)[:2]
    on_front = {e.number for e in entries}
    fig = go.Figure()
    dominated = [p for p in summary.points if p.number not in on_front]
    fig.add_trace(_scatter(dominated, x, y, summary.directions, texts, name=texts["legend_dominated"],
                           marker={"color": DOMINATED_COLOR, "size": 7}))
    ordered = sorted(entries, key=lambda e: e.values[x])
    fig.add_trace(go.Scatter(x=[e.values[x] for e in ordered], y=[e.values[y] for e in ordered], mode="lines",
                             line={"color": FRONT_COLOR, "width": 1, "dash": "dot"}, hoverinfo="skip", showlegend=False))
    robust = [e for e in entries if not e.epsilon_dominated_by]
    within_noise = [e for e in entries if e.epsilon_dominated_by]
    fig.add_trace(_scatter(robust, x, y, summary.directions, texts, name=texts["legend_front"],
                           marker={"color": FRONT_COLOR, "size": 10}))
    if within_noise:
        fig.add_trace(_scatter(within_noise, x, y, summary.directions, texts, name=texts["legend_within_noise"],
                               marker={"color": FRONT_COLOR, "size": 10, "symbol": "circle-open", "line": {"width": 2}}))
    by_number = {e.number: e for e in entries}
    for index, group in enumerate(groups):
        members = [by_number[n] for n in group]
        fig.add_trace(go.Scatter(
            x=[m.values[x] for m in members], y=[m.values[y] for m in members], mode="markers",
            marker={"symbol": "circle-open", "size": 20, "color": TIE_COLORS[index % len(TIE_COLORS)], "line": {"width": 2}},
            name=texts["legend_tie"].format(group=index + 1, members=", ".join(f"#{n}" for n in group)), hoverinfo="skip",
        ))
    partial = [(t, TrialRecord.from_trial(t).partial_values or {}) for t in summary.pruned]
    drawn = [(t, v) for t, v in partial if x in v and y in v]
    if drawn:
        fig.add_trace(go.Scatter(
            x=[v[x] for _, v in drawn], y=[v[y] for _, v in drawn], mode="markers", name=texts["legend_pruned"],
            marker={"symbol": "x", "color": PRUNED_COLOR, "size": 8},
            text=[_pruned_hover(t.number, TrialRecord.from_trial(t).pruning, texts) for t, _ in drawn], hoverinfo="text",
        ))
    points = {p.number: p for p in summary.points}
    rules_of: dict[int, list[str]] = {}
    for rule, number in picks.items():
        rules_of.setdefault(number, []).append(rule)
    # each pick's star is labelled with its trial number only (the legend names the rules), above and below in turn
    # from left to right, so that picks close together do not print over each other
    ordered_picks = sorted(rules_of.items(), key=lambda item: (points[item[0]].values[x], points[item[0]].values[y]))
    for index, (number, rules) in enumerate(ordered_picks):
        fig.add_trace(go.Scatter(
            x=[points[number].values[x]], y=[points[number].values[y]], mode="markers+text",
            marker={"symbol": "star", "size": 16, "color": "#111111"}, text=[f"#{number}"],
            textposition="top center" if index % 2 == 0 else "bottom center", textfont={"size": 13},
            name=texts["legend_pick"].format(rules=", ".join(rules), number=number), hoverinfo="skip",
        ))
    fig.update_xaxes(title=_axis(x, summary.directions[x], texts))
    fig.update_yaxes(title=_axis(y, summary.directions[y], texts))
    return Figure(_layout(fig, texts["fig_front"].format(x=label(x, texts), y=label(y, texts)), height=560))


def _pruned_hover(number: int, pruning: PruneEvidence | None, texts: Mapping[str, str]) -> str:
    details = [] if pruning is None else [
        f"look {pruning.look}", f"cases_used {pruning.cases_used}", f"dominated_by {pruning.dominated_by}"
    ]
    return "<br>".join([texts["hover_pruned"].format(number=number), *details])


def hypervolume_figure(numbers: Sequence[int], history: Sequence[float], reference: Mapping[str, float],
                       texts: Mapping[str, str] = ENGLISH) -> Figure:
    if not history:
        return Figure(None, texts["fig_no_hypervolume"])
    fig = go.Figure(go.Scatter(x=list(numbers), y=list(history), mode="lines+markers", name=texts["legend_hypervolume"],
                               line={"color": FRONT_COLOR, "shape": "hv"}))
    fig.update_xaxes(title=texts["axis_trial"])
    fig.update_yaxes(title=texts["axis_hypervolume"])
    where = ", ".join(f"{label(k, texts)} {v:g}" for k, v in reference.items())
    return Figure(_layout(fig, texts["fig_hypervolume"].format(reference=where), height=380))


def sweet_spot_figure(summary: StudySummary, on_front: set[int], objectives: Sequence[str],
                      texts: Mapping[str, str] = ENGLISH) -> Figure:
    """Each objective against top_k: every trial with its interval, front trials bold, the median per top_k as a line."""
    points = [p for p in summary.points if "top_k" in p.params]
    if not points:
        return Figure(None, texts["fig_no_top_k"])
    fig = make_subplots(rows=1, cols=len(objectives),
                        subplot_titles=[texts["fig_sweet_panel"].format(name=label(n, texts)) for n in objectives])
    ks = sorted({p.params["top_k"] for p in points})
    for col, name in enumerate(objectives, start=1):
        for members, style, legend in (
            ([p for p in points if p.number not in on_front], {"color": DOMINATED_COLOR, "size": 7}, texts["legend_dominated"]),
            ([p for p in points if p.number in on_front], {"color": FRONT_COLOR, "size": 9}, texts["legend_front"]),
        ):
            fig.add_trace(go.Scatter(
                x=[p.params["top_k"] for p in members], y=[p.values[name] for p in members], error_y=_bars(members, name),
                mode="markers", marker=style, name=legend, legendgroup=legend, showlegend=col == 1,
                text=[hover(p, summary.directions, texts) for p in members], hoverinfo="text",
            ), row=1, col=col)
        medians = [statistics.median(p.values[name] for p in points if p.params["top_k"] == k) for k in ks]
        fig.add_trace(go.Scatter(x=ks, y=medians, mode="lines", line={"color": "#444444"}, name=texts["legend_median"],
                                 legendgroup="median", showlegend=col == 1), row=1, col=col)
        fig.update_xaxes(title="top_k", row=1, col=col)
        fig.update_yaxes(title=_axis(name, summary.directions[name], texts), row=1, col=col)
    return Figure(_layout(fig, texts["fig_sweet"]))


def importance_figure(study: optuna.Study, summary: StudySummary, texts: Mapping[str, str] = ENGLISH) -> Figure:
    """PED-ANOVA importance of each varied parameter for each objective (optuna.importance)."""
    if len(summary.points) < MIN_IMPORTANCE_TRIALS:
        return Figure(None, texts["fig_few_trials"].format(least=MIN_IMPORTANCE_TRIALS, n=len(summary.points)))
    varied = sorted({k for p in summary.points for k in p.params
                     if len({repr(q.params.get(k)) for q in summary.points}) > 1})
    if not varied:
        return Figure(None, texts["fig_nothing_varied"])
    names = list(summary.directions)
    # Parameter names label the bars, so each panel needs room on its left.
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[label(n, texts) for n in names],
                        horizontal_spacing=0.16)
    for index, name in enumerate(names):
        # PED-ANOVA ranks parameters by how they lower the target, so a maximized objective is negated.
        sign = -1.0 if summary.directions[name] == "maximize" else 1.0

        def target(trial: optuna.trial.FrozenTrial, i: int = index, s: float = sign) -> float:
            return s * float(trial.values[i])

        with warnings.catch_warnings():
            # PED-ANOVA warns (target direction, few trials per regime, equal quantiles) on stderr mid-run; the figure's
            # caption and MIN_IMPORTANCE_TRIALS already say how far its bars can be trusted
            warnings.simplefilter("ignore")
            try:
                importances = optuna.importance.get_param_importances(study, params=varied, target=target)
            except (RuntimeError, ValueError) as exc:
                return Figure(None, texts["fig_importance_failed"].format(name=label(name, texts), error=exc))
        ranked = sorted(importances.items(), key=lambda item: item[1])
        fig.add_trace(go.Bar(x=[v for _, v in ranked], y=[k for k, _ in ranked], orientation="h",
                             marker={"color": FRONT_COLOR}, showlegend=False), row=1, col=index + 1)
        fig.update_xaxes(title=texts["axis_importance"], range=[0, 1], row=1, col=index + 1)
    _layout(fig, texts["fig_importances"], height=360)
    fig.update_layout(margin={"l": 130})
    return Figure(fig)


COMPARE_COLORS = (FRONT_COLOR, PRUNED_COLOR)


def compare_figure(fronts: Mapping[str, Sequence[FrontEntry]], names: Sequence[str],
                   texts: Mapping[str, str] = ENGLISH) -> Figure:
    """The fronts of two studies (name → front) on the first two objectives ``names``, with 95% error bars."""
    if not any(fronts.values()):
        return Figure(None, texts["fig_no_compare"])
    x, y = names[0], names[1]
    fig = go.Figure()
    for (study, entries), color in zip(fronts.items(), COMPARE_COLORS):
        ordered = sorted(entries, key=lambda e: e.values[x])
        fig.add_trace(go.Scatter(
            x=[e.values[x] for e in ordered], y=[e.values[y] for e in ordered], mode="lines+markers", name=study,
            line={"shape": "hv", "color": color}, marker={"color": color, "size": 9},
            error_x=_bars(ordered, x), error_y=_bars(ordered, y), text=[f"#{e.number}" for e in ordered],
            hovertemplate="%{text}: %{x:.3f}, %{y:.3f}<extra>" + study + "</extra>",
        ))
    fig.update_xaxes(title=label(x, texts))
    fig.update_yaxes(title=label(y, texts))
    return Figure(_layout(fig, texts["fig_compare"]))
