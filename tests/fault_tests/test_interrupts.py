"""Ctrl-C during `tuner run` at each phase (issue 14 §2): signals sent to a real `tuner run` subprocess during the noise
floor calibration, during a trial's evaluation and inside Optuna's ask(); once (clean stop, report, exit 130) and twice
(exit at once). Whatever is left behind, the next start repairs it and the study reaches its budget exactly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")]
import yaml

from tuner.front import TrialRecord, study_summary
from tuner.study import open_storage

SPACE = {"top_k": {"type": "int", "low": 1, "high": 4}, "chunk_size": {"type": "categorical", "choices": [20, 40, 80]},
         "retriever": {"type": "categorical", "choices": ["bm25"]}}

SLOW_GENERATOR = '''
import os
import time

def answer(question, contexts):
    time.sleep(float(os.environ.get("SLOW_ANSWER", "0.2")))
    return contexts[0] if contexts else "I don't know."
'''

# Runs the real `tuner run` with one registry entry swapped: the "random" sampler lingers inside ask(), after
# Optuna created the trial's row and before any heartbeat, and says so in a marker file.
SLOW_ASK_DRIVER = '''
import os
import sys
import time

import optuna

from tuner.cli import main
from tuner.study import SAMPLERS


class SlowAsk(optuna.samplers.RandomSampler):
    def before_trial(self, study, trial):  # Optuna calls it inside ask(), once the trial's row exists
        if trial.number >= int(os.environ["SLOW_ASK_FROM"]):
            with open(os.environ["ASK_MARKER"], "w") as marker:
                marker.write(str(trial.number))
            time.sleep(float(os.environ["SLOW_ASK_SECONDS"]))
        super().before_trial(study, trial)


SAMPLERS["random"] = lambda config, space: SlowAsk(seed=config.seed)
sys.exit(main(sys.argv[1:]))
'''

RUNNING = optuna.trial.TrialState.RUNNING
WAITING = optuna.trial.TrialState.WAITING
FAIL = optuna.trial.TrialState.FAIL


def write_fault_study(folder: Path, dataset: Path, **overrides: Any) -> Path:
    """A study over the tiny dataset with a slow offline generator (bm25 only: no model to load)."""
    (folder / "space.yaml").write_text(yaml.safe_dump(SPACE))
    (folder / "slowgen.py").write_text(SLOW_GENERATOR)
    study = {
        "name": "tiny", "dataset": str(dataset), "search_space": "space.yaml",
        # the baseline (noise floor) configuration is bm25 too: a process that never embeds never loads torch
        "settings": {"candidate_depth": 10, "retriever": "bm25"},
        "budget": {"trials": 4}, "pruning": {"enabled": False}, "heartbeat_interval": 1,
        "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}, "sampler": {"name": "tpe", "seed": 1},
        "generator": {"backend": "callable", "function": "slowgen:answer"}, "output": "out",
        **overrides,
    }
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


class Worker:
    """A `tuner run` subprocess whose stderr is collected line by line as it is printed."""

    def __init__(self, folder: Path, argv: list[str], **env: str) -> None:
        # its own cache: answers cached by another test would make its trials instant
        environment = {**os.environ, "PYTHONPATH": f"{folder}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                       "TUNER_CACHE": str(folder / "cache"), **env}
        self.process = subprocess.Popen(
            [sys.executable, *argv], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            # a shell running the tests in the background ignores SIGINT, and children inherit that
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait(self, timeout: float) -> int:
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code


def tuner_run(folder: Path, study_file: Path, *extra: str, **env: str) -> Worker:
    return Worker(folder, ["-m", "tuner", "run", str(study_file), *extra], **env)


def wait_until(worker: Worker, condition: Callable[[], bool], what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline or worker.process.poll() is not None:
            if worker.process.poll() is not None:
                worker.wait(timeout=60)  # read its last lines
            raise AssertionError(f"never saw {what}; the worker said:\n{worker.output}")
        time.sleep(0.2)


def load(folder: Path) -> optuna.Study | None:
    """The study, once a worker created it (through tuner's storage lock: the workers may be creating the file)."""
    try:
        return optuna.load_study(study_name="tiny", storage=open_storage(f"sqlite:///{folder / 'out' / 'tiny' / 'study.db'}"))
    except KeyError:
        return None


def evaluating(folder: Path) -> optuna.trial.FrozenTrial | None:
    """The RUNNING trial whose evaluation has started (its settings are recorded), if any."""
    study = load(folder)
    if study is None:
        return None
    running = [t for t in study.get_trials(states=(RUNNING,)) if "settings" in t.user_attrs]
    return running[0] if running else None


def assert_clean_exit(worker: Worker, code: int, timeout: float = 60) -> None:
    """The worker exits with ``code`` and no traceback (timeouts are generous: the test machine may be loaded)."""
    assert worker.wait(timeout=timeout) == code, worker.output
    assert "Traceback" not in worker.output and "UnboundLocalError" not in worker.output, worker.output


def run_here(folder: Path, study_file: Path) -> None:
    """The next start after a fault, in this process (no interpreter to start; the fault itself always hits a real
    `tuner run` process): ``tuner run --no-report`` with the folder's cache and generator and answers not slowed."""
    from tuner.cli import main

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TUNER_CACHE", str(folder / "cache"))
        patch.setenv("SLOW_ANSWER", "0")
        patch.syspath_prepend(str(folder))
        assert main(["run", str(study_file), "--no-report"]) == 0


def resume_to_budget(folder: Path, study_file: Path, target: int) -> optuna.Study:
    """Run the same command again: it must repair whatever was left and finish the budget exactly."""
    run_here(folder, study_file)
    study = load(folder)
    assert study is not None
    states = [t.state for t in study.trials]
    assert RUNNING not in states and WAITING not in states, states
    summary = study_summary(study)
    assert summary.n_complete + summary.n_pruned - summary.n_duplicates == target
    return study


def test_first_interrupt_during_a_trial_fails_it_cleanly_writes_the_report_and_exits_130(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, budget={"trials": 3})
    worker = tuner_run(tmp_path, study_file, SLOW_ANSWER="0.5")
    wait_until(worker, lambda: (trial := evaluating(tmp_path)) is not None and trial.number >= 1, what="trial 1 evaluating")
    worker.process.send_signal(signal.SIGINT)
    assert_clean_exit(worker, 130)
    output = worker.output
    assert "interrupt: stopping cleanly" in output and "interrupted after" in output and "resume" in output
    study = load(tmp_path)
    assert study is not None
    interrupted = [t for t in study.trials if t.state == FAIL]
    assert len(interrupted) == 1 and RUNNING not in [t.state for t in study.trials]
    record = TrialRecord.from_trial(interrupted[0])
    assert record.failure is not None and record.failure.startswith("interrupted (Ctrl-C)")
    retry = [t for t in study.trials if t.state == WAITING]
    assert len(retry) == 1 and retry[0].params == interrupted[0].params
    assert optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(retry[0]) == interrupted[0].number
    done = study_summary(study).n_complete
    # the progress line says what happened, and the report of what is done was written
    assert f"study 'tiny': {done} of 3 done" in output
    assert (tmp_path / "out" / "tiny" / "report.html").exists()

    study = resume_to_budget(tmp_path, study_file, 3)
    assert study.trials[retry[0].number].state == optuna.trial.TrialState.COMPLETE  # the configuration was not lost


def test_second_interrupt_exits_at_once(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, budget={"trials": 2})
    worker = tuner_run(tmp_path, study_file, "--no-report", SLOW_ANSWER="5")
    wait_until(worker, lambda: evaluating(tmp_path) is not None, what="a trial evaluating")
    started = time.monotonic()
    worker.process.send_signal(signal.SIGINT)
    # as a person does: Ctrl-C again once the first was acknowledged (two signals sent together may reach
    # Python's handler as one)
    wait_until(worker, lambda: "stopping cleanly" in worker.output, what="the first interrupt acknowledged", timeout=10)
    worker.process.send_signal(signal.SIGINT)
    assert_clean_exit(worker, 130)
    # at once: the answer being generated (5 s) was not waited for, nor anything else
    # (the first interrupt already stops the answer being generated; the second, if it lands before the exit, says so)
    assert time.monotonic() - started < 4
    resume_to_budget(tmp_path, study_file, 2)


def test_a_trial_left_running_by_a_dead_worker_is_repaired_at_the_next_start(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    """What a second Ctrl-C landing in a storage write leaves (here made certain with SIGKILL): a RUNNING trial with a
    heartbeat row that no longer beats. The next start on this host fails it at once (its worker's process is gone)
    and queues its configuration again; a worker on another host would fail it through the heartbeat."""
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, budget={"trials": 2})
    worker = tuner_run(tmp_path, study_file, "--no-report", SLOW_ANSWER="5")
    wait_until(worker, lambda: evaluating(tmp_path) is not None, what="a trial evaluating")
    worker.process.send_signal(signal.SIGKILL)
    worker.wait(timeout=60)
    study = load(tmp_path)
    assert study is not None
    left = study.get_trials(states=(RUNNING,))
    assert len(left) == 1

    resumed = resume_to_budget(tmp_path, study_file, 2)
    repaired = resumed.trials[left[0].number]
    assert repaired.state == FAIL
    assert TrialRecord.from_trial(repaired).failure == (
        f"repaired on resume: its worker {TrialRecord.from_trial(left[0]).worker} is no longer running"
    )
    retries = [t for t in resumed.trials
               if optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(t) == left[0].number]
    assert len(retries) == 1 and retries[0].params == left[0].params


def test_interrupt_during_calibration_records_nothing_and_the_next_start_calibrates(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, noise_floor="auto", budget={"trials": 2})
    worker = tuner_run(tmp_path, study_file, "--no-report")
    wait_until(worker, lambda: "calibrating the noise floor" in worker.output, what="the calibration")
    time.sleep(0.5)
    worker.process.send_signal(signal.SIGINT)
    assert_clean_exit(worker, 130)
    assert "interrupted during the noise floor calibration: nothing was recorded" in worker.output
    study = load(tmp_path)
    assert study is not None and study.trials == [] and "noise_floor" not in study.user_attrs

    resumed = resume_to_budget(tmp_path, study_file, 2)
    assert resumed.user_attrs["noise_floor"] is not None


@pytest.mark.parametrize("interrupts", [1, 2])
def test_interrupt_inside_ask_never_leaves_a_trial_running(
    tiny_dataset_dir: Path, tmp_path: Path, interrupts: int
) -> None:
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, sampler={"name": "random", "seed": 3},
                                   budget={"trials": 3})
    (tmp_path / "driver.py").write_text(SLOW_ASK_DRIVER)
    marker = tmp_path / "in-ask"
    worker = Worker(tmp_path, [str(tmp_path / "driver.py"), "run", str(study_file), "--no-report"],
                    SLOW_ASK_FROM="1", SLOW_ASK_SECONDS="5", ASK_MARKER=str(marker), SLOW_ANSWER="0")
    wait_until(worker, marker.exists, what="ask() of trial 1")
    for _ in range(interrupts):
        worker.process.send_signal(signal.SIGINT)
        time.sleep(0.1)
    assert_clean_exit(worker, 130)
    study = load(tmp_path)
    assert study is not None
    asked = study.trials[int(marker.read_text())]
    if interrupts == 1:
        # ask() finished, then the trial was failed before any evaluation, and queued again
        assert asked.state == FAIL and "interrupted (Ctrl-C)" in (TrialRecord.from_trial(asked).failure or "")
        assert [t.state for t in study.trials].count(WAITING) == 1
    else:
        # left inside ask(): no heartbeat row, no worker; the next start repairs it once the grace period (3 s) is over
        assert asked.state == RUNNING and "worker" not in asked.user_attrs
        time.sleep(3.5)
    resumed = resume_to_budget(tmp_path, study_file, 3)
    assert resumed.trials[asked.number].state == FAIL


