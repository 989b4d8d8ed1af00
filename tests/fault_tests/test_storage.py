"""Issue 24 §2: storage faults under `tuner run` (PostgreSQL connection lost, output folder full or read-only) end in
one line naming the storage or path and the cause, exit 2, and the same command resumes the study once fixed; and
issue 24 §3: `tuner calibrate` follows the Ctrl-C rules of `tuner run` and shows its progress run by run."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import optuna
import pytest
import sqlalchemy.exc

from tests.fault_tests.test_interrupts import Worker, assert_clean_exit, run_here, tuner_run, wait_until, write_fault_study
from tests.net import TcpProxy
from tests.study_tests.test_workers_postgres import URL, require_postgres
from tuner.front import study_summary
from tuner.study import open_storage
from tuner.study._faults import storage_fault

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")]


def _raised(exc: BaseException, wrapper: type[Exception] = optuna.exceptions.StorageInternalError) -> Exception:
    """``exc`` as Optuna hands it over: wrapped, with the original as its cause."""
    try:
        try:
            raise exc
        except BaseException as inner:
            raise wrapper("An exception is raised during the commit.") from inner
    except Exception as outer:
        return outer


def test_storage_faults_are_one_line_naming_storage_and_cause(tmp_path: Path) -> None:
    full = _raised(OSError(errno.ENOSPC, "No space left on device", "/data/out/report.html"))
    assert storage_fault(full, "sqlite:///out/study.db") == "/data/out/report.html: no space left on device"
    readonly = _raised(sqlalchemy.exc.OperationalError("UPDATE trials", {}, Exception("attempt to write a readonly database")))
    database = tmp_path / "study.db"
    database.touch()
    assert storage_fault(readonly, f"sqlite:///{database}") == f"storage {database}: read-only: cannot write the study database"
    database.unlink()  # SQLite says "readonly" of a database deleted under it too
    assert storage_fault(readonly, f"sqlite:///{database}") == f"storage {database}: deleted or moved while the run used it (its folder removed?)"
    lost = _raised(sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("the connection is closed")))
    line = storage_fault(lost, "postgresql://tuner:s3cret@db.example/studies")
    assert line is not None and line.startswith("storage postgresql://tuner:***@db.example/studies: connection lost")
    assert "s3cret" not in line
    assert storage_fault(_raised(ValueError("a bug")), "sqlite:///out/study.db") is None


def _finished(study: optuna.Study) -> int:
    summary = study_summary(study)
    return int(summary.n_complete + summary.n_pruned - summary.n_duplicates)


def _resume(folder: Path, study_file: Path, storage: str, target: int) -> None:
    run_here(folder, study_file)
    study = optuna.load_study(study_name="tiny", storage=open_storage(storage))
    assert _finished(study) == target and study_summary(study).n_running == 0


def _one_error_line(worker: Worker) -> str:
    lines = [line for line in worker.output.splitlines() if line.startswith("tuner: error:")]
    assert len(lines) == 1 and "Traceback" not in worker.output, worker.output
    return lines[0]


@pytest.fixture
def postgres_storage() -> Iterator[tuple[str, str]]:
    """(storage URL with a schema of its own, the application name its connections carry)."""
    require_postgres()
    import psycopg

    schema = f"tuner_fault_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(URL, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{URL}?options=-csearch_path%3D{schema}&application_name={schema}", schema
    finally:
        with psycopg.connect(URL, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def outage(postgres_storage: tuple[str, str]) -> Iterator[tuple[str, TcpProxy]]:
    """(the storage URL through a loopback proxy, the proxy): taking the proxy down is the server going away."""
    storage, _ = postgres_storage
    with TcpProxy(("127.0.0.1", 5432)) as proxy:
        yield storage.replace("@127.0.0.1:5432/", f"@127.0.0.1:{proxy.port}/"), proxy


def test_postgres_outage_stops_with_one_line_and_the_study_resumes(
    tiny_dataset_dir: Path, tmp_path: Path, outage: tuple[str, TcpProxy]
) -> None:
    storage, proxy = outage
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, storage=storage, budget={"trials": 4})
    worker = tuner_run(tmp_path, study_file, "--no-report", SLOW_ANSWER="0.3")
    wait_until(worker, lambda: "trial 0 " in worker.output, what="a first trial", timeout=300)
    proxy.down()  # down for longer than the retries and the report's re-read: until the worker has exited
    assert worker.wait(timeout=300) == 2, worker.output
    proxy.up()
    line = _one_error_line(worker)
    # wherever the outage met the run (a trial, reading the study again, writing the report), the one line names the
    # storage and the lost connection, says nothing was written, and how to resume
    assert f"storage {storage.split('?')[0]}" in line and "connection lost" in line and "resume" in line, line
    assert "no report could be written (" in line, line
    _resume(tmp_path, study_file, storage, 4)


def test_postgres_back_within_the_retries_gets_the_report_written(
    tiny_dataset_dir: Path, tmp_path: Path, outage: tuple[str, TcpProxy]
) -> None:
    storage, proxy = outage
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, storage=storage, budget={"trials": 4})
    worker = tuner_run(tmp_path, study_file, SLOW_ANSWER="0.3")
    wait_until(worker, lambda: "trial 0 " in worker.output, what="a first trial", timeout=300)
    proxy.down()  # down until the trial loop has given up and the run starts reading the study again for its report
    wait_until(worker, lambda: "reading the study again for its report" in worker.output,
               what="the report's re-read", timeout=300)
    proxy.up()
    assert worker.wait(timeout=120) == 2, worker.output
    line = _one_error_line(worker)
    assert "connection lost" in line and "stopped as Ctrl-C does, the report of what is done written" in line, line
    report = tmp_path / "out" / "tiny" / "report.html"
    assert report.is_file() and str(report) in line, line
    study = optuna.load_study(study_name="tiny", storage=open_storage(storage))
    assert study_summary(study).n_running == 0  # the trial it hit was failed and queued again
    _resume(tmp_path, study_file, storage, 4)


def test_a_deleted_study_database_stops_with_one_line_saying_no_report_could_be_written(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, budget={"trials": 5})
    worker = tuner_run(tmp_path, study_file, SLOW_ANSWER="0.3")
    wait_until(worker, lambda: "trial 0 " in worker.output, what="a first trial", timeout=300)
    shutil.rmtree(tmp_path / "out")
    assert worker.wait(timeout=120) == 2, worker.output
    line = _one_error_line(worker)
    database = tmp_path / "out" / "tiny" / "study.db"
    assert f"no report could be written (the study database {database} is gone)" in line and "resume" in line, line
    assert not (tmp_path / "out").exists()  # nothing half-written: no empty database, no report


def _mount_tmpfs(folder: Path) -> bool:
    folder.mkdir(parents=True)
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], capture_output=True).returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (root only): the output folder of a study that runs out of space or is made read-only."""
    folder = tmp_path / "out"
    if not _mount_tmpfs(folder):
        pytest.skip("needs root and mount -t tmpfs")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@contextmanager
