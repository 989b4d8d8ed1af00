"""A study may optimize conflict exposure (exact, from retrieval) as its second objective and bound it."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
import yaml

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.metrics import delta_parts
from tuner.stats import wilson_interval
from tuner.front import StudyRecord, TrialRecord


def _study(tmp_path: Path) -> optuna.Study:
    return optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}")


def test_exposure_objective_is_the_mean_of_the_exposed_cases_and_delta_is_measured_beside_it(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, objectives=["recall_at_k", "conflict_exposure"],
                             noise_floor={"recall_at_k": 0.0}, budget={"trials": 5})
    assert main(["run", str(study_file), "--no-report"]) == 0
    study = _study(tmp_path)
    assert [d.name for d in study.directions] == ["MAXIMIZE", "MINIMIZE"]
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert complete
    order = StudyRecord.from_study(study).case_order
    categories = {case.id: case.category for case in load_dataset(tiny_dataset_dir).golden}
    assert len(set(categories.values())) > 1
    for trial in complete:
        record = TrialRecord.from_trial(trial)
        assert record.exposed_cases is not None and record.f0 is not None and record.f3 is not None
        assert trial.values[1] == pytest.approx(sum(record.exposed_cases) / len(record.exposed_cases))
        assert record.ci is not None and record.ci["conflict_exposure"] is not None
        lo, hi = record.ci["conflict_exposure"]
        assert lo is not None and hi is not None and lo <= trial.values[1] <= hi
        # the Δ beside it is measured on the same cases and splits by the same flags
        paired = [(a, b, e) for a, b, e in zip(record.f0, record.f3, record.exposed_cases) if a is not None and b is not None]
        parts = delta_parts([p[0] for p in paired], [p[1] for p in paired], [bool(p[2]) for p in paired])
        assert parts.n == record.n
        # per case category, the share of its cases exposed, beside recall@k and the Δ measured
        assert record.by_category is not None and set(record.by_category) == set(categories.values())
        for category, scores in record.by_category.items():
            flags = [e for case_id, e in zip(order, record.exposed_cases) if categories[case_id] == category]
            assert scores["conflict_exposure"] == pytest.approx(sum(flags) / len(flags)) and scores["n"] == len(flags)
            assert "v3_delta_faithful" in scores
    for trial in study.get_trials(states=(optuna.trial.TrialState.PRUNED,)):
        pruning = trial.user_attrs.get("pruning")
        if pruning is not None:  # pruned exactly, before any answer
            assert pruning["objective"] == "conflict_exposure" and trial.user_attrs["cases_evaluated"] == 0
    capsys.readouterr()
    assert main(["pareto", str(study_file), "--json"]) == 0
    front = json.loads(capsys.readouterr().out)["front"]
    assert front
    for row in front:
        record = TrialRecord.from_trial(study.trials[row["trial"]])
        assert record.exposed_cases is not None and set(row["exposure"]) == {"value", "ci", "tied", "could_expose", "could_unexpose", "range"}
        assert row["exposure"]["value"] == row["values"]["conflict_exposure"]
        assert row["exposure"]["ci"] == list(wilson_interval(sum(record.exposed_cases), len(record.exposed_cases)))
        assert row["exposed"] == f"{sum(record.exposed_cases)}/{len(record.exposed_cases)}"
    assert main(["pareto", str(study_file)]) == 0
    assert "v3 Δ (measured)" in capsys.readouterr().out
    exported = tmp_path / "deploy.yaml"
    assert main(["export", str(study_file), "--trial", str(front[0]["trial"]), "-o", str(exported)]) == 0
    provenance = yaml.safe_load(exported.read_text())["provenance"]
    assert provenance["conflict_exposure"]["value"] == front[0]["exposure"]["value"]
    assert set(provenance["conflict_exposure"]) >= {"n", "n_total", "ci", "at_risk", "susceptibility", "delta"}


def test_max_exposure_makes_trials_above_it_infeasible_without_an_answer(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, constraints={"max_exposure": 0.0}, budget={"trials": 4})
    assert main(["run", str(study_file), "--no-report"]) == 0
    for trial in _study(tmp_path).get_trials(states=(optuna.trial.TrialState.COMPLETE,)):
        record = TrialRecord.from_trial(trial)
        assert record.exposed_cases is not None
        exposure = sum(record.exposed_cases) / len(record.exposed_cases)
        assert trial.constraints["max_exposure"] == pytest.approx(exposure)
        if exposure > 0:
            assert record.skipped is not None and "max_exposure" in record.skipped and record.cases_evaluated == 0


def test_exposure_needs_conflicts_in_the_index(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, objectives=["recall_at_k", "conflict_exposure"],
                             variants={"hard_mode": "inject"})
    assert main(["run", str(study_file)]) == 2
    assert "needs variants.hard_mode: in_index" in capsys.readouterr().err