def test_repair_queues_a_stopped_trial_once_and_fails_one_left_inside_ask(tmp_path: Path) -> None:
    """The windows a second Ctrl-C can hit: after a trial was failed but before it was queued again, and inside
    ask() (RUNNING, no worker, no heartbeat). A start repairs both, and a second start changes nothing."""
    from datetime import timedelta

    from optuna.distributions import IntDistribution

    from tuner.study._workers import repair_orphans

    storage = open_storage(f"sqlite:///{tmp_path / 'study.db'}", heartbeat_interval=1)
    study = optuna.create_study(study_name="tiny", storage=storage, directions=["maximize", "minimize"])
    study.add_trial(optuna.trial.create_trial(
        state=FAIL, params={"top_k": 3}, distributions={"top_k": IntDistribution(1, 4)},
        user_attrs={"failure": "interrupted (Ctrl-C): its configuration is queued again"},
    ))
    inside_ask = study.ask()
    assert repair_orphans(study, storage, timedelta(seconds=60)) == [
        (0, "it was failed, but its worker stopped before queueing it again"),
    ]  # the one inside ask() is younger than the grace period: it may still be a live worker's
    assert repair_orphans(study, storage, timedelta(seconds=0)) == [
        (inside_ask.number, "left running and failed (its worker stopped inside ask(), before any heartbeat)"),
    ]
    assert repair_orphans(study, storage, timedelta(seconds=0)) == []
    waiting = study.get_trials(states=(WAITING,))
    assert [t.params for t in waiting] == [{"top_k": 3}, {}]
    assert [t.system_attrs["retry_history"] for t in waiting] == [[0], [inside_ask.number]]