def _kept_full(folder: Path) -> Iterator[None]:
    """``folder``'s file system filled, and kept full until the block exits: a thread takes every page that is freed
    (SQLite's rollback frees its journal's pages on the failing write, and without this the study's config could then
    fit: the run would end on its other, also truthful, line and the test would check a race, not the product)."""
    done = threading.Event()
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    page = bytes(4096)

    def fill() -> None:
        while not done.is_set():
            try:
                os.write(fd, page)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                time.sleep(0.001)

    filler = threading.Thread(target=fill, daemon=True)
    filler.start()
    try:
        while shutil.disk_usage(folder).free and filler.is_alive():  # full before the block starts
            time.sleep(0.01)
        yield
    finally:
        done.set()
        filler.join()
        os.close(fd)
        (folder / "filler").unlink()


def test_full_disk_and_read_only_folder_are_one_line_and_the_study_resumes(
    tiny_dataset_dir: Path, tmp_path: Path, small_disk: Path
) -> None:
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, budget={"trials": 5})
    storage = f"sqlite:///{small_disk / 'tiny' / 'study.db'}"
    worker = tuner_run(tmp_path, study_file, "--no-report", SLOW_ANSWER="0.3")
    wait_until(worker, lambda: "trial 0 " in worker.output, what="a first trial", timeout=300)
    with _kept_full(small_disk):
        assert worker.wait(timeout=300) == 2, worker.output
    line = _one_error_line(worker)
    assert str(small_disk / "tiny") in line and "no space left on device" in line, line
    assert "no report could be written" in line, line  # the study is read again, its config cannot be written
    # read-only: Linux remounts a tmpfs read-only only while no file on it is open for writing, so between runs
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    worker = tuner_run(tmp_path, study_file, "--no-report", SLOW_ANSWER="0")
    assert worker.wait(timeout=300) == 2, worker.output
    line = _one_error_line(worker)
    assert str(small_disk / "tiny") in line and "read-only" in line, line
    subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    _resume(tmp_path, study_file, storage, 5)


def test_calibrate_shows_progress_and_follows_the_ctrl_c_rules(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_fault_study(tmp_path, tiny_dataset_dir, noise_floor="auto")
    out = tmp_path / "floor.json"

    def calibrate(slow: str) -> Worker:
        return Worker(tmp_path, ["-m", "tuner", "calibrate", "--study", str(study_file), "--runs", "2", "--out", str(out)],
                      SLOW_ANSWER=slow)

    worker = calibrate("0.3")
    wait_until(worker, lambda: "noise floor: retrieving" in worker.output, what="the calibration starting")
    time.sleep(1.0)
    started = time.monotonic()
    worker.process.send_signal(signal.SIGINT)
    assert_clean_exit(worker, 130)
    assert time.monotonic() - started < 30 and "interrupted: no noise floor was written" in worker.output
    assert not out.exists()
    # twice: the second exits at once even while the first waits for an answer in flight
    worker = calibrate("5")
    wait_until(worker, lambda: "noise floor: retrieving" in worker.output, what="the calibration starting")
    time.sleep(1.0)
    worker.process.send_signal(signal.SIGINT)
    wait_until(worker, lambda: "stopping cleanly" in worker.output, what="the first interrupt acknowledged")
    started = time.monotonic()
    worker.process.send_signal(signal.SIGINT)
    assert worker.wait(timeout=30) == 130 and time.monotonic() - started < 10, worker.output
    # uninterrupted: a line per run, then the floor
    worker = calibrate("0")
    assert_clean_exit(worker, 0, timeout=300)
    for phase in ("regenerating answers", "re-judging the answers of run 0"):
        for run in (1, 2):
            assert f"noise floor: {phase}: run {run}/2 done" in worker.output, worker.output
    assert out.is_file()
