from __future__ import annotations

import re
from pathlib import Path

import optuna
import pytest
from optuna.distributions import IntDistribution
from optuna.trial import TrialState, create_trial

from tests.report_tests.offline import outside_references
from tests.report_tests.synthetic import NOISE_FLOOR
from tuner.errors import UserError
from tuner.report import render_report, summarize_study, write_report
from tuner.report._figures import MIN_IMPORTANCE_TRIALS
from tuner.front import study_summary


def small_study(values: list[list[float]], objectives: list[str] | None = None) -> optuna.Study:
    directions = ["maximize", "minimize", "minimize"][: len(values[0]) if values else 2]
    study = optuna.create_study(study_name="small", directions=directions)
    study.set_user_attr("objectives", objectives or ["recall_at_k", "v3_delta_faithful", "context_words"][: len(directions)])
    for number, vals in enumerate(values):
        study.add_trial(create_trial(
            values=vals, params={"top_k": 3 + number}, distributions={"top_k": IntDistribution(1, 20)},
            user_attrs={"context_words": 100.0 * (number + 1), "n": 8, "n_total": 10},
        ))
    return study


def test_report_is_one_offline_file_with_plotly_inlined(report_path: Path) -> None:
    assert sorted(p.name for p in report_path.parent.iterdir()) == ["synthetic.html"]
    page = report_path.read_text("utf-8")
    assert outside_references(page) == []
    assert len(page) > 1_000_000 and "Plotly.newPlot" in page
    for figure in ("front", "hypervolume", "sweet-spot", "importances"):
        assert f'<div id="{figure}" class="plotly-graph-div"' in page


def test_header_counts_trials_calls_and_noise_floor(report_path: Path, study_folder: Path) -> None:
    page = report_path.read_text("utf-8")
    assert "24 complete, 4 pruned, 1 failed" in page
    assert "1,520 generator calls, 6,080 judge calls, 2,304,000 tokens" in page
    assert f"recall@k ±{NOISE_FLOOR['recall_at_k']:g}, v3 Δfaithful ±{NOISE_FLOOR['v3_delta_faithful']:g}" in page
    assert f"optuna-dashboard sqlite:///{study_folder / 'study.db'}" in page
    assert "4 pruned trial(s)" in page and "<td>0.001</td>" in page  # the pruning p-value of each


def test_summary_reads_the_trial_contract(synthetic_study: optuna.Study) -> None:
    summary = summarize_study(synthetic_study)
    assert summary.directions == {"recall_at_k": "maximize", "v3_delta_faithful": "minimize"}
    assert [p.number for p in summary.points] == list(range(24))
    assert [t.number for t in summary.pruned] == [24, 25, 26, 27]
    assert summary.counts["fail"] == 1
    first = summary.points[0]
    assert first.ci["recall_at_k"][0] < first.values["recall_at_k"] <= first.ci["recall_at_k"][1]
    assert first.context_words is not None and first.params["retriever"] in {"bm25", "dense", "hybrid"}


def test_default_picks_show_knee_and_cheapest_by_category(report_path: Path) -> None:
    page = report_path.read_text("utf-8")
    # a row per picked trial, naming the rules that picked it: each rule once, on one row
    rules = [cell.split(", ") for cell in re.findall(r"<td class=\"text\">([a-z, -]+)</td><td>#\d+</td>", page)]
    assert sorted(rule for row in rules for rule in row if rule in {"knee", "cheapest"}) == ["cheapest", "knee"]
    for category in ("pricing", "policy", "product"):
        assert f'<td class="text">{category}</td>' in page


def test_explicit_picks_and_their_errors(synthetic_study: optuna.Study) -> None:
    page = render_report(synthetic_study, picks={"min-delta": 3})
    assert re.search(r"<td class=\"text\">min-delta</td><td>#3</td>", page)
    assert "knee</td>" not in page
    with pytest.raises(UserError, match="pick 'knee' names trial 25, which is not a complete trial"):
        render_report(synthetic_study, picks={"knee": 25})


def test_few_trials_give_a_note_instead_of_importances() -> None:
    page = render_report(small_study([[0.6, 0.1], [0.8, 0.2]]))
    assert f"Parameter importances need at least {MIN_IMPORTANCE_TRIALS} complete trials; this study has 2." in page
    assert 'id="front"' in page and 'id="importances"' not in page


def test_a_study_without_complete_trials_still_reports() -> None:
    study = small_study([])
    study.add_trial(create_trial(state=TrialState.PRUNED, params={}, distributions={}))
    page = render_report(study)
    assert "0 complete, 1 pruned, 0 failed" in page
    assert "No complete trial yet" in page and "No configuration picked." in page


