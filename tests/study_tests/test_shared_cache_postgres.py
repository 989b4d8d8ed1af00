"""The LLM call cache of a PostgreSQL study lives in that database: workers (as on several machines, each with its own
TUNER_CACHE) never send a request another worker already sent, and a killed worker leaves no torn row."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import optuna
import psycopg
import pytest
import yaml

from tests.study_tests.test_study import write_study
from tests.study_tests.test_workers_postgres import URL
from tests.study_tests.workers import gated, open_when_two_workers_run
from tuner.cli import main
from tuner.llm import CachedReply, PostgresCallCache
from tuner.llm.testing import FakeChatServer, Reply, context_echo_reply
from tuner.study import load_study_file

pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")


def needs_postgres(test: Callable[..., None]) -> Callable[..., None]:
    marked: Callable[..., None] = pytest.mark.postgres(
        pytest.mark.usefixtures("postgres_server")(test)
    )
    return marked


@pytest.mark.parametrize(
    ("storage", "call_cache", "expected"),
    [
        ("sqlite:///x.db", "auto", None),
        ("postgresql://u@db/tuner", "auto", "postgresql://u@db/tuner"),
        ("postgresql://u@db/tuner", "local", None),
        ("sqlite:///x.db", "postgresql+psycopg://u@cachedb/c", "postgresql+psycopg://u@cachedb/c"),
    ],
)
def test_where_the_call_cache_lives(
    tiny_dataset_dir: Path, tmp_path: Path, storage: str, call_cache: str, expected: str | None
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, call_cache=call_cache)
    assert load_study_file(study_file, storage=storage).call_cache_url == expected


def test_a_call_cache_that_is_not_postgresql_is_rejected(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, call_cache="mysql://u@db/c")
    assert main(["run", str(study_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(study_file) in err[0] and "call_cache" in err[0]


@needs_postgres
def test_postgres_call_cache_is_shared_between_connections_and_keeps_the_first_reply() -> None:
    key = f"test-{uuid.uuid4().hex}"
    first, second = PostgresCallCache(URL), PostgresCallCache(URL)
    assert first.get(key) is None
    first.put(key, {"model": "m"}, CachedReply("one", 3, 1))
    second.put(key, {"model": "m"}, CachedReply("two", 3, 1))  # a worker that raced on the same request
    assert second.get(key) == CachedReply("one", 3, 1)
    # trust authentication ignores the password; the cache never shows it
    assert "pw-SECRET" not in repr(PostgresCallCache(URL.replace("://root@", "://root:pw-SECRET@")))


BM25_SPACE = {  # what is cached here are LLM calls: no worker needs the embedding model
    "top_k": {"type": "int", "low": 1, "high": 4},
    "retriever": {"type": "categorical", "choices": ["bm25"]},
    "chunk_size": {"type": "categorical", "choices": [20, 40]},
}


def _study(folder: Path, dataset: Path, server: FakeChatServer, model: str, **overrides: Any) -> Path:
    folder.mkdir(parents=True)
    path = write_study(
        folder, dataset, pruning={"enabled": False}, heartbeat_interval=1,
        generator={"backend": "openai", "base_url": server.url, "model": model, "api_key_env": None,
                   "timeout": 600},  # a reply held at a gate is not timed out and asked again
        **overrides,
    )
    (folder / "space.yaml").write_text(yaml.safe_dump(BM25_SPACE))
    return path


def _worker(study_file: Path, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tuner", "run", str(study_file), "--storage", URL, "--no-report"],
        env={**os.environ, "TUNER_CACHE": str(cache)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )


def _finish(*workers: subprocess.Popen[str]) -> None:
    for worker in workers:
        _, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err[-1500:]


def _run_here(study_file: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One more worker, in this process (no interpreter to start): ``tuner run`` with its own ``TUNER_CACHE``."""
    monkeypatch.setenv("TUNER_CACHE", str(cache))
    assert main(["run", str(study_file), "--storage", URL, "--no-report"]) == 0


def _distinct(requests: list[Any]) -> int:
    return len({json.dumps(r.body, sort_keys=True) for r in requests})


@needs_postgres
@pytest.mark.slow
def test_two_workers_and_a_later_machine_repeat_no_call(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"shared-{uuid.uuid4().hex[:8]}"
    model = f"stand-in-{name}"  # no row of an earlier run (the table outlives tests) can answer this run's requests
    gate = threading.Event()  # the first phase's replies wait until both workers have taken a trial
    with FakeChatServer(gated(gate, context_echo_reply)) as server:
        study_file = _study(tmp_path / "a", tiny_dataset_dir, server, model, name=name, budget={"trials": 4}, enqueue=[])
        open_when_two_workers_run(gate, name, URL)
        _finish(_worker(study_file, tmp_path / "cache-1"), _worker(study_file, tmp_path / "cache-2"))
        sent = len(server.requests)
        assert sent > 0 and _distinct(server.requests) == sent  # nothing asked twice, across the two workers
        study = optuna.load_study(study_name=name, storage=URL)
        complete = [dict(t.params) for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        configs = list({json.dumps(c, sort_keys=True): c for c in complete}.values())
        assert configs

        # another machine (a fresh TUNER_CACHE) evaluates the same configurations in a new study: all cache hits
        again = _study(tmp_path / "b", tiny_dataset_dir, server, model, name=f"{name}-again",
                       budget={"trials": len(configs)}, enqueue=configs)
        _run_here(again, tmp_path / "cache-3", monkeypatch)
        assert len(server.requests) == sent

        # the same with a local cache on that machine: every call is sent again
        local = _study(tmp_path / "c", tiny_dataset_dir, server, model, name=f"{name}-local",
                       budget={"trials": len(configs)}, enqueue=configs, call_cache="local")
        _run_here(local, tmp_path / "cache-4", monkeypatch)
        assert len(server.requests) - sent == sent


@needs_postgres
@pytest.mark.slow
def test_a_killed_worker_leaves_no_torn_row(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    name = f"killed-{uuid.uuid4().hex[:8]}"
    model = f"stand-in-{uuid.uuid4().hex[:8]}"  # this run's rows, apart from earlier runs' in the shared table
    with FakeChatServer(context_echo_reply) as server:
        server.script("", Reply("slow answer", delay=0.05))
        study_file = _study(tmp_path / "a", tiny_dataset_dir, server, model, name=name, budget={"trials": 50}, enqueue=[])
        worker = _worker(study_file, tmp_path / "cache")
        deadline = time.monotonic() + 300
        while len(server.requests) < 15 and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.05)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
        asked = {json.dumps(r.body, sort_keys=True) for r in server.requests}
    assert len(asked) >= 15
    with psycopg.connect(URL) as conn:
        rows = conn.execute("SELECT request, text FROM tuner_llm_calls WHERE request LIKE %s", (f'%"{model}"%',)).fetchall()
    # every stored row is whole: its request parses and its reply is the one the server sent
    stored = {json.dumps(json.loads(request)["messages"], sort_keys=True) for request, _ in rows}
    sent_messages = {json.dumps(json.loads(body)["messages"], sort_keys=True) for body in asked}
    assert rows and stored <= sent_messages and {text for _, text in rows} == {"slow answer"}
