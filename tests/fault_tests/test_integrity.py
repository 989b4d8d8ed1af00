"""Fault injection (issue 14 §1): every cache row of the issue's table, reproduced on real stores, now survived.

Each test damages a real store the way the issue did (bytes flipped inside vector BLOBs, a truncated file, a
garbage header, a hand-edited demo dataset, a damaged cache entry) and checks the numbers equal those of a
clean cache, with one warning and exit 0.
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.fault_tests.conftest import flip_bytes
from tuner.cache import DiskCache
from tuner.cli import main
from tuner.dataset import load_dataset, resolve_dataset
from tuner.embedding import CachedEncoder, EmbeddingStore, vector_id
from tuner.evaluation.retrieval import score_contexts
from tuner.llm import CachedReply, CallCache
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

STORE = "embeddings.sqlite"
SETTINGS = {
    name: RetrievalSettings(retriever=name, chunk_size=40, candidate_depth=10, top_k=2, rerank_strength=0.5)
    for name in ("dense", "hybrid", "bm25")
}


def _run(dataset_dir: Path, root: Path, encoder: CachedEncoder) -> dict[str, tuple[float, np.ndarray, str]]:
    """Per retriever: mean recall@k, the candidate indices and the candidates' cache key, with cache root ``root``."""
    store = EmbeddingStore(root / STORE)
    try:
        pipeline = RetrievalPipeline(load_dataset(dataset_dir), DiskCache(root), encoder=CachedEncoder(encoder.inner, store))
        out = {}
        for name, settings in SETTINGS.items():
            recall = score_contexts(pipeline, pipeline.retrieve(settings))["recall_at_k"]
            candidates = pipeline.candidates(settings)
            out[name] = (float(np.mean(recall)), candidates.indices, candidates.key)
        return out
    finally:
        store.close()