def test_header_counts_repeated_configurations_as_the_run_does() -> None:
    study = small_study([[0.6, 0.1], [0.8, 0.2]])
    evidence = {"look": 1, "cases_used": 4, "dominated_by": 0, "p_value": 0.01, "differences": {"recall_at_k": 0.2}}
    study.add_trial(create_trial(state=TrialState.PRUNED, params={}, distributions={}, user_attrs={"pruning": evidence}))
    for _ in range(2):
        study.add_trial(create_trial(state=TrialState.PRUNED, params={}, distributions={}, user_attrs={"duplicate_of": 0}))
    page = render_report(study)
    assert "2 complete, 1 pruned, 2 repeated configurations not evaluated again, 0 failed" in page
    assert "1 pruned trial(s)" in page
    run = study_summary(study)
    assert (run.n_pruned - run.n_duplicates, run.n_duplicates) == (1, 2)


def test_three_objective_study(tmp_path: Path) -> None:
    values = [[0.6 + 0.03 * i, 0.05 + 0.02 * i, 100.0 * (i + 1)] for i in range(MIN_IMPORTANCE_TRIALS)]
    path = write_report(small_study(values), tmp_path / "three.html")
    page = path.read_text("utf-8")
    assert "context words (minimize)" in page and 'id="importances"' in page


def test_a_study_not_made_by_tuner_is_a_user_error() -> None:
    study = optuna.create_study(study_name="foreign", directions=["maximize", "minimize"])
    with pytest.raises(UserError, match="study 'foreign': user attr 'objectives'"):
        render_report(study)


def test_undefined_interval_bounds_are_left_out() -> None:
    study = small_study([[0.6, 0.1]])
    study.add_trial(create_trial(
        values=[0.7, 0.2], params={"top_k": 9}, distributions={"top_k": IntDistribution(1, 20)},
        user_attrs={"ci": {"recall_at_k": None, "v3_delta_faithful": [0.1, None]}, "context_words": 50.0},
    ))
    assert summarize_study(study).points[1].ci == {}
    assert "#1" in render_report(study)


def test_compare_shows_both_fronts_their_hypervolumes_and_the_knobs_each_front_uses(tmp_path: Path) -> None:
    from tests.report_tests.synthetic import build_study, sqlite_storage
    from tuner.pareto import default_reference, front_entries, hypervolume
    from tuner.report import render_report, summarize_study
    from tuner.report._html import knobs_used

    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ours = build_study(sqlite_storage(tmp_path / "ours"), seed=7)
    theirs = build_study(sqlite_storage(tmp_path / "theirs"), seed=11)
    page = render_report(ours, compare=theirs)
    assert "6. Side by side with study &#x27;synthetic&#x27;" in page and 'id="compare"' in page
    a, b = summarize_study(ours), summarize_study(theirs)
    reference = default_reference([*a.points, *b.points], a.directions)
    for summary in (a, b):
        assert f"{hypervolume(summary.points, summary.directions, reference):.4f}" in page
    front = front_entries(a.points, a.directions, a.noise_floor)
    used = knobs_used(front)
    assert used["top_k"] == sum(e.params["top_k"] != 5 for e in front)
    assert used["retriever"] == sum(e.params["retriever"] != "hybrid" for e in front)
    assert "chunk_unit" not in used  # not searched
    assert f"top_k ({used['top_k']}/{len(front)})" in page
    assert "6. Side by side" not in render_report(ours)


def test_settings_are_read_in_a_line_under_each_row_not_a_column_off_the_page(report_path: Path) -> None:
    """Issue 38 §2: at 1300 px the front and picks tables overflowed the 1,180 px column and the params column (what is
    deployed) was off-screen; each row's settings now get a row of their own across the table."""
    page = report_path.read_text("utf-8")
    front = page[page.index("<table>"):page.index("</table>")]
    assert "<th>params</th>" not in front and '<th class="text">params</th>' not in front
    assert re.search(r'<tr class="settings"><td colspan="\d+">settings: chunk_overlap=[\d.]+ · chunk_size=\d+ · ', front)
    assert front.count('<tr class="settings">') == front.count("<tr>") - 1  # one under every entry (the header row aside)
    assert "tr.settings td" in page


