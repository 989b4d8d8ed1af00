"""Two `tuner run` workers started together on a fresh SQLite file (issue 14 §5), repeated: the storage is created once
without an IntegrityError, the noise floor is calibrated by one worker and reused by the other, the workers' sampler
seeds differ, and the budget is global: exactly `budget.trials` finished trials between them."""

from __future__ import annotations

import re
from pathlib import Path

import optuna
import pytest

from tests.fault_tests.test_interrupts import Worker, assert_clean_exit, load, write_fault_study
from tuner.front import StudyRecord, TrialRecord, study_summary

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")]

BUDGET = 4


@pytest.mark.parametrize("attempt", range(3))
def test_two_workers_on_a_fresh_sqlite_file_share_one_study(tiny_dataset_dir: Path, tmp_path: Path, attempt: int) -> None:
    study_file = write_fault_study(
        tmp_path, tiny_dataset_dir, noise_floor="auto", budget={"trials": BUDGET}, sampler={"name": "tpe", "seed": 7},
    )
    command = ["-m", "tuner", "run", str(study_file), "--no-report"]
    workers = [Worker(tmp_path, command, SLOW_ANSWER="0.2") for _ in range(2)]
    for worker in workers:
        assert_clean_exit(worker, 0, timeout=600)
        assert "IntegrityError" not in worker.output

    study = load(tmp_path)
    assert study is not None
    summary = study_summary(study)
    assert summary.n_complete + summary.n_pruned - summary.n_duplicates == BUDGET  # not one more
    assert summary.n_running == 0 and summary.n_failed == 0

    # one worker measured the noise floor; the other waited for it and reused it
    calibrated = [w for w in workers if "calibrating the noise floor" in w.output]
    assert len(calibrated) == 1
    record = StudyRecord.from_study(study)
    assert record.calibrated_by == f"{re.sub(r':.*', '', record.calibrated_by or '')}:{calibrated[0].process.pid}"
    other = next(w for w in workers if w is not calibrated[0])
    assert f"noise floor calibrated by worker {record.calibrated_by}: reused" in other.output

    # distinct sampler seeds: worker 0 keeps the study's, worker 1 draws with the next one
    assert study.user_attrs["workers"] == 2
    seeded = [w for w in workers if "worker 1 of study 'tiny': sampler seed 8" in w.output]
    assert len(seeded) == 1

    # both workers ran trials (the lock serializes claims, not evaluations), and each trial was run once
    owners = {TrialRecord.from_trial(t).worker for t in study.trials}
    assert len(owners) == 2, [w.output for w in workers]
    assert all(t.state != optuna.trial.TrialState.WAITING for t in study.trials)