def test_the_guard_records_a_first_interrupt_outside_sections_and_restores_the_handler() -> None:
    from tuner.study import InterruptGuard
    from tuner.study._interrupt import FIRST

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a background shell ignores SIGINT
    try:
        lines: list[str] = []
        with InterruptGuard(write=lines.append) as guard:
            signal.raise_signal(signal.SIGINT)  # outside an interruptible section: recorded, nothing raised
            assert guard.requested and lines == [FIRST]
            with pytest.raises(KeyboardInterrupt), guard.interruptible():
                pass  # a section that starts after the interrupt stops at once
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_interrupt_swallowed_by_a_finalizer_prints_nothing_and_stops_at_the_next_check() -> None:
    """SIGINT landing while the main thread runs a ``__del__`` (seen in CI inside SQLAlchemy's registry): Python cannot
    raise it there and would print "Exception ignored ... Traceback"; the guard keeps it recorded and silent."""
    import gc
    import sys

    from tuner.study import InterruptGuard

    reports: list[object] = []
    before = sys.unraisablehook
    sys.unraisablehook = reports.append
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with InterruptGuard(write=lambda line: None) as guard:

            class Finalized:
                def __init__(self, error: BaseException | None = None) -> None:
                    self.error = error

                def __del__(self) -> None:
                    if self.error is None:
                        signal.raise_signal(signal.SIGINT)
                    else:
                        raise self.error

            with guard.interruptible():
                Finalized()
                gc.collect()
            assert guard.requested and reports == []
            with pytest.raises(KeyboardInterrupt):
                guard.check()
            error = ValueError("not an interrupt")
            Finalized(error)
            gc.collect()
        assert [r.exc_value for r in reports] == [error]  # type: ignore[attr-defined]
        assert sys.unraisablehook == reports.append
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = before


