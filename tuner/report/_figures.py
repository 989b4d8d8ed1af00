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
from tuner.front import PruneEvidence, TrialRecord

MIN_IMPORTANCE_TRIALS = 10
"""Below this many complete trials PED-ANOVA's top quantile holds one or two trials and its importances are noise."""

LABELS = {RECALL: "recall@k", DELTA: "v3 Δfaithful", DELTA_CORRECT: "v3 Δcorrect", EXPOSURE: "conflict exposure",
          CONTEXT_WORDS: "context words"}
FRONT_COLOR = "#1f5fbf"
DOMINATED_COLOR = "rgba(120, 120, 120, 0.35)"
PRUNED_COLOR = "#e07b00"
TIE_COLORS = ("#2ca02c", "#9467bd", "#d62728", "#17becf", "#bcbd22", "#8c564b")


def label(name: str) -> str:
    return LABELS.get(name, name)


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


def hover(point: Point, directions: Mapping[str, str]) -> str:
    lines = [f"trial #{point.number}"]
    for name in directions:
        value = point.values[name]
        ci = point.ci.get(name)
        lines.append(f"{label(name)} {value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))
    if point.context_words is not None and CONTEXT_WORDS not in directions:
        lines.append(f"context words {point.context_words:.0f}")
    lines.extend(f"{key} = {value}" for key, value in sorted(point.params.items()))
    return "<br>".join(lines)


def _scatter(points: Sequence[Point], x: str, y: str, directions: Mapping[str, str], **style: object) -> go.Scatter:
    return go.Scatter(
        x=[p.values[x] for p in points], y=[p.values[y] for p in points],
        error_x=_bars(points, x), error_y=_bars(points, y),
        text=[hover(p, directions) for p in points], hoverinfo="text", mode="markers", **style,
    )


def front_figure(
    summary: StudySummary, entries: Sequence[FrontEntry], groups: Sequence[tuple[int, ...]], picks: Mapping[str, int]
) -> Figure:
    """All complete trials on the first two objectives with 95% error bars: front trials bold (open when a
    trial ε-dominates them), dominated ones faded, ε-tie groups ringed in one colour each, pruned trials
    as crosses at their partial values, picks as labelled stars."""
    if not summary.points:
        return Figure(None, "No complete trial yet: there is no front to draw.")
    x, y = list(summary.directions)[:2]
    on_front = {e.number for e in entries}
    fig = go.Figure()
    dominated = [p for p in summary.points if p.number not in on_front]
    fig.add_trace(_scatter(dominated, x, y, summary.directions, name="dominated",
                           marker={"color": DOMINATED_COLOR, "size": 7}))
    ordered = sorted(entries, key=lambda e: e.values[x])
    fig.add_trace(go.Scatter(x=[e.values[x] for e in ordered], y=[e.values[y] for e in ordered], mode="lines",
                             line={"color": FRONT_COLOR, "width": 1, "dash": "dot"}, hoverinfo="skip", showlegend=False))
    robust = [e for e in entries if not e.epsilon_dominated_by]
    within_noise = [e for e in entries if e.epsilon_dominated_by]
    fig.add_trace(_scatter(robust, x, y, summary.directions, name="front",
                           marker={"color": FRONT_COLOR, "size": 10}))
    if within_noise:
        fig.add_trace(_scatter(within_noise, x, y, summary.directions, name="front, edge within noise (ε-dominated)",
                               marker={"color": FRONT_COLOR, "size": 10, "symbol": "circle-open", "line": {"width": 2}}))
    by_number = {e.number: e for e in entries}
    for index, group in enumerate(groups):
        members = [by_number[n] for n in group]
        fig.add_trace(go.Scatter(
            x=[m.values[x] for m in members], y=[m.values[y] for m in members], mode="markers",
            marker={"symbol": "circle-open", "size": 20, "color": TIE_COLORS[index % len(TIE_COLORS)], "line": {"width": 2}},
            name=f"ε-tie T{index + 1}: " + ", ".join(f"#{n}" for n in group), hoverinfo="skip",
        ))
    partial = [(t, TrialRecord.from_trial(t).partial_values or {}) for t in summary.pruned]
    drawn = [(t, v) for t, v in partial if x in v and y in v]
    if drawn:
        fig.add_trace(go.Scatter(
            x=[v[x] for _, v in drawn], y=[v[y] for _, v in drawn], mode="markers", name="pruned (partial values)",
            marker={"symbol": "x", "color": PRUNED_COLOR, "size": 8},
            text=[_pruned_hover(t.number, TrialRecord.from_trial(t).pruning) for t, _ in drawn], hoverinfo="text",
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
            name=f"pick: {', '.join(rules)} #{number}", hoverinfo="skip",
        ))
    fig.update_xaxes(title=f"{label(x)} ({summary.directions[x]})")
    fig.update_yaxes(title=f"{label(y)} ({summary.directions[y]})")
    return Figure(_layout(fig, f"Front: {label(x)} vs {label(y)} (error bars: 95% intervals)", height=560))


def _pruned_hover(number: int, pruning: PruneEvidence | None) -> str:
    details = [] if pruning is None else [
        f"look {pruning.look}", f"cases_used {pruning.cases_used}", f"dominated_by {pruning.dominated_by}"
    ]
    return "<br>".join([f"trial #{number} (pruned)", *details])


def hypervolume_figure(numbers: Sequence[int], history: Sequence[float], reference: Mapping[str, float]) -> Figure:
    if not history:
        return Figure(None, "No complete trial yet: the hypervolume is empty.")
    fig = go.Figure(go.Scatter(x=list(numbers), y=list(history), mode="lines+markers", name="hypervolume",
                               line={"color": FRONT_COLOR, "shape": "hv"}))
    fig.update_xaxes(title="trial number (complete trials)")
    fig.update_yaxes(title="hypervolume")
    where = ", ".join(f"{label(k)} {v:g}" for k, v in reference.items())
    return Figure(_layout(fig, f"Hypervolume after each complete trial (reference: {where})", height=380))


def sweet_spot_figure(summary: StudySummary, on_front: set[int], objectives: Sequence[str]) -> Figure:
    """Each objective against top_k: every trial with its interval, front trials bold, the median per top_k as a line."""
    points = [p for p in summary.points if "top_k" in p.params]
    if not points:
        return Figure(None, "top_k was not searched in this study, so there is no top_k sweep to show.")
    fig = make_subplots(rows=1, cols=len(objectives), subplot_titles=[f"{label(n)} by top_k" for n in objectives])
    ks = sorted({p.params["top_k"] for p in points})
    for col, name in enumerate(objectives, start=1):
        for members, style, legend in (
            ([p for p in points if p.number not in on_front], {"color": DOMINATED_COLOR, "size": 7}, "dominated"),
            ([p for p in points if p.number in on_front], {"color": FRONT_COLOR, "size": 9}, "front"),
        ):
            fig.add_trace(go.Scatter(
                x=[p.params["top_k"] for p in members], y=[p.values[name] for p in members], error_y=_bars(members, name),
                mode="markers", marker=style, name=legend, legendgroup=legend, showlegend=col == 1,
                text=[hover(p, summary.directions) for p in members], hoverinfo="text",
            ), row=1, col=col)
        medians = [statistics.median(p.values[name] for p in points if p.params["top_k"] == k) for k in ks]
        fig.add_trace(go.Scatter(x=ks, y=medians, mode="lines", line={"color": "#444444"}, name="median per top_k",
                                 legendgroup="median", showlegend=col == 1), row=1, col=col)
        fig.update_xaxes(title="top_k", row=1, col=col)
        fig.update_yaxes(title=f"{label(name)} ({summary.directions[name]})", row=1, col=col)
    return Figure(_layout(fig, "Sweet spot: each objective against top_k (other settings vary across trials)"))


def importance_figure(study: optuna.Study, summary: StudySummary) -> Figure:
    """PED-ANOVA importance of each varied parameter for each objective (optuna.importance)."""
    if len(summary.points) < MIN_IMPORTANCE_TRIALS:
        return Figure(None, f"Parameter importances need at least {MIN_IMPORTANCE_TRIALS} complete trials; "
                            f"this study has {len(summary.points)}.")
    varied = sorted({k for p in summary.points for k in p.params
                     if len({repr(q.params.get(k)) for q in summary.points}) > 1})
    if not varied:
        return Figure(None, "No parameter varied across the complete trials, so there is nothing to rank.")
    names = list(summary.directions)
    # Parameter names label the bars, so each panel needs room on its left.
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=[label(n) for n in names], horizontal_spacing=0.16)
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
                return Figure(None, f"optuna could not compute parameter importances for {label(name)}: {exc}")
        ranked = sorted(importances.items(), key=lambda item: item[1])
        fig.add_trace(go.Bar(x=[v for _, v in ranked], y=[k for k, _ in ranked], orientation="h",
                             marker={"color": FRONT_COLOR}, showlegend=False), row=1, col=index + 1)
        fig.update_xaxes(title="importance (sums to 1)", range=[0, 1], row=1, col=index + 1)
    _layout(fig, "Parameter importances per objective (PED-ANOVA)", height=360)
    fig.update_layout(margin={"l": 130})
    return Figure(fig)


COMPARE_COLORS = (FRONT_COLOR, PRUNED_COLOR)


def compare_figure(fronts: Mapping[str, Sequence[FrontEntry]], names: Sequence[str]) -> Figure:
    """The fronts of two studies (name → front) on the first two objectives ``names``, with 95% error bars."""
    if not any(fronts.values()):
        return Figure(None, "neither study has a complete trial yet")
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
    fig.update_xaxes(title=label(x))
    fig.update_yaxes(title=label(y))
    return Figure(_layout(fig, "Fronts side by side"))
