"""Honest picks (issue 14 §6): a picked trial whose Δ cannot be told from zero or from a front neighbour's says so,
and neighbours are compared on the cases both scored, saying n/N when that is not every case. Figures by hand."""

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
from tuner.study import compare, pick_notes, trial_document, TrialRecord

# trial 0: recall 0.9, every case scored; Δ = (1 − mean[1, 1, 1, 0.8]) / 1 = 0.05
# trial 1: recall 0.8, case 4 unscored; Δ over its 3 cases = (1 − mean[1, 1, 0.94]) / 1 = 0.02
# on the 3 cases both scored: trial 0's Δ = (1 − 1) / 1 = 0.000, trial 1's 0.020
TRIALS: list[dict[str, Any]] = [
    {"values": [0.9, 0.05], "f0": [1.0, 1.0, 1.0, 1.0], "f3": [1.0, 1.0, 1.0, 0.8], "n": 4},
    {"values": [0.8, 0.02], "f0": [1.0, 1.0, 1.0, None], "f3": [1.0, 1.0, 0.94, None], "n": 3},
]


def _study(eps: float) -> optuna.Study:
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    study.set_user_attr("noise_floor", {"recall_at_k": 0.0, "v3_delta_faithful": eps})
    for number, trial in enumerate(TRIALS):
        study.add_trial(optuna.trial.create_trial(
            values=trial["values"], params={"top_k": number + 1}, distributions={"top_k": IntDistribution(1, 4)},
            user_attrs={"f0": trial["f0"], "f3": trial["f3"], "n": trial["n"], "n_total": 4, "settings": {"top_k": number + 1}},
        ))
    return study


def test_neighbours_are_compared_on_the_cases_both_scored() -> None:
    study = _study(0.08)
    comparison = compare(TrialRecord.from_trial(study.trials[0]), TrialRecord.from_trial(study.trials[1]), 1)
    assert comparison is not None
    assert comparison.delta == pytest.approx(0.0) and comparison.other_delta == pytest.approx(0.02)
    assert (comparison.n, comparison.n_total) == (3, 4)
    assert comparison.subset == " on the 3/4 cases scored in both"


def test_a_pick_within_the_noise_floor_of_zero_and_of_its_neighbour_says_so() -> None:
    study = _study(0.08)
    notes = pick_notes(study, 0)
    assert notes == [
        "trial #0: v3_delta_faithful 0.050 is within the noise floor (0.080) of zero: it cannot be told from no effect",
        "trial #0: v3_delta_faithful 0.000 is within the noise floor (0.080) of front neighbour #1's 0.020 on the 3/4 "
        "cases scored in both: the two cannot be told apart on it",
    ]
    # the export's provenance and the report carry the same notes
    document = trial_document(study, 0, "knee", "sqlite:///study.db")
    assert document["provenance"]["notes"] == notes
    page = render_report(study, picks={"knee": 0})
    assert "of front neighbour #1&#x27;s 0.020 on the 3/4 cases scored in both" in page


def test_a_distinguishable_pick_only_states_the_case_subset() -> None:
    study = _study(0.01)
    assert pick_notes(study, 0) == [
        "trial #0 vs front neighbour #1: v3_delta_faithful 0.000 vs 0.020 on the 3/4 cases scored in both",
    ]
    # trial 1's Δ 0.020 is beyond ε = 0.01 of zero, and of trial 0's on their common cases
    assert pick_notes(study, 1) == [
        "trial #1 vs front neighbour #0: v3_delta_faithful 0.020 vs 0.000 on the 3/4 cases scored in both",
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
    # a noise floor of 1 holds every Δ: the pick cannot be told from zero, and the run says so
    assert notes and "is within the noise floor (1.000) of zero: it cannot be told from no effect" in notes[0]
    assert f"note: {notes[0]}" in captured.err
    exported = yaml.safe_load((tmp_path / "out" / "tiny" / "config.yaml").read_text())
    assert exported["provenance"]["notes"] == notes


def test_without_a_noise_floor_only_the_case_subset_is_said() -> None:
    # ε = 0 (deterministic backends): nothing "within the floor", but the differing case subsets are still named
    assert pick_notes(_study(0.0), 0) == [
        "trial #0 vs front neighbour #1: v3_delta_faithful 0.000 vs 0.020 on the 3/4 cases scored in both",
    ]
