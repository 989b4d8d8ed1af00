"""The embedding store of a PostgreSQL study lives in that database: workers (as on several machines, each with its own
TUNER_CACHE) embed a text once between them, a text another worker is embedding is waited for rather than embedded
again, and a worker killed while embedding leaves no torn vector."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from tests.study_tests.test_study import write_study
from tests.study_tests.workers import gated, open_when_two_workers_run
from tuner.embedding import CachedEncoder, PostgresEmbeddingStore, vector_id
from tuner.llm.testing import FakeChatServer, context_echo_reply
from tuner.study import load_study_file

pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
MODEL = "all-MiniLM-L6-v2"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _rows(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [(m, h) for m, h in conn.execute("SELECT model, text_hash FROM tuner_embeddings").fetchall()]


@pytest.mark.parametrize(
    ("storage", "setting", "expected"),
    [
        ("sqlite:///x.db", None, None),  # a study file from before the setting: auto
        ("postgresql://u@db/tuner", None, "postgresql://u@db/tuner"),
        ("postgresql://u@db/tuner", "local", None),
        ("sqlite:///x.db", "postgresql+psycopg://u@vectors/v", "postgresql+psycopg://u@vectors/v"),
    ],
)
def test_where_the_embedding_store_lives(
    tiny_dataset_dir: Path, tmp_path: Path, storage: str, setting: str | None, expected: str | None
) -> None:
    overrides = {} if setting is None else {"embedding_cache": setting}
    study_file = write_study(tmp_path, tiny_dataset_dir, **overrides)
    assert load_study_file(study_file, storage=storage).embedding_cache_url == expected


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("mysql://u@db/c", "embedding_cache"),
        ("postgresql://tuner:pw-SECRET@127.0.0.1:9/none", "embedding store postgresql://tuner:***@127.0.0.1:9/none: cannot connect"),
    ],
)
def test_an_embedding_cache_that_is_not_a_reachable_postgresql_database_is_one_line(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: str, message: str
) -> None:
    from tuner.cli import main

    study_file = write_study(tmp_path, tiny_dataset_dir, embedding_cache=setting, enqueue=[{"top_k": 1, "retriever": "dense", "chunk_size": 40}])
    assert main(["run", str(study_file), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "pw-SECRET" not in err[0], err
    assert not (tmp_path / "out").exists()  # refused before any work: no storage, no trial


@pytest.mark.postgres
def test_two_stores_share_verified_vectors_and_a_damaged_row_is_encoded_again(
    postgres_schema: str, encoder: CachedEncoder
) -> None:
    first = CachedEncoder(encoder.inner, PostgresEmbeddingStore(postgres_schema))
    second = CachedEncoder(encoder.inner, PostgresEmbeddingStore(postgres_schema))
    texts = ["the warranty lasts two years", "退货期限为三十天", "firmware 4.2 adds offline mode"]
    before = encoder.texts_encoded
    vectors = first.encode(texts)
    assert encoder.texts_encoded - before == 3
    np.testing.assert_array_equal(second.encode(texts), vectors)  # another worker's connection: read, not encoded
    assert encoder.texts_encoded - before == 3

    # one flipped byte in a stored vector: the row fails its checksum, is missing to readers, and is replaced
    with psycopg.connect(postgres_schema, autocommit=True) as conn:
        conn.execute(
            "UPDATE tuner_embeddings SET vector = overlay(vector placing '\\xff'::bytea from 9 for 1) WHERE text_hash = %s",
            (_hash(texts[1]),),
        )
    assert second.missing(texts) == [texts[1]]
    assert second.store.damaged_rows == 1
    np.testing.assert_allclose(second.encode(texts), vectors, atol=1e-6)
    assert encoder.texts_encoded - before == 4
    assert first.missing(texts) == [] and first.store.damaged_rows == 0


@pytest.mark.postgres
def test_a_text_another_worker_claimed_is_waited_for_and_taken_over_when_it_stops(
    postgres_schema: str, encoder: CachedEncoder
) -> None:
    holder, waiter = PostgresEmbeddingStore(postgres_schema), PostgresEmbeddingStore(postgres_schema)
    cached = CachedEncoder(encoder.inner, waiter)
    vid = vector_id(MODEL, "")
    held, free = "a chunk the other worker is embedding", "a chunk nobody holds"
    reference = encoder.encode([held, free])  # the session's SQLite store: the vectors to expect
    results: dict[str, np.ndarray] = {}
    before = encoder.texts_encoded
    with holder.claim(vid, [_hash(held), _hash("a chunk the other worker drops")]) as mine:
        assert len(mine) == 2
        worker = threading.Thread(target=lambda: results.update(wait=cached.encode([held, free])))
        worker.start()
        deadline = time.monotonic() + 30
        while encoder.texts_encoded == before and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        assert worker.is_alive()  # the free text is done; the held one is waited for, not encoded
        assert encoder.texts_encoded - before == 1
        holder.put_many(vid, {_hash(held): reference[0]})
    worker.join(timeout=30)
    np.testing.assert_allclose(results["wait"], reference, atol=1e-6)
    assert encoder.texts_encoded - before == 1

    # a worker that stops without storing (its claims end with its session): the waiting one encodes the text itself
    dropped = "a chunk the other worker drops"
    with holder.claim(vid, [_hash(dropped)]):
        worker = threading.Thread(target=lambda: results.update(drop=cached.encode([dropped])))
        worker.start()
        time.sleep(0.2)
        assert worker.is_alive() and encoder.texts_encoded - before == 1
    worker.join(timeout=30)
    assert encoder.texts_encoded - before == 2 and results["drop"].shape == (1, reference.shape[1])


SPACE_FIXED_CHUNKS = {"top_k": {"type": "int", "low": 1, "high": 4}}


def _worker(study_file: Path, storage: str, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tuner", "run", str(study_file), "--storage", storage, "--no-report", "--json"],
        env={**os.environ, "TUNER_CACHE": str(cache)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _summaries(*workers: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out = []
    for worker in workers:
        stdout, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err[-1500:]
        out.append(json.loads(stdout))
    return out


@pytest.mark.postgres
@pytest.mark.slow
def test_two_workers_embed_each_text_once_with_the_shared_store_and_an_isolated_one_embeds_them_all_again(
    tiny_dataset_dir: Path, tmp_path: Path, postgres_schema: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import optuna
    import yaml

    from tuner.cli import main
    from tuner.front import TrialRecord

    runs: dict[str, dict[int, int]] = {}  # mode → {pid of a worker that ran a trial: texts it embedded}
    requests: dict[str, list[str]] = {}  # mode → the generator requests the server received
    for mode, count in (("shared", 2), ("isolated", 1)):
        # two workers: the replies wait until both have taken a trial, so neither runs the budget alone
        gate = threading.Event()
        if count == 1:
            gate.set()
        with FakeChatServer(gated(gate, context_echo_reply)) as server:
            folder = tmp_path / mode
            folder.mkdir()
            cache, name = ("auto" if mode == "shared" else "local"), f"{mode}-{uuid.uuid4().hex[:8]}"
            study_file = write_study(
                folder, tiny_dataset_dir, name=name, budget={"trials": 4}, enqueue=[], pruning={"enabled": False},
                heartbeat_interval=1, call_cache=cache, embedding_cache=cache,
                settings={"candidate_depth": 10, "retriever": "dense", "chunk_size": 40},
                generator={"backend": "openai", "base_url": server.url, "model": f"stand-in-{mode}", "api_key_env": None,
                           "timeout": 600},  # a reply held at the gate is not timed out and asked again
            )
            (folder / "space.yaml").write_text(yaml.safe_dump(SPACE_FIXED_CHUNKS))
            if count == 2:
                open_when_two_workers_run(gate, name, postgres_schema)
                workers = [_worker(study_file, postgres_schema, folder / f"cache-{i}") for i in (1, 2)]
                embedded = {w.pid: run["texts_embedded"] for w, run in zip(workers, _summaries(*workers))}
            else:  # the isolated worker runs in this process (no interpreter, torch or model to start): its own cache
                monkeypatch.setenv("TUNER_CACHE", str(folder / "cache-1"))
                capsys.readouterr()
                assert main(["run", str(study_file), "--storage", postgres_schema, "--no-report", "--json"]) == 0
                embedded = {os.getpid(): json.loads(capsys.readouterr().out)["texts_embedded"]}
            requests[mode] = [json.dumps(r.body, sort_keys=True) for r in server.requests]
            study = optuna.load_study(study_name=name, storage=postgres_schema)
            ran = {int(str(TrialRecord.from_trial(t).worker).rsplit(":", 1)[1]) for t in study.trials}
            assert ran == set(embedded), "each worker should have run a trial"
            runs[mode] = embedded
    stored = len(_rows(postgres_schema))
    # every text the study needs was embedded once between the two workers, and stored once
    assert stored > 0 and sum(runs["shared"].values()) == stored
    # an isolated store (a machine with its own cache) reads none of those rows: its worker embeds every text itself
    assert list(runs["isolated"].values()) == [stored]
    # and the shared call cache: no generator request reached the server twice
    assert requests["shared"] and len(set(requests["shared"])) == len(requests["shared"])


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_killed_while_embedding_leaves_only_whole_vectors_that_the_next_worker_reuses(
    tmp_path: Path, postgres_schema: str, encoder: CachedEncoder
) -> None:
    study_file = write_study(
        tmp_path, Path("demo"), name=f"killed-{uuid.uuid4().hex[:8]}", budget={"trials": 1}, enqueue=[],
        pruning={"enabled": False}, settings={"retriever": "dense", "chunk_size": 48}, embedding={"batch_size": 16},
    )
    worker = _worker(study_file, postgres_schema, tmp_path / "cache")
    deadline = time.monotonic() + 300
    stored = 0
    with psycopg.connect(postgres_schema, autocommit=True) as conn:  # one connection polls: no backend per look
        while stored < 48 and time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.05)
            try:
                stored = conn.execute("SELECT count(*) FROM tuner_embeddings").fetchone()[0]  # type: ignore[index]
            except psycopg.errors.UndefinedTable:
                continue
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    rows = _rows(postgres_schema)
    assert stored >= 48 and rows, "the worker stored no vector before it was killed"

    # every stored row is whole: it passes the checksum read path, and is the vector of a text of the study
    store = PostgresEmbeddingStore(postgres_schema)
    by_model: dict[str, list[str]] = {}
    for model, text_hash in rows:
        by_model.setdefault(model, []).append(text_hash)
    found = {model: store.get_many(model, hashes) for model, hashes in by_model.items()}
    assert sum(len(v) for v in found.values()) == len(rows) and store.damaged_rows == 0

    # the next worker reuses them: of the dataset's chunk texts, it encodes only the ones not stored
    from tuner.cache import DiskCache
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import RetrievalSettings

    pipeline = RetrievalPipeline(load_dataset(resolve_dataset("demo")), DiskCache(tmp_path / "cache"))
    passages = pipeline.table(RetrievalSettings(retriever="dense", chunk_size=48)).passages
    resumed = CachedEncoder(encoder.inner, store)
    stored_texts = [p for p in passages if _hash(p) in found[resumed.vector_id]][:20]
    new_texts = [p for p in passages if _hash(p) not in found[resumed.vector_id]][:5]
    assert stored_texts and new_texts, "the worker was killed before or after the chunks were embedded"
    before = encoder.texts_encoded
    vectors = resumed.encode(stored_texts + new_texts)
    assert encoder.texts_encoded - before == len(new_texts)
    np.testing.assert_allclose(vectors[: len(stored_texts)], encoder.encode(stored_texts), atol=1e-5)
