"""Study (**trials**, several workers on one storage): what workers agree on through the storage: a lock they take in
turn, their index (hence distinct sampler seeds), each trial's heartbeat, and the repair of trials no live worker owns."""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

import optuna
import sqlalchemy
import sqlalchemy.exc

from tuner.front import TrialRecord

logger = logging.getLogger(__name__)

INTERRUPTED = "interrupted (Ctrl-C)"
REPAIRED = "repaired on resume"


LOCK_ATTEMPTS = 3
"""Tries to take the PostgreSQL study lock across transient disconnects (waits 1, then 2 s between them)."""


def worker_name() -> str:
    """``host:pid``: what a trial's ``worker`` attribute holds, so a repair can tell a dead local worker."""
    return f"{socket.gethostname()}:{os.getpid()}"


def sqlite_path(url: str) -> Path | None:
    """The database file of a ``sqlite:///`` URL (None for another backend or an in-memory database)."""
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///").split("?", 1)[0]
    return None if path in ("", ":memory:") else Path(path)


class StudyLock:
    """A lock every worker of one study takes in turn (blocking): around the creation of a fresh storage, the noise
    floor calibration, and each budget check plus ``ask()``. A SQLite file: an ``flock`` on ``<file>.lock``;
    PostgreSQL: a session advisory lock keyed by the study name; another backend: no lock (workers then may
    overshoot the budget by one trial each, and each may calibrate)."""

    def __init__(self, url: str, study_name: str) -> None:
        self.path = sqlite_path(url)
        self.key = zlib.crc32(f"tuner:{study_name}".encode())
        # pre-ping: a pooled connection the server dropped (restart, pg_terminate_backend) is replaced, not used
        self._engine = sqlalchemy.create_engine(url, pool_pre_ping=True) if url.startswith("postgresql") else None
        self._file: IO[bytes] | None = None
        self._connection: sqlalchemy.Connection | None = None

    def _lock_file(self) -> IO[bytes]:
        assert self.path is not None
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path.with_name(self.path.name + ".lock"), "ab")
        return self._file

    def busy(self) -> bool:
        """True when another worker holds the lock now (a hint for progress lines; it may change at once)."""
        if self.path is None:
            return False
        try:
            fcntl.flock(self._lock_file(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(self._lock_file(), fcntl.LOCK_UN)
        return False

    def acquire(self) -> None:
        if self.path is not None:
            fcntl.flock(self._lock_file(), fcntl.LOCK_EX)
        elif self._engine is not None:
            for attempt in range(LOCK_ATTEMPTS):
                try:
                    self._connection = self._engine.connect()
                    self._connection.execute(sqlalchemy.text("SELECT pg_advisory_lock(:key)"), {"key": self.key})
                    return
                except sqlalchemy.exc.OperationalError:
                    # a transient disconnect (the server restarting): a bounded number of tries, then the caller
                    # stops the run with one line naming the storage (tuner.study._faults)
                    self._connection = None
                    if attempt == LOCK_ATTEMPTS - 1:
                        raise
                    time.sleep(2**attempt)

    def release(self) -> None:
        if self.path is not None:
            fcntl.flock(self._lock_file(), fcntl.LOCK_UN)
        elif self._connection is not None:
            self._connection.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:key)"), {"key": self.key})
            self._connection.close()
            self._connection = None

    @contextmanager
    def held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._engine is not None:
            self._engine.dispose()


def claim_worker_index(study: optuna.Study) -> int:
    """This worker's index in the study (0 for the first worker ever started on it); call under the lock."""
    index = int(study.user_attrs.get("workers", 0))
    study.set_user_attr("workers", index + 1)
    return index


def worker_seed(seed: int | None, index: int) -> int | None:
    """The sampler seed of worker ``index``: the study's seed for the first, ``seed + index`` for the others, so
    workers do not propose the same configurations in the same order (no seed: each draws its own)."""
    return None if seed is None else seed + index


def requeue(study: optuna.Study, trial: optuna.trial.FrozenTrial, max_retry: int | None = None) -> None:
    """Queue ``trial``'s configuration again as a WAITING trial (the parameters it had drawn, or the enqueued ones it
    was about to use), without its stale user attributes; Optuna's retry keys record where it came from."""
    system_attrs: dict[str, Any] = {"failed_trial": trial.number, "retry_history": [], **trial.system_attrs}
    system_attrs["retry_history"] = [*system_attrs["retry_history"], trial.number]
    if max_retry is not None and len(system_attrs["retry_history"]) > max_retry:
        return
    study.add_trial(optuna.create_trial(
        state=optuna.trial.TrialState.WAITING, params=trial.params, distributions=trial.distributions,
        system_attrs=system_attrs,
    ))


MAX_RETRY = 3
"""How often a configuration whose worker died under it is queued again (one that kills every worker is not forever)."""


def retry_stale(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
    """The storage's heartbeat-stale callback: a trial whose worker stopped beating is queued again."""
    requeue(study, trial, max_retry=MAX_RETRY)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def orphaned(trial: optuna.trial.FrozenTrial, grace: timedelta, now: datetime | None = None) -> str | None:
    """Why a RUNNING trial belongs to no live worker, or None. A worker records the trial's first heartbeat and then
    its ``worker`` attribute right after ``ask()``, so a trial without that attribute older than the grace period
    was left inside ``ask()`` (it has no heartbeat row either, which Optuna's stale check never looks at); one whose
    worker is a dead process of this host is orphaned at once."""
    worker = TrialRecord.from_trial(trial).worker
    if worker is None:
        started = trial.datetime_start or datetime.now()
        if (now or datetime.now()) - started > grace:
            return "its worker stopped inside ask(), before any heartbeat"
        return None
    host, _, pid = worker.rpartition(":")
    if host == socket.gethostname() and pid.isdigit() and not _alive(int(pid)):
        return f"its worker {worker} is no longer running"
    return None


def repair_orphans(study: optuna.Study, storage: optuna.storages.RDBStorage, grace: timedelta) -> list[tuple[int, str]]:
    """Fail and requeue the RUNNING trials no live worker owns, and requeue the trials an interrupt or a repair failed
    whose worker stopped before it could queue them again; return their numbers and why (call under the lock)."""
    repaired: list[tuple[int, str]] = []
    study_id = storage.get_study_id_from_name(study.study_name)
    trials = study.get_trials(deepcopy=False)
    queued = {number for t in trials for number in t.system_attrs.get("retry_history", [])}
    for trial in trials:
        failure = TrialRecord.from_trial(trial).failure or ""
        stopped = failure.startswith((INTERRUPTED, REPAIRED))
        if trial.state == optuna.trial.TrialState.FAIL and stopped and trial.number not in queued:
            requeue(study, trial, max_retry=MAX_RETRY)
            repaired.append((trial.number, "it was failed, but its worker stopped before queueing it again"))
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        reason = orphaned(trial, grace)
        if reason is None:
            continue
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
        storage.set_trial_user_attr(trial_id, "failure", f"{REPAIRED}: {reason}")
        try:
            storage.set_trial_state_values(trial_id, optuna.trial.TrialState.FAIL)
        except optuna.exceptions.UpdateFinishedTrialError:
            continue  # its worker finished it meanwhile
        requeue(study, storage.get_trial(trial_id), max_retry=MAX_RETRY)
        repaired.append((trial.number, f"left running and failed ({reason})"))
    return repaired


class Heartbeat:
    """The heartbeat of one running trial: the first beat is recorded before the ``with`` body starts, then one
    every ``interval`` seconds from a daemon thread that stops when the body ends (or dies with the process)."""

    def __init__(self, storage: optuna.storages.RDBStorage, study_id: int, number: int) -> None:
        self.storage = storage
        self.trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, number)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Heartbeat:
        interval = self.storage.get_heartbeat_interval()
        if interval is not None:
            self.storage.record_heartbeat(self.trial_id)
            self._thread = threading.Thread(target=self._beat, args=(interval,), daemon=True, name="tuner-heartbeat")
            self._thread.start()
        return self

    def _beat(self, interval: int) -> None:
        while not self._stop.wait(interval):
            try:
                self.storage.record_heartbeat(self.trial_id)
            except optuna.exceptions.StorageInternalError as exc:
                # a busy database: this beat is lost, the next may pass (the grace period is three beats)
                logger.debug("heartbeat of trial id %s not recorded: %s", self.trial_id, exc)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
