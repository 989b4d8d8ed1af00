"""What a study spends on LLM requests (issue 23 §1–3): trials that cannot be picked are not answered."""

from __future__ import annotations

from pathlib import Path

import optuna
import yaml

from tests.study_tests.test_study import write_study
from tests.study_tests.test_survival import UNSCORABLE_SPACE
from tuner.llm.testing import FakeChatServer, context_echo_reply
from tuner.study import TrialRecord, feasible, load_study_file, points_of, run_study, study_summary, trial_rows

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
    assert study_summary(study)["n_skipped"] == 1
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