def _flip_vector_blobs(path: Path) -> int:
    """Invert 8 bytes in the middle of every stored vector, in the file itself; returns how many were hit."""
    with sqlite3.connect(path) as conn:
        blobs = [row[0] for row in conn.execute("SELECT vector FROM embeddings")]
    conn.close()
    data = path.read_bytes()
    hit = 0
    for blob in blobs:
        offset = data.find(blob)
        if offset >= 0:
            flip_bytes(path, offset + len(blob) // 2)
            hit += 1
    return hit


def _integrity_check(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture(scope="module")
def clean(tiny_dataset_dir: Path, encoder: CachedEncoder, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[float, np.ndarray, str]]:
    """The figures of a clean cache, the reference every damaged run must reproduce."""
    return _run(tiny_dataset_dir, tmp_path_factory.mktemp("clean"), encoder)


def test_flipped_bytes_in_vector_blobs_leave_recall_unchanged(
    tiny_dataset_dir: Path, encoder: CachedEncoder, tmp_path: Path, clean: dict, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "cache"
    _run(tiny_dataset_dir, root, encoder)
    shutil.rmtree(root / "candidates")  # as in the issue: candidates are computed after the damage
    assert _flip_vector_blobs(root / STORE) > 20
    assert _integrity_check(root / STORE) == "ok"  # SQLite itself does not see the damage
    with caplog.at_level(logging.WARNING, logger="tuner"):
        damaged = _run(tiny_dataset_dir, root, encoder)
    for name in SETTINGS:
        assert damaged[name][0] == clean[name][0], name
        np.testing.assert_array_equal(damaged[name][1], clean[name][1])
    warnings = [r.getMessage() for r in caplog.records if "failed their checksum" in r.getMessage()]
    assert warnings, "the damaged vectors went unnoticed"
    store = EmbeddingStore(root / STORE)
    try:  # the damaged rows were replaced: reading them again finds nothing wrong
        table_texts = [c.passage for c in RetrievalPipeline(load_dataset(tiny_dataset_dir), DiskCache(root), encoder=encoder).table(SETTINGS["dense"]).chunks]
        assert CachedEncoder(encoder.inner, store).missing(table_texts) == [] and store.damaged_rows == 0
    finally:
        store.close()


def test_clean_store_restored_after_bad_vectors_serves_no_stale_candidates(
    tiny_dataset_dir: Path, encoder: CachedEncoder, tmp_path: Path, clean: dict
) -> None:
    root = tmp_path / "cache"
    _run(tiny_dataset_dir, root, encoder)
    shutil.copy(root / STORE, tmp_path / "clean.sqlite")
    # vectors that pass their checksums but are not this model's (a store filled by something else)
    store = EmbeddingStore(root / STORE)
    with sqlite3.connect(root / STORE) as conn:
        hashes = [row[0] for row in conn.execute("SELECT text_hash FROM embeddings WHERE model = ?", (vector_id(encoder.model_id, ""),))]
    conn.close()
    rng = np.random.default_rng(0)
    noise = rng.normal(size=(len(hashes), encoder.inner.dim)).astype(np.float32)
    store.put_many(vector_id(encoder.model_id, ""), dict(zip(hashes, noise / np.linalg.norm(noise, axis=1, keepdims=True))))
    store.close()
    wrong = _run(tiny_dataset_dir, root, encoder)
    assert wrong["dense"][2] != clean["dense"][2] and wrong["hybrid"][2] != clean["hybrid"][2]
    assert wrong["bm25"][2] == clean["bm25"][2]  # BM25 searches no vectors
    assert not np.array_equal(wrong["dense"][1], clean["dense"][1])

    for suffix in ("", "-wal", "-shm"):
        Path(str(root / STORE) + suffix).unlink(missing_ok=True)
    shutil.copy(tmp_path / "clean.sqlite", root / STORE)
    restored = _run(tiny_dataset_dir, root, encoder)
    for name in SETTINGS:
        assert restored[name][0] == clean[name][0] and restored[name][2] == clean[name][2], name
        np.testing.assert_array_equal(restored[name][1], clean[name][1])


def _truncate(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _garbage_header(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"this is not a SQLite file at all")


def _eval(dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, float, list[str]]:
    code = main(["eval", str(dataset_dir), "--json", "--retriever", "hybrid", "--chunk-size", "40", "--top-k", "2",
                 "--candidate-depth", "10"])
    captured = capsys.readouterr()
    recall = json.loads(captured.out)["recall_at_k"] if code == 0 else float("nan")
    return code, recall, [line for line in captured.err.splitlines() if line.strip()]


@pytest.mark.parametrize("damage", [_truncate, _garbage_header], ids=["truncated", "garbage-header"])
def test_damaged_store_file_is_moved_aside_and_rebuilt(
    tiny_dataset_dir: Path, fault_cache: Path, capsys: pytest.CaptureFixture[str], damage: object
) -> None:
    code, before, _ = _eval(tiny_dataset_dir, capsys)
    assert code == 0
    store = EmbeddingStore(fault_cache / STORE)
    store.close()  # the log is now in the file, which is what gets damaged
    assert (fault_cache / STORE).stat().st_size > 4096
    shutil.rmtree(fault_cache / "candidates")
    damage(fault_cache / STORE)  # type: ignore[operator]
    code, after, err = _eval(tiny_dataset_dir, capsys)
    assert code == 0 and after == before
    warnings = [line for line in err if "damaged" in line]
    assert len(warnings) == 1 and "embedding store" in warnings[0] and "moved to" in warnings[0], err
    aside = [p.name for p in fault_cache.iterdir() if ".damaged-" in p.name]
    assert any(name.startswith(f"{STORE}.damaged-") for name in aside)


@pytest.mark.parametrize("namespace", ["chunks", "bm25", "candidates", "rerank"])
def test_damaged_cache_entry_is_dropped_and_rebuilt(
    tiny_dataset_dir: Path, encoder: CachedEncoder, tmp_path: Path, clean: dict, namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = tmp_path / "cache"
    _run(tiny_dataset_dir, root, encoder)
    payloads = [p for p in (root / namespace).rglob("*") if p.is_file() and p.name != "MANIFEST.json" and p.stat().st_size > 16]
    assert payloads
    for path in payloads:
        flip_bytes(path, path.stat().st_size // 2, 4)
    if namespace == "bm25":  # an index is read only to build candidates
        shutil.rmtree(root / "candidates")
    with caplog.at_level(logging.WARNING, logger="tuner"):
        again = _run(tiny_dataset_dir, root, encoder)
    for name in SETTINGS:
        assert again[name][0] == clean[name][0], name
        np.testing.assert_array_equal(again[name][1], clean[name][1])
    assert any("does not match its checksums" in r.getMessage() for r in caplog.records)


def test_edited_demo_dataset_is_detected_and_rebuilt(fault_cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = resolve_dataset("demo")
    original = load_dataset(folder)
    golden = folder / "golden.jsonl"
    lines = golden.read_text("utf-8").splitlines()
    golden.write_text("\n".join(lines[:100]) + "\n", "utf-8")  # golden cut to 100 lines
    with caplog.at_level(logging.WARNING, logger="tuner"):
        assert resolve_dataset("demo") == folder
    assert load_dataset(folder).content_hash == original.content_hash and len(load_dataset(folder).golden) == len(lines)
    assert sum("moved to" in r.getMessage() for r in caplog.records) == 1

    cases = [json.loads(line) for line in lines]
    cases[0]["relevant_doc_ids"] = [original.corpus[-1].doc_id]  # relevant ids edited
    golden.write_text("".join(json.dumps(c) + "\n" for c in cases), "utf-8")
    assert load_dataset(resolve_dataset("demo")).content_hash == original.content_hash
    aside = sorted(p.name for p in folder.parent.iterdir() if ".damaged-" in p.name)
    assert len(aside) == 2  # both edited copies kept beside the cache, for whoever made them


def test_llm_call_cache_damage_is_a_miss_never_a_wrong_reply(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "llm_calls.sqlite"
    cache = CallCache(path)
    replies = {f"key-{i}": CachedReply(f"the answer is {i:04d} " * 8, 10 + i, 5) for i in range(50)}
    for key, reply in replies.items():
        cache.put(key, {"model": "m"}, reply)
    cache.close()
    data = path.read_bytes()
    target = replies["key-7"].text.encode()
    flip_bytes(path, data.find(target) + 5, 2)
    cache = CallCache(path)
    with caplog.at_level(logging.WARNING, logger="tuner"):
        assert cache.get("key-7") is None  # asked again, never the damaged text
    assert cache.get("key-8") == replies["key-8"]
    assert any("failed its checksum" in r.getMessage() for r in caplog.records)
    cache.close()

    _garbage_header(path)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tuner"):
        cache = CallCache(path)
        assert cache.get("key-8") is None and len(cache) == 0
        cache.put("key-8", {"model": "m"}, replies["key-8"])
        assert cache.get("key-8") == replies["key-8"]
    assert [r.getMessage() for r in caplog.records if "moved to" in r.getMessage()][0].startswith("LLM call cache")
    cache.close()
