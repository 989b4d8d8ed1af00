"""What a study spends on LLM requests (issue 23 §1–3): trials that cannot be picked are not answered."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
import yaml

from tests.study_tests.test_study import write_study
from tests.study_tests.test_survival import UNSCORABLE_SPACE
from tuner.cli import main
from tuner.errors import UserError
from tuner.llm.testing import FakeChatServer, context_echo_reply
from tuner.front import TrialRecord, feasible, points_of, study_summary, trial_rows
from tuner.study import load_study_file, run_study

SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 4},
    "retriever": {"type": "categorical", "choices": ["bm25"]},
    "chunk_size": {"type": "categorical", "choices": [40]},
}


def test_a_trial_below_min_recall_completes_infeasible_with_its_exact_recall_and_no_request(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    with FakeChatServer(context_echo_reply) as server:
        generator = {"backend": "openai", "base_url": server.url, "model": "stand-in", "api_key_env": None, "cache": False}
        # top_k 1 reaches recall 0.92 on the tiny data, top_k 4 all of it: a floor of 0.95 rules out top_k 1
        study_file = write_study(
            tmp_path, tiny_dataset_dir, generator=generator, constraints={"min_recall": 0.95}, budget={"trials": 2},
            enqueue=[{"top_k": 1, "retriever": "bm25", "chunk_size": 40}, {"top_k": 4, "retriever": "bm25", "chunk_size": 40}],
            pruning={"enabled": False},
        )
        (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
        study = run_study(load_study_file(study_file)).study
        low, high = study.trials[0], study.trials[1]
        assert low.state == high.state == optuna.trial.TrialState.COMPLETE
        assert low.values is not None and low.values[0] < 0.95 <= high.values[0]
        assert low.constraints == {"min_recall": 0.95 - low.values[0]}  # > 0: infeasible, which the sampler reads
        record = TrialRecord.from_trial(low)
        assert record.skipped == f"recall@k {low.values[0]:.4g} is below constraints.min_recall 0.95"
        assert record.calls is not None and record.calls.llm == 0 and record.cases_evaluated == 0
        answered = TrialRecord.from_trial(high).calls
        # every request the server saw came from the feasible trial
        assert answered is not None and answered.generator == len(server.requests) > 0
    assert not feasible(low) and 0 not in {p.number for p in points_of(study)}
    assert study_summary(study).n_skipped == 1
    rows = trial_rows(study)
    assert rows[0]["skipped"] == record.skipped and rows[0]["calls.generator"] == 0 and rows[1]["skipped"] is None


def test_answer_infeasible_still_answers_trials_below_the_floor(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_study(
        tmp_path, tiny_dataset_dir, constraints={"min_recall": 0.95, "answer_infeasible": True}, budget={"trials": 1},
        pruning={"enabled": False},
    )
    trial = run_study(load_study_file(study_file)).study.trials[0]
    record = TrialRecord.from_trial(trial)
    assert trial.values is not None and trial.values[0] < 0.95
    assert record.skipped is None and record.calls is not None and record.calls.generator > 0
    assert record.cases_evaluated == record.n_total


def test_a_trial_that_retrieves_nothing_is_not_answered(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    enqueue = [{"top_k": 2, "relevance_threshold": 0.99, "retriever": "bm25"}]
    study_file = write_study(tmp_path, tiny_dataset_dir, enqueue=enqueue, budget={"trials": 1})
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(UNSCORABLE_SPACE))
    trial = run_study(load_study_file(study_file)).study.trials[0]
    record = TrialRecord.from_trial(trial)
    assert record.unscorable == record.skipped == "retrieval returned nothing for every case"
    assert trial.constraints == {"scorable": 1.0}
    assert record.calls is not None and record.calls.generator == record.calls.judge == 0


PRICING = {"input": 1.0, "cached_input": 0.5, "output": 2.0}


def supported(body: dict[str, object]) -> str:
    """A stand-in judge that finds every keypoint supported (so every trial is scorable, with Δ = 0)."""
    return '{"verdict": "supported", "evidence": ""}'


def _priced_study(folder: Path, dataset: Path, server: FakeChatServer, **overrides: object) -> Path:
    judge = {"backend": "llm", "base_url": server.url, "model": "stand-in", "api_key_env": None, "pricing": PRICING}
    # pruning's batches of 2 cases (write_study's) are where a spent budget is checked
    return write_study(folder, dataset, judge=judge, **overrides)


def test_dry_run_json_carries_a_cost_range(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeChatServer() as server:
        study_file = _priced_study(tmp_path, tiny_dataset_dir, server, budget={"trials": 4})
        assert main(["run", str(study_file), "--dry-run", "--json"]) == 0
        assert server.requests == []  # a dry run spends nothing
    out, err = capsys.readouterr()
    estimate = json.loads(out)
    cost = estimate["cost"]
    # a case's later passage prompts repeat its first one's passages: the low end prices them as cached
    assert cost["priced"] == ["judge"] and 0 < cost["low"] < cost["high"]
    assert f"estimated cost {cost['low']:.4g}–{cost['high']:.4g} at the pricing of the judge" in err


def test_dry_run_json_has_no_cost_without_pricing(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(write_study(tmp_path, tiny_dataset_dir)), "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cost"] is None


def test_max_cost_needs_pricing_on_every_llm_backend(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    generator = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": None}
    study_file = write_study(tmp_path, tiny_dataset_dir, generator=generator, budget={"trials": 2, "max_cost": 1.0})
    with pytest.raises(UserError, match=r"budget.max_cost: generator.pricing is not set"):
        load_study_file(study_file)


@pytest.mark.slow
def test_a_spent_budget_stops_the_study_like_an_interrupt_and_a_larger_one_resumes_it(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}"
    with FakeChatServer(supported) as server:
        first = _priced_study(tmp_path, tiny_dataset_dir, server, budget={"trials": 1})
        assert main(["run", str(first), "--no-report"]) == 0
        spent = TrialRecord.from_trial(optuna.load_study(study_name="tiny", storage=storage).trials[0]).calls
        assert spent is not None and spent.tokens > 0 and spent.cost == pytest.approx(
            (spent.prompt_tokens - spent.cached_tokens) * 1e-6 + spent.cached_tokens * 0.5e-6 + spent.completion_tokens * 2e-6
        )
        # one token more than the first trial spent: the next trial's first batch of cases exhausts it, and the check
        # before its second batch stops it
        limit = spent.tokens + 1
        study_file = _priced_study(tmp_path, tiny_dataset_dir, server, budget={"trials": 3, "max_tokens": limit})
        capsys.readouterr()
        assert main(["run", str(study_file), "--json"]) == 0
        out, err = capsys.readouterr()
        summary = json.loads(out)
        assert summary["budget_ended"].startswith(f"budget.max_tokens {limit:,} reached (spent ")
        assert f"the budget ended the study: budget.max_tokens {limit:,} reached" in err and "raise the budget" in err
        assert Path(summary["outputs"]["report"]).exists() and Path(summary["outputs"]["config"]).exists()
        study = optuna.load_study(study_name="tiny", storage=storage)
        stopped = next(t for t in study.trials if t.state == optuna.trial.TrialState.FAIL)
        queued = [t for t in study.trials if t.state == optuna.trial.TrialState.WAITING]
        assert [t.params for t in queued] == [stopped.params]
        record = TrialRecord.from_trial(stopped)
        assert record.failure is not None and record.failure.startswith(f"stopped: budget.max_tokens {limit:,} reached")
        assert record.calls is not None and 0 < record.calls.judge < spent.judge and record.calls.cost > 0  # paid for
        assert study_summary(study).calls.tokens >= limit

        # the same budget ends a resumed run before it asks for anything
        trials_before = len(study.trials)
        assert main(["run", str(study_file), "--no-report"]) == 0
        assert "the budget ended the study" in capsys.readouterr().err
        assert len(optuna.load_study(study_name="tiny", storage=storage).trials) == trials_before

        larger = _priced_study(tmp_path, tiny_dataset_dir, server, budget={"trials": 3, "max_tokens": 10**9})
        assert main(["run", str(larger), "--no-report"]) == 0
        assert "budget ended" not in capsys.readouterr().err
    study = optuna.load_study(study_name="tiny", storage=storage)
    resumed = [t for t in study.trials if t.params == stopped.params and t.state == optuna.trial.TrialState.COMPLETE]
    assert len(resumed) == 1
    rows = {row["trial"]: row for row in trial_rows(study)}
    assert rows[resumed[0].number]["calls.cost"] is not None and rows[resumed[0].number]["calls.cached_tokens"] is not None


def test_dry_run_counts_two_judge_requests_per_case_when_batched(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    estimates = {}
    for batched in (False, True):
        folder = tmp_path / str(batched)
        folder.mkdir()
        judge = {"backend": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": None,
                 "batch_keypoints": batched, "pricing": PRICING}
        study_file = write_study(folder, tiny_dataset_dir, judge=judge, budget={"trials": 2})
        assert main(["run", str(study_file), "--dry-run", "--json"]) == 0
        estimates[batched] = json.loads(capsys.readouterr().out)
    per_keypoint, batched_estimate = estimates[False], estimates[True]
    runs = per_keypoint["trials"] + per_keypoint["calibration_runs"]
    # 2 variants × 2 sides, per keypoint (7 on the tiny data) or per case (6)
    assert per_keypoint["judge_calls"] == runs * 2 * 2 * per_keypoint["keypoints"] == runs * 28
    assert batched_estimate["judge_calls"] == runs * 2 * 2 * batched_estimate["cases"] == runs * 24
    assert batched_estimate["cost"]["low"] == batched_estimate["cost"]["high"]  # nothing repeats within a case