def test_the_second_interrupt_writes_exiting_now_and_ends_the_process_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from tuner.study import InterruptGuard
    from tuner.study import _interrupt
    from tuner.study._interrupt import EXIT_INTERRUPTED, FIRST, SECOND

    class Exited(BaseException):
        """What the patched os._exit raises, so the test sees the exit instead of losing the process."""

    def fake_exit(code: int) -> None:
        raise Exited(code)

    monkeypatch.setattr(_interrupt.os, "_exit", fake_exit)
    lines: list[str] = []
    guard = InterruptGuard(write=lines.append)
    guard._handle(signal.SIGINT, None)  # outside a section: recorded, nothing raised
    assert guard.requested and lines == [FIRST]
    with pytest.raises(Exited) as exited:
        guard._handle(signal.SIGINT, None)
    assert exited.value.args == (EXIT_INTERRUPTED,) and EXIT_INTERRUPTED == 130
    assert lines == [FIRST, SECOND] and SECOND.startswith("interrupt: exiting now")


# A generator stuck in one long call into C, where Python runs no signal handler: SQLite waiting (up to 60 s) for a
# lock the test holds, as a call cache or embedding store shared with another process can. It says so first.
LOCKED_GENERATOR = '''
import os
import sqlite3
import sys


def answer(question, contexts):
    print("tuner-test: answering, waiting for the database lock", file=sys.stderr, flush=True)
    with sqlite3.connect(os.environ["LOCKED_DB"], timeout=60) as connection:
        connection.execute("BEGIN IMMEDIATE")
    return contexts[0] if contexts else "I don't know."
'''


