"""Studies that survive their own search space (issue 11 §5): unscorable trials, backend failures, repeated
configurations and an unmet pick rule never stop a run; fronts use Optuna's feasibility rule."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from optuna.distributions import IntDistribution

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.errors import UserError
from tuner.generation import GENERATORS, Answer
from tuner.backends import BackendResources
from tuner.front import TrialRecord, points_of, study_summary
from tuner.llm import RequestCount
from tuner.study import load_study_file, run_study

UNSCORABLE_SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 3},
    # bm25 normalizes a chunk's score by the query's attainable Σ idf: nothing reaches 0.99 on this data,
    # so that corner of the space retrieves nothing and Δfaithful is undefined there
    "relevance_threshold": {"type": "categorical", "choices": [0.0, 0.99]},
    "retriever": {"type": "categorical", "choices": ["bm25"]},
}


def _study(tmp_path: Path, dataset: Path, space: dict[str, Any], **overrides: Any) -> Path:
    path = write_study(tmp_path, dataset, **overrides)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    return path


def test_an_unscorable_region_is_recorded_and_the_study_finishes(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    enqueue = [{"top_k": 2, "relevance_threshold": 0.99, "retriever": "bm25"},
               {"top_k": 2, "relevance_threshold": 0.0, "retriever": "bm25"}]
    loaded = load_study_file(_study(tmp_path, tiny_dataset_dir, UNSCORABLE_SPACE, enqueue=enqueue, budget={"trials": 5}))
    result = run_study(loaded)
    assert result.study.metric_names == ["recall_at_k", "v3_delta_faithful"]  # what optuna-dashboard shows
    summary = study_summary(result.study)
    assert summary.n_complete + summary.n_pruned - summary.n_duplicates == 5
    assert summary.n_failed == 0 and summary.n_unscorable >= 1
    unscorable = result.study.trials[0]
    record = TrialRecord.from_trial(unscorable)
    assert record.unscorable == "retrieval returned nothing for every case"
    assert unscorable.values is not None and unscorable.values[0] == 0.0  # recall is exact, and 0 here
    assert unscorable.constraints == {"scorable": 1.0}
    feasible = {p.number for p in points_of(result.study)}
    assert 0 not in feasible and 1 in feasible
    assert {t.number for t in result.study.best_trials} <= feasible


class _FailsOnLongContexts:
    """A generator whose backend raises on contexts of more than two passages (a bug or an outage there)."""

    name = "flaky-backend"
    concurrency = 1

    def __init__(self) -> None:
        self.requests_made = RequestCount()

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        self.requests_made.add()
        if len(contexts) > 2:
            raise RuntimeError("backend fell over")
        return Answer.of(contexts[0] if contexts else "I don't know.")


def test_a_backend_exception_fails_that_trial_only(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(GENERATORS.builders, "extractive", lambda config, resources: _FailsOnLongContexts())
    space = {"top_k": {"type": "int", "low": 1, "high": 4}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    enqueue = [{"top_k": 4, "retriever": "bm25"}, {"top_k": 1, "retriever": "bm25"}, {"top_k": 2, "retriever": "bm25"}]
    loaded = load_study_file(_study(tmp_path, tiny_dataset_dir, space, enqueue=enqueue, budget={"trials": 3}))
    result = run_study(loaded, resources=BackendResources())
    failed = result.study.trials[0]
    assert failed.state == optuna.trial.TrialState.FAIL
    assert TrialRecord.from_trial(failed).failure == "flaky-backend raised RuntimeError: backend fell over"
    summary = study_summary(result.study)
    # only top_k 1 and 2 can be evaluated: the budget of 3 cannot be met, so the run stops once it has
    # wasted max(10, budget) trials on failures and repeats, instead of looping
    assert summary.n_complete + summary.n_pruned - summary.n_duplicates == 2
    assert summary.n_failed + summary.n_duplicates == 10


def test_an_unmet_pick_rule_still_writes_the_report_and_export_says_why(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space = {"top_k": {"type": "int", "low": 1, "high": 1}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    study_file = _study(
        tmp_path, tiny_dataset_dir, space, enqueue=[{"top_k": 1, "retriever": "bm25"}], budget={"trials": 1},
        pick={"rule": "min-delta", "min_recall": 1.0},
    )
    assert main(["run", str(study_file)]) == 0
    err = capsys.readouterr().err
    assert "pick rule min-delta: no front trial reaches recall_at_k ≥ 1; the closest is trial 0" in err
    out = tmp_path / "out" / "tiny"
    assert (out / "report.html").exists() and not (out / "config.yaml").exists()
    assert main(["export", str(study_file), "--pick", "min-delta", "--min-recall", "1.0", "-o", str(tmp_path / "d.yaml")]) == 2
    assert "no front trial reaches recall_at_k ≥ 1; the closest is trial 0" in capsys.readouterr().err
    assert not (tmp_path / "d.yaml").exists()


def test_the_front_uses_optunas_feasibility_rule() -> None:
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    for number, (recall, delta, violation) in enumerate([(0.9, 0.2, -0.1), (0.6, 0.1, -0.1), (0.95, 0.05, 0.2)]):
        trial = optuna.trial.create_trial(
            values=[recall, delta], params={"top_k": number + 1}, distributions={"top_k": IntDistribution(1, 4)},
            system_attrs={"constraints:min_recall": violation},
        )
        study.add_trial(trial)
    # trial 2 dominates both others but violates min_recall: it is on neither front
    assert sorted(t.number for t in study.best_trials) == [0, 1]
    assert sorted(p.number for p in points_of(study)) == [0, 1]


def test_a_study_can_optimize_delta_correct(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = {"top_k": {"type": "int", "low": 1, "high": 4}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    study_file = _study(
        tmp_path, tiny_dataset_dir, space, enqueue=[{"top_k": 4, "retriever": "bm25"}], budget={"trials": 3},
        objectives=["recall_at_k", "v3_delta_correct"], pick={"rule": "min-delta", "min_recall": 0.5},
        noise_floor={"recall_at_k": 0.0, "v3_delta_correct": 0.0},
    )
    assert main(["run", str(study_file), "--no-report"]) == 0
    assert "picked trial" in capsys.readouterr().err
    result = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}")
    first = TrialRecord.from_trial(result.trials[0])
    # the objectives' intervals, and conflict exposure's beside the robustness one (the set has conflicts in the index)
    assert first.ci is not None and set(first.ci) == {"recall_at_k", "v3_delta_correct", "conflict_exposure"}
    # the per-case scores are 'correct' (stated or not contradicted), never below faithful's
    assert first.f0 is not None and all(score is not None and score >= 0.0 for score in first.f0)
    assert main(["pareto", str(study_file), "--json"]) == 0
    assert "v3_delta_correct" in capsys.readouterr().out


def test_a_bad_objective_list_is_one_line(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    path = _study(tmp_path, tiny_dataset_dir, UNSCORABLE_SPACE, objectives=["recall_at_k", "context_words"])
    with pytest.raises(UserError, match=r"objectives: must start with recall_at_k, then one of v3_delta_faithful, v3_delta_correct"):
        load_study_file(path)


def test_the_report_lists_unscorable_trials_and_shortfall_warnings(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    from tuner.report import render_report

    enqueue = [{"top_k": 2, "relevance_threshold": 0.99, "retriever": "bm25"},
               {"top_k": 2, "relevance_threshold": 0.0, "retriever": "bm25"}]
    # inject mode with a band nothing reaches: every v3 slot of the scorable trial is short
    loaded = load_study_file(_study(
        tmp_path, tiny_dataset_dir, UNSCORABLE_SPACE, enqueue=enqueue, budget={"trials": 2},
        variants={"hard_mode": "inject", "n": 2},
    ))
    study = run_study(loaded).study
    html = render_report(study)
    assert "trial #0: unscorable (retrieval returned nothing for every case); kept off the front" in html
    warnings = TrialRecord.from_trial(study.trials[1]).warnings
    assert warnings is not None and warnings[0].startswith("v3: ") and f"trial #1: {warnings[0]}" in html


def test_run_json_is_a_machine_readable_summary(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    space = {"top_k": {"type": "int", "low": 1, "high": 3}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    study_file = _study(tmp_path, tiny_dataset_dir, space, enqueue=[{"top_k": 2, "retriever": "bm25"}], budget={"trials": 2})
    assert main(["run", str(study_file), "--no-report", "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)  # stdout holds the JSON only; progress went to stderr
    assert "trial 0" in captured.err
    assert summary["study"] == "tiny" and summary["interrupted"] is False
    assert summary["summary"]["n_complete"] + summary["summary"]["n_pruned"] - summary["summary"]["n_duplicates"] == 2
    assert summary["pick"]["rule"] == "knee" and summary["pick"]["trial"] in {e["trial"] for e in summary["front"]}
    assert summary["outputs"]["config"].endswith("config.yaml") and "report" not in summary["outputs"]
    assert {"recall_at_k", "v3_delta_faithful"} == set(summary["front"][0]["values"])


def test_trials_table_has_one_row_per_trial_in_every_format(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    import pandas as pd

    enqueue = [{"top_k": 2, "relevance_threshold": 0.99, "retriever": "bm25"},
               {"top_k": 2, "relevance_threshold": 0.0, "retriever": "bm25"}]
    study_file = _study(tmp_path, tiny_dataset_dir, UNSCORABLE_SPACE, enqueue=enqueue, budget={"trials": 2})
    assert main(["run", str(study_file), "--no-report"]) == 0
    capsys.readouterr()
    assert main(["trials", str(study_file), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["trial"] for row in rows] == [0, 1]
    assert rows[0]["unscorable"] == "retrieval returned nothing for every case" and rows[0]["feasible"] is False
    assert rows[1]["state"] == "complete" and rows[1]["recall_at_k.low"] is not None and rows[1]["n"] == rows[1]["n_total"]
    assert rows[1]["duplicate_of"] is None and rows[1]["pruned_by"] is None and rows[1]["feasible"] is True
    assert rows[1]["param.relevance_threshold"] == 0.0 and rows[1]["calls.generator"] > 0
    assert main(["trials", str(study_file), "--csv", str(tmp_path / "t.csv")]) == 0
    assert main(["trials", str(study_file), "--parquet", str(tmp_path / "t.parquet")]) == 0
    for frame in (pd.read_csv(tmp_path / "t.csv"), pd.read_parquet(tmp_path / "t.parquet")):
        assert list(frame["trial"]) == [row["trial"] for row in rows] and list(frame.columns) == list(rows[0])


@pytest.mark.parametrize(
    ("space", "overrides", "message"),
    [
        ({"retriever": {"type": "categorical", "choices": ["bm25", "splade"]}}, {},
         r"space.yaml: retriever: 'splade' is not allowed: retriever: Input should be 'bm25', 'dense' or 'hybrid'"),
        ({"relevance_threshold": {"type": "float", "low": -1.0, "high": 5.0}}, {},
         r"space.yaml: relevance_threshold: -1.0 is not allowed"),
        ({"top_k": {"type": "int", "low": 1, "high": 20}}, {},
         r"space.yaml: top_k: 20 is not allowed: top_k \(20\) exceeds candidate_depth \(10\)"),
        ({"top_k": {"type": "int", "low": 9, "high": 10}}, {},
         r"space.yaml: top_k starts at 9, more than the 8 documents"),
        ({"top_k": {"type": "int", "low": 1, "high": 4}}, {"enqueue": [{"top_k": 7}]},
         r"study.yaml: enqueue\[0\].top_k: 7 is outside the search space"),
        ({"top_k": {"type": "int", "low": 1, "high": 4}}, {"enqueue": [{"topk": 2}]},
         r"study.yaml: enqueue\[0\].topk: not a retrieval setting"),
        ({"top_k": {"type": "int", "low": 1, "high": 4}}, {"enqueue": [{"top_k": 2, "chunk_size": 64}]},
         r"study.yaml: enqueue\[0\].chunk_size: not a parameter of the search space \(.*space.yaml\), so no trial"),
    ],
)
def test_a_bad_space_or_enqueue_is_one_line_before_any_work(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    space: dict[str, Any], overrides: dict[str, Any], message: str,
) -> None:
    import re

    study_file = _study(tmp_path, tiny_dataset_dir, space, **{"enqueue": [], **overrides})
    for command in (["run", str(study_file), "--dry-run"], ["run", str(study_file)]):
        assert main(command) == 2
        assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "out" / "tiny" / "study.db").exists()  # nothing was created


def test_a_study_needs_conflicts_and_a_dataset(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    plain = tmp_path / "plain"
    shutil.copytree(tiny_dataset_dir, plain)
    (plain / "conflicts.jsonl").unlink()
    study_file = _study(tmp_path, plain, UNSCORABLE_SPACE, enqueue=[])
    assert main(["run", str(study_file), "--dry-run"]) == 2
    assert f"no conflicting documents (conflicts.jsonl), so v3 would measure nothing: write some with 'tuner corrupt {plain}'" in capsys.readouterr().err
    spec = yaml.safe_load(study_file.read_text())
    del spec["dataset"]
    study_file.write_text(yaml.safe_dump(spec))
    assert main(["run", str(study_file), "--dry-run"]) == 2
    assert "study.yaml: dataset: Field required" in capsys.readouterr().err


def test_a_repeated_configuration_whose_ending_a_storage_fault_cut_off_counts_as_failed_only() -> None:
    study = optuna.create_study(directions=["maximize", "minimize"])
    distributions = {"top_k": IntDistribution(1, 3)}
    study.add_trial(optuna.trial.create_trial(params={"top_k": 1}, distributions=distributions, values=[0.5, 0.1]))
    for state in (optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.FAIL):
        study.add_trial(optuna.trial.create_trial(params={"top_k": 1}, distributions=distributions, state=state,
                                                  user_attrs=TrialRecord(duplicate_of=0).to_attrs()))
    summary = study_summary(study)
    assert (summary.n_complete, summary.n_pruned, summary.n_failed, summary.n_duplicates) == (1, 1, 1, 1)
    assert summary.n_complete + summary.n_pruned - summary.n_duplicates == 1  # finished: never below 0 pruned