def _picks_by_category(page: str) -> tuple[list[str], dict[str, list[str]]]:
    """The header and, per category, the cells of the report's table of the picks by category."""
    section = page.split("5. Picked configurations by category", 1)[1]
    table = section[section.index('<th class="text">category</th>'):]
    table = table[: table.index("</table>")]
    header = re.findall(r"<th[^>]*>(.*?)</th>", table)
    rows = {cells[0]: cells[1:] for row in re.findall(r"<tr>(.*?)</tr>", table)
            if (cells := re.findall(r"<td[^>]*>(.*?)</td>", row))}
    return header, rows


def _one_trial(objectives: list[str], values: list[float], by_category: dict[str, dict[str, float | None]]) -> optuna.Study:
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.set_user_attr("objectives", objectives)
    study.add_trial(create_trial(values=values, params={"top_k": 3}, distributions={"top_k": IntDistribution(1, 20)},
                                 user_attrs={"n": 6, "n_total": 6, "by_category": by_category}))
    return study


def test_picks_by_category_show_exposure_beside_delta_and_drop_a_column_no_pick_has() -> None:
    by_category: dict[str, dict[str, float | None]] = {
        "policy": {"recall_at_k": 0.9, "conflict_exposure": 0.25, "v3_delta_faithful": 0.1, "n": 4},
        "pricing": {"recall_at_k": 0.8, "conflict_exposure": 0.5, "v3_delta_faithful": None, "n": 2},
    }
    exposure = _one_trial(["recall_at_k", "conflict_exposure"], [0.85, 0.333], by_category)
    header, rows = _picks_by_category(render_report(exposure, picks={"knee": 0}))
    assert header == ["category", "knee #0: recall@k", "knee #0: conflict exposure",
                      "knee #0: v3 Δfaithful (measured)", "knee #0: n"]
    assert rows == {"policy": ["0.900", "0.250", "0.100", "4"], "pricing": ["0.800", "0.500", "—", "2"]}
    delta = _one_trial(["recall_at_k", "v3_delta_faithful"], [0.85, 0.1], by_category)
    header, rows = _picks_by_category(render_report(delta, picks={"knee": 0}))
    assert header == ["category", "knee #0: recall@k", "knee #0: v3 Δfaithful", "knee #0: conflict exposure", "knee #0: n"]
    assert rows["policy"] == ["0.900", "0.100", "0.250", "4"]
    # trials recorded before they kept exposure per category: no column of dashes
    for scores in by_category.values():
        del scores["conflict_exposure"]
    header, rows = _picks_by_category(render_report(_one_trial(["recall_at_k", "conflict_exposure"], [0.85, 0.333], by_category), picks={"knee": 0}))
    assert header == ["category", "knee #0: recall@k", "knee #0: v3 Δfaithful (measured)", "knee #0: n"]
    assert rows["pricing"] == ["0.800", "—", "2"]


def test_picks_by_category_show_a_trial_two_rules_picked_once() -> None:
    by_category: dict[str, dict[str, float | None]] = {"policy": {"recall_at_k": 0.9, "v3_delta_faithful": 0.1, "n": 4}}
    study = _one_trial(["recall_at_k", "v3_delta_faithful"], [0.85, 0.1], by_category)
    page = render_report(study, picks={"knee": 0, "cheapest": 0})
    header, rows = _picks_by_category(page)
    assert header == ["category", "knee, cheapest #0: recall@k", "knee, cheapest #0: v3 Δfaithful", "knee, cheapest #0: n"]
    assert rows == {"policy": ["0.900", "0.100", "4"]}
    # and one row in the picks' overview, its settings once
    assert re.findall(r"<td class=\"text\">([a-z, -]+)</td><td>#0</td>", page) == ["knee, cheapest"]
    assert page.split("5. Picked configurations by category", 1)[1].count("settings: top_k=3") == 1


def test_rules_that_give_the_same_pick_and_runner_up_share_one_row() -> None:
    # a front of two: for knee and min-delta alike, the pick #0's runner-up is #1
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    for values, cases, f3 in (([1.0, 0.25], [1.0] * 4, [1.0, 1.0, 1.0, 0.0]), ([0.75, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0] * 4)):
        study.add_trial(create_trial(values=values, params={"top_k": 3}, distributions={"top_k": IntDistribution(1, 20)},
                                     user_attrs={"n": 4, "n_total": 4, "recall_cases": cases, "f0": [1.0] * 4, "f3": f3}))
    page = render_report(study, picks={"knee": 0, "min-delta": 0}, min_recall=0.5)
    section = page.split("Each pick against its runner-up", 1)[1]
    table = section[: section.index("</table>")]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row)[:2] for row in re.findall(r"<tr>(.*?)</tr>", table)]
    assert [row for row in rows if row] == [["knee, min-delta", "#0 − #1"]]