@pytest.mark.parametrize("phase", ["calibration", "trial"])
def test_first_interrupt_stops_at_once_even_inside_a_long_call_into_c(
    tiny_dataset_dir: Path, tmp_path: Path, phase: str
) -> None:
    import sqlite3

    database = tmp_path / "locked.db"
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        (tmp_path / "lockgen.py").write_text(LOCKED_GENERATOR)
        floor: Any = "auto" if phase == "calibration" else {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}
        study_file = write_fault_study(tmp_path, tiny_dataset_dir, noise_floor=floor, budget={"trials": 2},
                                       generator={"backend": "callable", "function": "lockgen:answer"})
        worker = tuner_run(tmp_path, study_file, "--no-report", LOCKED_DB=str(database))
        wait_until(worker, lambda: "waiting for the database lock" in worker.output, what="the generator blocked",
                   timeout=300)
        started = time.monotonic()
        worker.process.send_signal(signal.SIGINT)
        assert_clean_exit(worker, 130, timeout=45)
        # the lock wait (60 s) was not waited for: the handler ran while the worker thread sat in SQLite
        assert time.monotonic() - started < 15, worker.output
    finally:
        holder.rollback()
        holder.close()
    if phase == "calibration":
        assert "interrupted during the noise floor calibration: nothing was recorded" in worker.output
    else:
        assert "interrupted after 0 trial(s) in this run: the study is saved" in worker.output
        study = load(tmp_path)
        assert study is not None and study_summary(study).n_running == 0  # failed and queued again


def test_an_interrupt_while_confirming_the_front_still_writes_the_report_and_config(tmp_path: Path) -> None:
    # issue 38: Ctrl-C during "confirming front trial ..." exited 130 with neither (docs/cli.md: Ctrl-C writes them)
    from tests.study_tests.test_confirm import _distinct_cases

    dataset = _distinct_cases(tmp_path / "data", 11)  # 66 cases: share 0.5 holds out 33
    study_file = write_fault_study(tmp_path, dataset, budget={"trials": 1}, confirm={"share": 0.5, "seed": 0},
                                   enqueue=[{"top_k": 1, "chunk_size": 40, "retriever": "bm25"}])
    worker = tuner_run(tmp_path, study_file, SLOW_ANSWER="0.3")
    wait_until(worker, lambda: "confirming front trial" in worker.output, what="the front being confirmed", timeout=300)
    worker.process.send_signal(signal.SIGINT)
    assert_clean_exit(worker, 130)
    assert "interrupted while confirming: 0 of 1 front trials confirmed and kept" in worker.output
    assert (tmp_path / "out" / "tiny" / "report.html").exists() and (tmp_path / "out" / "tiny" / "config.yaml").exists()
