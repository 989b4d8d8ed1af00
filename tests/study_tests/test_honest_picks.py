"""Honest picks (issue 14 §6, paired since issue 29 §2): a picked trial whose Δ cannot be told from zero or from a front
neighbour's says so, with the paired interval on the cases both scored and n/N when that is not every case. Figures by
hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from optuna.distributions import IntDistribution

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.report import render_report
from tuner.front import pick_notes
from tuner.report import trial_document

# trial 0: recall 0.9, every case scored; Δ = (1 − mean[1, 1, 1, 0.8]) / 1 = 0.05
# trial 1: recall 0.8, case 4 unscored; Δ over its 3 cases = (1 − mean[1, 1, 0.94]) / 1 = 0.02
# on the 3 cases both scored: trial 0's Δ = (1 − 1) / 1 = 0.000, trial 1's 0.020: paired difference −0.020
TRIALS: list[dict[str, Any]] = [
    {"values": [0.9, 0.05], "f0": [1.0, 1.0, 1.0, 1.0], "f3": [1.0, 1.0, 1.0, 0.8], "n": 4},
    {"values": [0.8, 0.02], "f0": [1.0, 1.0, 1.0, None], "f3": [1.0, 1.0, 0.94, None], "n": 3},
]
# trial 0 loses 0.1 on every case (Δ 0.1), trial 1 nothing (Δ 0): a paired difference of 0.1 with no case spread
APART: list[dict[str, Any]] = [
    {"values": [0.9, 0.1], "f0": [1.0, 1.0, 1.0, 1.0], "f3": [0.9, 0.9, 0.9, 0.9], "n": 4},
    {"values": [0.8, 0.0], "f0": [1.0, 1.0, 1.0, None], "f3": [1.0, 1.0, 1.0, None], "n": 3},
]


def _study(eps: float, trials: list[dict[str, Any]] = TRIALS) -> optuna.Study:
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    study.set_user_attr("noise_floor", {"recall_at_k": 0.0, "v3_delta_faithful": eps})
    for number, trial in enumerate(trials):
        study.add_trial(optuna.trial.create_trial(
            values=trial["values"], params={"top_k": number + 1}, distributions={"top_k": IntDistribution(1, 4)},
            user_attrs={"f0": trial["f0"], "f3": trial["f3"], "n": trial["n"], "n_total": 4, "settings": {"top_k": number + 1}},
        ))
    return study


def test_a_pick_that_cannot_be_told_from_zero_or_its_neighbour_says_so_with_paired_intervals() -> None:
    # trial 0 alone: per-case losses (0, 0, 0, 0.2), bootstrap sd of their mean √(0.0075/4) = 0.0433, so 0.05 ± 0.085
    # holds 0; against #1 on 3 cases: per-case differences (0, 0, −0.06), sd √(0.0008/3) = 0.0163, −0.020 ± 0.032
    study = _study(0.08)
    notes = pick_notes(study, 0)
    assert len(notes) == 2
    # the figure's own interval is printed beside it in the tables; the note prints no second one
    assert notes[0] == ("trial #0: v3_delta_faithful on the tuning cases (0.050) cannot be told from no effect: its 95% "
                        "interval with case sampling and run-to-run noise holds 0")
    assert notes[1].startswith("trial #0: v3_delta_faithful on the tuning cases cannot be told from front neighbour #1's: "
                               "paired difference -0.020 [-0.05")
    assert notes[1].endswith("on the 3/4 cases scored in both")
    # the export's provenance and the report carry the same notes
    document = trial_document(study, 0, "knee", "sqlite:///study.db")
    assert document["provenance"]["notes"] == notes
    page = render_report(study, picks={"knee": 0})
    assert "front neighbour #1&#x27;s: paired difference -0.020" in page


def test_a_consistent_difference_is_told_apart_however_wide_the_single_configuration_floor() -> None:
    # the floor of one configuration (0.5) would tie everything; paired, a 0.1 loss on every case is exact
    study = _study(0.5, APART)
    assert pick_notes(study, 0) == [
        "trial #0 vs front neighbour #1: v3_delta_faithful on the tuning cases paired difference +0.100 "
        "[+0.100, +0.100] on the 3/4 cases scored in both",
    ]


@pytest.mark.parametrize("stored", [{"run_sd": {"v3_delta_faithful": 0.3 / (1.96 * 2 ** 0.5)}},
                                    {"pruning_margin": {"v3_delta_faithful": 0.3}}])
def test_run_to_run_noise_of_both_trials_widens_the_paired_interval(stored: dict[str, Any]) -> None:
    # run_sd 0.1082 per trial, so two trials' run terms add up to se = √2·run_sd and z·se = 0.3: 0.1 ± 0.3 holds 0;
    # alone, trial 0's 0.1 ± z·run_sd = 0.1 ± 0.212 holds 0 too. A study written before run_sd was recorded kept the
    # margin z·√2·run_sd = 0.3 only, read back at z 1.96: the same notes
    study = _study(0.0, APART)
    for key, value in stored.items():
        study.set_user_attr(key, value)
    notes = pick_notes(study, 0)
    assert notes == [
        "trial #0: v3_delta_faithful on the tuning cases (0.100) cannot be told from no effect: its 95% interval with "
        "case sampling and run-to-run noise holds 0",
        "trial #0: v3_delta_faithful on the tuning cases cannot be told from front neighbour #1's: paired difference "
        "+0.100 [-0.200, +0.400] on the 3/4 cases scored in both",
    ]


def test_run_closing_lines_json_and_export_carry_the_notes(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space = {"top_k": {"type": "int", "low": 1, "high": 3}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    study_file = write_study(tmp_path, tiny_dataset_dir, budget={"trials": 2}, enqueue=[{"top_k": 2, "retriever": "bm25"}],
                             noise_floor={"recall_at_k": 0.0, "v3_delta_faithful": 1.0})
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    assert main(["run", str(study_file), "--no-report", "--json"]) == 0
    captured = capsys.readouterr()
    notes = json.loads(captured.out)["pick"]["notes"]
    # a pruning margin of 1 (run-to-run noise) holds every Δ: the pick cannot be told from zero, and the run says so
    assert notes and "cannot be told from no effect" in notes[0]
    assert f"note: {notes[0]}" in captured.err
    exported = yaml.safe_load((tmp_path / "out" / "tiny" / "config.yaml").read_text())
    assert exported["provenance"]["notes"] == notes


def _confirmed(study: optuna.Study, held_out: dict[int, dict[str, Any]]) -> optuna.Study:
    """``study`` with 4 held-out cases and, for each trial in ``held_out``, its confirmation: figures and per-case
    scores (``per_case: False`` leaves the scores out, as a study confirmed before they were kept)."""
    study.set_user_attr("confirm_cases", ["h1", "h2", "h3", "h4"])
    confirm = {}
    for number, trial in held_out.items():
        scores = {"recall_cases": [1.0] * 4, "f0": trial["f0"], "f3": trial["f3"]} if trial.get("per_case", True) else {}
        confirm[str(number)] = {"values": trial["values"], "ci": {}, "n": 4, "n_total": 4, **scores}
    study.set_user_attr("confirm", confirm)
    return study


def test_with_a_confirmation_split_the_notes_compare_the_held_out_figures_and_say_so() -> None:
    # tuning: trial 0 loses 0.1 on every case, #1 nothing: told apart, a note only for the 3/4 subset. Held out: trial 0
    # loses nothing (Δ 0, no spread: [0, 0] holds zero), #1 loses 0.2 on one case of 4 (Δ 0.05): per-case differences
    # (0, 0, 0, −0.2), bootstrap sd of their mean √(0.0075/4) = 0.0433, so −0.050 ± 0.085 holds 0
    held_out = {0: {"values": {"recall_at_k": 0.9, "v3_delta_faithful": 0.0}, "f0": [1.0] * 4, "f3": [1.0] * 4},
                1: {"values": {"recall_at_k": 0.8, "v3_delta_faithful": 0.05}, "f0": [1.0] * 4,
                    "f3": [1.0, 1.0, 1.0, 0.8]}}
    notes = pick_notes(_confirmed(_study(0.5, APART), held_out), 0)
    assert len(notes) == 2
    assert notes[0] == ("trial #0: v3_delta_faithful on the 4 held-out cases (0.000) cannot be told from no effect: its "
                        "95% interval with case sampling and run-to-run noise holds 0")
    assert notes[1].startswith("trial #0: v3_delta_faithful on the 4 held-out cases cannot be told from front neighbour "
                               "#1's: paired difference -0.050 [-0.1")
    assert "scored in both" not in notes[1]  # every held-out case was scored by both
    # a study confirmed before the per-case scores were kept: the tuning figures, said as such
    old = {number: {**trial, "per_case": False} for number, trial in held_out.items()}
    assert pick_notes(_confirmed(_study(0.5, APART), old), 0) == [
        "trial #0 vs front neighbour #1: v3_delta_faithful on the tuning cases paired difference +0.100 "
        "[+0.100, +0.100] on the 3/4 cases scored in both",
    ]
