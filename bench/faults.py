"""Fault injection on `tuner run` (issue 14 §2 and §5): a study on a slice of the demo dataset is stopped again and again
at random moments (Ctrl-C once, Ctrl-C twice, SIGKILL) and started again each time; then two workers started together
on the same SQLite file finish its budget. Prints what was run and what is left: RUNNING and WAITING trials (both must
be 0), finished trials against the budget (must be equal), and whether every stopped trial's configuration was
queued again. Each worker's stderr is kept in the work folder (round-N.log, final-N.log).

    python bench/faults.py [--rounds 9] [--budget 14] [--cases 30] [--seed 0] [--work /tmp/faults]

``--storage`` instead injects storage faults (issue 24 §2), each into a fresh study stopped during its trials, then
fixes the fault and resumes: PostgreSQL backends killed with ``pg_terminate_backend`` once (a transient disconnect)
and for 40 s (an outage), until the run, its retries spent, reads the study again for its report (then the server
answers again: the report of what is done is written), the output folder on a tmpfs remounted read-only (between a stopped run and the next
start: Linux refuses to remount a tmpfs read-only while a file on it is open for writing), the tmpfs filled (full
disk), the output folder deleted. Prints per fault the exit code, the last line the worker printed (which says whether the
report of what is done was written, or why it could not be), and the finished trials after the resume. Needs root (mount) and a PostgreSQL server (``--postgres``, default the test server).

    python bench/faults.py --storage [--budget 8] [--work /tmp/storage-faults]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import optuna
import yaml

from tuner.dataset import resolve_dataset
from tuner.io import write_jsonl
from tuner.front import TrialRecord, study_summary
from tuner.study import open_storage

SLOW_GENERATOR = '''
import time

def answer(question, contexts):
    time.sleep(0.05)
    return contexts[0] if contexts else "I don't know."
'''
FAULTS = ("Ctrl-C", "Ctrl-C twice", "SIGKILL")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def demo_slice(folder: Path, cases: int) -> Path:
    """The first ``cases`` demo questions with keypoints, the documents they need and the conflicts with those."""
    source = resolve_dataset("demo")
    golden = [row for row in read_jsonl(source / "golden.jsonl") if row.get("keypoints")][:cases]
    needed = {doc for row in golden for doc in row["relevant_doc_ids"]}
    corpus = [row for row in read_jsonl(source / "corpus.jsonl") if row["doc_id"] in needed]
    conflicts = [row for row in read_jsonl(source / "conflicts.jsonl") if row["conflicts_with"] in needed]
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "golden.jsonl", golden)
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "conflicts.jsonl", conflicts)
    return folder


def write_study_file(work: Path, dataset: Path, budget: int, **overrides: Any) -> Path:
    (work / "slowgen.py").write_text(SLOW_GENERATOR)
    (work / "space.yaml").write_text(yaml.safe_dump({
        "top_k": {"type": "int", "low": 1, "high": 8},
        "chunk_size": {"type": "categorical", "choices": [40, 80, 160]},
        "chunk_unit": {"type": "categorical", "choices": ["words"]},
        "retriever": {"type": "categorical", "choices": ["bm25"]},
    }))
    study = {
        "name": "faults", "dataset": str(dataset), "search_space": "space.yaml", "settings": {"candidate_depth": 10},
        "generator": {"backend": "callable", "function": "slowgen:answer"}, "noise_floor": "auto",
        "budget": {"trials": budget}, "pruning": {"enabled": False}, "heartbeat_interval": 1,
        "sampler": {"name": "tpe", "seed": 0}, "output": "out", **overrides,
    }
    path = work / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def start(work: Path, study_file: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{work}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "TUNER_CACHE": str(work / "cache")}
    return subprocess.Popen(
        [sys.executable, "-m", "tuner", "run", str(study_file), "--no-report"], env=env, text=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background shell ignores SIGINT
    )


def inject(worker: subprocess.Popen[str], fault: str) -> None:
    if fault == "SIGKILL":
        worker.send_signal(signal.SIGKILL)
        return
    worker.send_signal(signal.SIGINT)
    if fault == "Ctrl-C twice":
        time.sleep(0.2)
        worker.send_signal(signal.SIGINT)


def _terminate(postgres: str, application: str) -> int:
    import psycopg

    with psycopg.connect(postgres, autocommit=True) as connection:
        row = connection.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
                                 (application,)).fetchone()
    return int(row[0]) if row else 0


def _fill(folder: Path) -> None:
    with (folder / "filler").open("wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass


def storage_fault_round(work: Path, dataset: Path, budget: int, fault: str, postgres: str) -> dict[str, Any]:
    """One fault: a fresh study, the fault injected once its second trial runs, the exit and last line, the fault
    fixed, a resume, and the finished trials then."""
    import uuid

    import psycopg

    folder = work / fault.replace(" ", "-")
    folder.mkdir(parents=True)
    overrides: dict[str, Any] = {"noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}}
    schema = f"tuner_faults_{uuid.uuid4().hex[:8]}"
    mount = folder / "out"
    if fault.startswith("PostgreSQL"):
        with psycopg.connect(postgres, autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {schema}")
        overrides["storage"] = f"{postgres}?options=-csearch_path%3D{schema}&application_name={schema}"
    else:
        mount.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    study_file = write_study_file(folder, dataset, budget, **overrides)
    try:
        worker = start(folder, study_file)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(worker.stderr or []), daemon=True)
        reader.start()
        while worker.poll() is None and not any("trial 1 " in line for line in lines):
            time.sleep(0.1)
        stop = time.monotonic() + (40 if fault == "PostgreSQL outage" else 0)
        if fault == "PostgreSQL back for the report":
            # down until the trial loop gave up and the run reads the study again for its report, then back
            while worker.poll() is None and not any("reading the study again" in line for line in lines):
                _terminate(postgres, schema)
                time.sleep(0.1)
        elif fault.startswith("PostgreSQL"):
            _terminate(postgres, schema)
            while time.monotonic() < stop and worker.poll() is None:
                _terminate(postgres, schema)
                time.sleep(0.2)
        elif fault == "read-only folder":
            # a mount with files open for writing cannot become read-only: stop the worker (Ctrl-C), then start one
            # on the folder made read-only
            inject(worker, "Ctrl-C")
            worker.wait(timeout=300)
            reader.join(timeout=30)
            subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
            worker, lines = start(folder, study_file), []
            reader = threading.Thread(target=lambda: lines.extend(worker.stderr or []), daemon=True)
            reader.start()
        elif fault == "full disk":
            _fill(mount)
        elif fault == "folder deleted":
            shutil.rmtree(mount / "faults")
        code = worker.wait(timeout=600)
        reader.join(timeout=30)
        said = [line.strip() for line in lines if line.strip()]
        if fault == "read-only folder":
            subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
        elif fault == "full disk":
            (mount / "filler").unlink()
        resumed = start(folder, study_file)
        resumed_code = resumed.wait(timeout=600)
        url = overrides.get("storage") or f"sqlite:///{mount / 'faults' / 'study.db'}"
        study = optuna.load_study(study_name="faults", storage=open_storage(url))
        summary = study_summary(study)
        line = said[-1] if said else ""
        return {"fault": fault, "exit": code, "line": line, "traceback": any("Traceback" in l for l in said),
                "stopped_with_report": "the report of what is done written" in line,
                "resume_exit": resumed_code, "finished_after_resume": finished_trials(summary), "budget": budget,
                "running_left": summary.n_running}
    finally:
        if fault.startswith("PostgreSQL"):
            with psycopg.connect(postgres, autocommit=True) as connection:
                connection.execute(f"DROP SCHEMA {schema} CASCADE")
        else:
            subprocess.run(["umount", "-l", str(mount)], check=False)


def finished_trials(summary: dict[str, Any]) -> int:
    return int(summary.n_complete + summary.n_pruned - summary.n_duplicates)


def storage_faults(work: Path, budget: int, cases: int, postgres: str) -> None:
    dataset = demo_slice(work / "data", cases)
    faults = ("PostgreSQL backends killed once", "PostgreSQL outage", "PostgreSQL back for the report", "read-only folder",
              "full disk", "folder deleted")
    for fault in faults:
        print(json.dumps(storage_fault_round(work, dataset, budget, fault, postgres), ensure_ascii=False), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", action="store_true", help="inject storage faults instead of interrupts")
    parser.add_argument("--postgres", default="postgresql://root@127.0.0.1:5432/test")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--budget", type=int, default=14)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/faults"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    if args.storage:
        storage_faults(args.work, args.budget, args.cases, args.postgres)
        return
    study_file = write_study_file(args.work, demo_slice(args.work / "data", args.cases), args.budget)
    rng = random.Random(args.seed)
    rounds: list[dict[str, Any]] = []
    started = time.monotonic()
    for number in range(args.rounds):
        fault = FAULTS[number % len(FAULTS)]
        worker = start(args.work, study_file)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(worker.stderr or []), daemon=True)
        reader.start()
        # the first round stops the calibration; the others a random moment after the worker's first trial began
        phase = "calibrating" if number == 0 else "trial "
        while worker.poll() is None and not any(phase in line for line in lines):
            time.sleep(0.1)
        delay = rng.uniform(0.5, 1.5) if number == 0 else rng.uniform(0.0, 6.0)
        try:
            worker.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            inject(worker, fault)
        worker.wait(timeout=300)
        reader.join(timeout=30)
        err = "".join(lines)
        (args.work / f"round-{number}.log").write_text(err)
        rounds.append({"fault": fault, "phase": phase.strip(), "after_s": round(delay, 1), "exit": worker.returncode,
                       "traceback": "Traceback" in err})
        print(json.dumps(rounds[-1]), flush=True)
    pair = [start(args.work, study_file) for _ in range(2)]
    finals = [(w.wait(timeout=1800), w.communicate()[1]) for w in pair]
    for index, (_, err) in enumerate(finals):
        (args.work / f"final-{index}.log").write_text(err)
    study = optuna.load_study(study_name="faults", storage=open_storage(f"sqlite:///{args.work / 'out' / 'faults' / 'study.db'}"))
    summary = study_summary(study)
    states = [t.state for t in study.trials]
    stopped = [t for t in study.trials if t.state == optuna.trial.TrialState.FAIL]
    queued = {number for t in study.trials for number in t.system_attrs.get("retry_history", [])}
    lost = [t.number for t in stopped if t.number not in queued]
    print(json.dumps({
        "rounds": len(rounds),
        "faults": {f: sum(r["fault"] == f for r in rounds) for f in FAULTS},
        "exits": sorted({r["exit"] for r in rounds}),
        "tracebacks": sum(r["traceback"] for r in rounds) + sum("Traceback" in err for _, err in finals),
        "final_workers_exit": [code for code, _ in finals],
        "trials": len(study.trials),
        "finished": summary.n_complete + summary.n_pruned - summary.n_duplicates,
        "budget": args.budget,
        "failed_by_faults": len(stopped),
        "failure_reasons": sorted({(TrialRecord.from_trial(t).failure or "heartbeat stale").split(":")[0] for t in stopped}),
        "running_left": states.count(optuna.trial.TrialState.RUNNING),
        "waiting_left": states.count(optuna.trial.TrialState.WAITING),
        "stopped_not_requeued": lost,
        "calibrations": sum("calibrating the noise floor" in err for _, err in finals),
        "elapsed_s": round(time.monotonic() - started),
    }, indent=2))


if __name__ == "__main__":
    main()
