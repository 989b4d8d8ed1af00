"""What a reader of the report trips on (issue 30 §5): the noise floor in two significant digits, pick labels that do
not print over each other on the front plot, and an empty front that says why."""

from __future__ import annotations

from tests.report_tests.test_report import small_study
from tuner.report import render_report, summarize_study
from tuner.report._figures import front_figure
from tuner.pareto import front_entries, tie_groups


def test_the_noise_floor_is_shown_in_two_significant_digits() -> None:
    study = small_study([[0.6, 0.1], [0.8, 0.2]])
    study.set_user_attr("noise_floor", {"recall_at_k": 0.0155803, "v3_delta_faithful": 0.00123456})
    assert "recall@k ±0.016, v3 Δfaithful ±0.0012" in render_report(study)


def test_pick_labels_are_the_trial_numbers_above_and_below_in_turn() -> None:
    study = small_study([[0.6, 0.10], [0.61, 0.11], [0.8, 0.2]])
    summary = summarize_study(study)
    entries = front_entries(summary.points, summary.directions, summary.noise_floor)
    figure = front_figure(summary, entries, tie_groups(entries, summary.directions, summary.noise_floor),
                          {"knee": 1, "min-delta": 0, "cheapest": 0, "max-recall": 2}).figure
    assert figure is not None
    stars = [trace for trace in figure.data if (trace.name or "").startswith("pick: ")]
    assert [(t.name, t.text[0], t.textposition) for t in stars] == [
        ("pick: min-delta, cheapest #0", "#0", "top center"), ("pick: knee #1", "#1", "bottom center"),
        ("pick: max-recall #2", "#2", "top center")]


def test_an_empty_front_says_why() -> None:
    assert "Nothing is on the front: no trial has completed yet. Nothing was exported." in render_report(small_study([]))


def test_tables_wrap_their_headers_and_scroll_inside_the_page_rather_than_being_cut() -> None:
    page = render_report(small_study([[0.6, 0.1], [0.8, 0.2]]))
    assert "td.text, th { white-space: normal; } .wide { overflow-x: auto; max-width: 100%; }" in page
    assert page.count('<div class="wide"><table>') == page.count("<table>") > 0
