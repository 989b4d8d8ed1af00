"""Fault injection on the demo (issue 14 §1): the cache rows of the issue's table, with recall before and after,
and the cost of verifying checksums.

1. Clean cold run of bm25, dense and hybrid (default settings) on the demo: recall@k.
2. Bytes flipped inside every vector BLOB of the embedding store (SQLite's integrity_check still "ok"),
   candidates computed afresh: recall again, and how many vectors were caught and encoded again.
3. Vectors that pass their checksums but are not the model's planted (a store filled by something else),
   then the clean store restored: recall must return to the clean figures (no stale candidates).
4. A truncated store and one with a garbage header: moved aside, rebuilt, recall again.
5. The cached demo edited on disk (golden cut to 100 lines; relevant ids of every case changed): BM25 recall.
6. Overhead: the checksum work of a warm run (row checksums of every vector read, content hashes of the
   vectors keying the candidates, manifest checks of every cache entry and of the demo), against the warm
   run and the cold run.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/integrity.py
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tuner.cache import DiskCache, array_digest
from tuner.dataset import load_dataset, resolve_dataset
from tuner.embedding import CachedEncoder, EmbeddingStore, SentenceTransformerEncoder, vector_id
from tuner.evaluation.retrieval import score_contexts
from tuner.retrieval import RetrievalPipeline
from tuner.settings import DEFAULT_EMBEDDING_MODEL, RetrievalSettings

RETRIEVERS = ("bm25", "dense", "hybrid")
STORE = "embeddings.sqlite"
warnings: list[str] = []


class _Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        warnings.append(record.getMessage())


def recalls(root: Path, inner: SentenceTransformerEncoder, dataset_dir: Path) -> dict[str, float]:
    store = EmbeddingStore(root / STORE)
    try:
        pipeline = RetrievalPipeline(load_dataset(dataset_dir), DiskCache(root), encoder=CachedEncoder(inner, store))
        return {r: round(float(np.mean(score_contexts(pipeline, pipeline.retrieve(RetrievalSettings(retriever=r)))["recall_at_k"])), 3)
                for r in RETRIEVERS}
    finally:
        store.close()


def flip_blobs(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        blobs = [row[0] for row in conn.execute("SELECT vector FROM embeddings")]
    conn.close()
    data = bytearray(path.read_bytes())
    hit = 0
    for blob in blobs:
        at = data.find(blob)
        if at >= 0:
            middle = at + len(blob) // 2
            data[middle : middle + 8] = bytes(b ^ 0xFF for b in data[middle : middle + 8])
            hit += 1
    path.write_bytes(bytes(data))
    return hit


def integrity_check(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    logging.getLogger("tuner").addHandler(_Collect(level=logging.WARNING))
    work = Path(tempfile.mkdtemp(prefix="integrity-", dir=os.environ.get("TMPDIR")))
    os.environ["TUNER_CACHE"] = str(work / "cache")
    demo = resolve_dataset("demo")
    inner = SentenceTransformerEncoder(DEFAULT_EMBEDDING_MODEL)
    inner.encode(["warm up the model"])
    root = work / "cache"
    rows: list[tuple[str, str, str]] = []

    cold = timed(lambda: rows.append(("clean, cold", json.dumps(recalls(root, inner, demo)), "")))
    clean = json.loads(rows[0][1])
    warm = timed(lambda: recalls(root, inner, demo))
    shutil.copy(root / STORE, work / "clean.sqlite")

    flipped = flip_blobs(root / STORE)
    check = integrity_check(root / STORE)
    shutil.rmtree(root / "candidates")
    encoded = inner.texts_encoded
    after = recalls(root, inner, demo)
    rows.append((f"bytes flipped in {flipped} vector BLOBs (integrity_check: {check})", json.dumps(after),
                 f"{inner.texts_encoded - encoded} vectors caught and encoded again; warnings: {len(warnings)}"))

    store = EmbeddingStore(root / STORE)
    model = vector_id(DEFAULT_EMBEDDING_MODEL, "")
    with sqlite3.connect(root / STORE) as conn:
        hashes = [row[0] for row in conn.execute("SELECT text_hash FROM embeddings WHERE model = ?", (model,))]
    conn.close()
    noise = np.random.default_rng(0).normal(size=(len(hashes), inner.dim)).astype(np.float32)
    store.put_many(model, dict(zip(hashes, noise / np.linalg.norm(noise, axis=1, keepdims=True))))
    store.close()
    rows.append(("foreign vectors with valid checksums", json.dumps(recalls(root, inner, demo)), "candidates keyed by the vectors' content"))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{root / STORE}{suffix}").unlink(missing_ok=True)
    shutil.copy(work / "clean.sqlite", root / STORE)
    rows.append(("clean store restored", json.dumps(recalls(root, inner, demo)), "no stale candidates"))

    for label, damage in (("truncated to half", "truncate"), ("garbage header", "header")):
        shutil.copy(work / "clean.sqlite", root / STORE)
        shutil.rmtree(root / "candidates")
        before = len(warnings)
        with (root / STORE).open("r+b") as handle:
            if damage == "truncate":
                handle.truncate((root / STORE).stat().st_size // 2)
            else:
                handle.write(b"this is not a SQLite file at all")
        result = recalls(root, inner, demo)
        rows.append((f"store {label}", json.dumps(result), f"{len(warnings) - before} warning line: {warnings[-1][:90]}…"))
    shutil.copy(work / "clean.sqlite", root / STORE)

    golden = demo / "golden.jsonl"
    lines = golden.read_text("utf-8").splitlines()
    golden.write_text("\n".join(lines[:100]) + "\n", "utf-8")
    rows.append(("demo golden cut to 100 lines", json.dumps({"cases": len(load_dataset(resolve_dataset("demo")).golden)}), ""))
    cases = [json.loads(line) for line in lines]
    docs = [json.loads(line)["doc_id"] for line in (demo / "corpus.jsonl").read_text("utf-8").splitlines()]
    for i, case in enumerate(cases):
        case["relevant_doc_ids"] = [docs[(i * 7) % len(docs)]]
    golden.write_text("".join(json.dumps(c) + "\n" for c in cases), "utf-8")
    rows.append(("demo relevant ids edited", json.dumps(recalls(root, inner, resolve_dataset("demo"))), ""))

    # overhead of verification in a warm run
    pipeline = RetrievalPipeline(load_dataset(demo), DiskCache(root), encoder=CachedEncoder(inner, EmbeddingStore(root / STORE)))
    for r in RETRIEVERS:
        pipeline.retrieve(RetrievalSettings(retriever=r))
    table = pipeline.table(RetrievalSettings())
    queries = pipeline.query_vectors(RetrievalSettings())
    with sqlite3.connect(root / STORE) as conn:
        stored = conn.execute("SELECT model, text_hash, vector FROM embeddings").fetchall()
    conn.close()
    # the row checksum of tuner.embedding: the first 16 bytes of sha256 over model, text hash and vector
    rows_s = timed(lambda: [hashlib.sha256(f"{m}\0{h}\0".encode() + b).digest()[:16] for m, h, b in stored])
    digest_s = timed(lambda: array_digest(table.embeddings(), queries))
    cache = DiskCache(root)
    entries = [e for ns in ("chunks", "bm25", "candidates", "datasets") for e in (root / ns).iterdir()
               if e.is_dir() and not e.name.startswith(".") and ".damaged-" not in e.name]  # not staging, not set aside

    def unexpected(folder: Path) -> None:
        raise AssertionError(f"{folder}: a valid entry was rebuilt")

    # a cache hit is the manifest check plus ``read``; ``read`` does nothing here
    manifests_s = timed(lambda: [cache.get_or_build(e.parent.name, e.name, unexpected, lambda f: None) for e in entries])
    checksum_s = rows_s + digest_s + manifests_s
    print(f"work folder: {work}")
    print("| fault | recall@k (bm25, dense, hybrid) | notes |")
    print("|---|---|---|")
    for fault, figures, note in rows:
        print(f"| {fault} | {figures} | {note} |")
    print(f"\nclean: {clean}")
    print(f"cold run {cold:.1f} s, warm run {warm:.2f} s")
    print(f"checksum work of a warm run: {rows_s * 1000:.1f} ms for {len(stored)} vector rows, {digest_s * 1000:.1f} ms for the "
          f"content hash of {len(table)} chunk + {len(queries)} question vectors, {manifests_s * 1000:.1f} ms for {len(entries)} "
          f"cache manifests = {checksum_s * 1000:.1f} ms: {checksum_s / warm:.1%} of the warm run, {checksum_s / cold:.2%} of the cold run")


if __name__ == "__main__":
    main()
