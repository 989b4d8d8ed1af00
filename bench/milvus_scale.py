"""Milvus Lite at scale against tuner's memory path (issue 45, "Scale"): build time, per-query search latency
p50/p95, peak memory, at 100k / 300k / 1M chunks.

Arms, each (arm, size) in a child process of its own so ``ru_maxrss`` and CPU seconds are that arm's alone:

- ``memory-flat``: ``faiss.IndexFlatIP``, what ``DenseRetriever.build`` makes for ``dense_index: flat`` (exact);
  its top-10 are the ground truth of the recall column;
- ``memory-hnsw``: ``faiss.IndexHNSWFlat`` with tuner's ``dense_index: hnsw`` parameters (M 32, efSearch 128);
- ``milvus-flat``: a Milvus Lite collection (``.db`` folder in the work folder), ``FLAT`` index, metric IP;
- ``milvus-hnsw``: the same with ``HNSW`` (M 16, efConstruction 200), searched
  at ``ef`` 16 / 64 / 128 (the recall–latency trade the ``ef`` knob turns);
- ``milvus-ivf``: ``IVF_FLAT`` (nlist 128), searched at ``nprobe`` 4 / 16 / 64;
- ``memory-bm25``: tuner's ``BM25Retriever`` (build through the disk cache, then ``search``);
- ``milvus-bm25``: a VARCHAR field with Milvus's ``standard`` analyzer, a BM25 function into a sparse field,
  ``SPARSE_INVERTED_INDEX`` with metric BM25; its top-10 are compared with ``memory-bm25``'s (overlap@10).

Data, said exactly:

- dense arms: **synthetic** 384-dimensional unit vectors (MiniLM's dimension), i.i.d. Gaussian, normalized, generated
  in batches of 10,000 from seed (batch number), so every arm sees the same vectors without holding a second copy;
  queries are 200 chunk vectors (random picks, seed 1) plus Gaussian noise of norm ≈ 0.75, normalized (cosine ≈ 0.8
  to their chunk, as a question to its passage). Real MiniLM vectors of 1M chunks would take 3–20 hours to embed
  on this 2-core machine (13.5–101 chunks/s: bench/HISTORY.md, "Embedding throughput per inference backend", and
  bench/RESULTS.md, "embedding 100k chunks"), so none were made. Index build and flat search cost do not depend on
  the content; ANN recall does, and isotropic random vectors are the hard case for HNSW and IVF (real embeddings
  cluster), so the recall column is a lower bound;
- BM25 arms: the English corpus of ``bench/bm25_scale.py`` (60 words per chunk drawn by the word frequencies of the
  demo generator's documents and the ConflictNQ val passages, two Zipf-distributed model codes each); 200 questions
  of 8 words of a random chunk each. The same numbers as that bench's "BM25 at scale" table are comparable.

Latency is measured one query per call (what a trial's or a served question's search costs), after 5 warm-up
queries; "batch" is all 200 queries in one call, per query. Build for Milvus is insert (batches of 5,000 rows) +
flush + load + the wait until every segment's index is attached (Milvus Lite builds them in a background thread and
searches an unindexed segment by brute force meanwhile; ``describe_index`` says ``Finished`` from the start, so the
bench asks the in-process engine) + the warm-up. A BM25 collection's sparse index is built by the search itself. Milvus Lite 3.x runs its server as
threads inside the client's process (``milvus_lite/server_manager.py``), so the process's peak RSS and CPU are the
client's and the engine's together; the ``.db`` folder's size on disk is reported beside them.

Milvus Lite 3.2.2 keeps at most 100,000 rows per segment (``milvus_lite/constants.py`` ``MAX_SEGMENT_ROWS``) and
builds one index per segment, so a search visits every segment; the build parameters pymilvus 3.0.2 sends through
``add_index(params=...)`` do not reach Milvus Lite's index spec (its ``build_params`` stay empty), so each index runs
on Milvus Lite's defaults, which are the values named above. FAISS runs one thread (``OMP_NUM_THREADS=1``, set here
unless already set) in every arm: the machine is shared and a trial worker searches on one core.

Attach mode (issue 52 §2): ``attach-build`` makes a Milvus Lite file holding a team's collection of ``n`` rows (INT64
key, text, doc id, JSON metadata, a FLAT COSINE vector field; no BM25 field), ``attach`` tunes it in a child process of
its own: ``MilvusPipeline`` over the demo's golden set attached to it, one dense trial (``evaluate_retrieval``: the
collection read, its model checked, the golden set's 180 questions searched) = the time to the first trial, then a
trial of another ``candidate_depth`` (a search of every question again, the rows already read) = the time per trial,
and the peak RSS (tuner's and the in-process Lite server's together; ``rss_before_mb`` is the process after its
imports and model). ``attach-floor`` opens, loads and searches the same collection once and reads no row: the in-process Lite server's
share of the peak (``attach`` less it is tuner's, with what Lite spends executing the queries attach sends).
``attach-floor-scan`` is ``attach-floor`` and the key scan (keys and doc ids, every page of the one pass over the
collection any attached study sends): ``attach`` less it is tuner's rows and the reads by key.
``attach-heap`` is ``attach`` with the Python heap traced (``python_heap_peak_mb``): Milvus Lite 3.x is a Python engine
(``milvus_lite/``), so its objects and numpy arrays (its FLAT index, the copy of every vector a query makes) are in it
with tuner's; pyarrow's buffers are not. Rows, said exactly: the demo's 623 chunks with their MiniLM vectors, then **synthetic** copies of
them under new keys and doc ids (``copy-K-DOC``) up to ``n``, so texts and vectors agree (the model check passes) at
any size; embedding 1M distinct texts is days on this machine.

``attach-build`` builds ``DIR/attach-N.db`` once and reuses it (``attach-N.built.json`` records its build). Before
and after a change to attach mode: the same command with ``BENCH_LABEL=before PYTHONPATH=TREE`` (a checkout of the
earlier code, e.g. ``git archive main``) and ``BENCH_LABEL=after``; ``rows_read`` is the rows of the collection the
trials read (:attr:`tuner.engine.MilvusPipeline.rows_read`; none where every row is read).

Run (niced; the machine is shared): nice -n 10 .venv/bin/python bench/milvus_scale.py --work DIR
    [--sizes 100000 300000 1000000] [--arms memory-flat milvus-flat ...] [--queries 200]
One arm alone: ``--one ARM N --work DIR`` (prints one JSON line). Results accumulate in ``DIR/milvus_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

DIM = 384
BATCH = 10_000
INSERT_ROWS = 5_000
TOP = 10
DEPTH = 30
WARMUP = 5
HNSW_EF = (16, 64, 128)
IVF_NPROBE = (4, 16, 64)
ARMS = ("memory-flat", "milvus-flat", "milvus-hnsw", "milvus-ivf", "memory-hnsw", "memory-bm25", "milvus-bm25",
        "attach-build", "attach", "attach-floor", "attach-floor-scan", "attach-heap")
TEAM = "team_kb"
COLLECTION = "scale"


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load() -> float:
    return os.getloadavg()[0]


def vector_batches(n: int) -> Iterator[np.ndarray]:
    """The ``n`` chunk vectors in batches of ``BATCH``; batch ``b`` is drawn from seed ``b`` alone."""
    for b, start in enumerate(range(0, n, BATCH)):
        rows = np.random.default_rng(b).standard_normal((min(BATCH, n - start), DIM), dtype=np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        yield rows


def query_vectors(n: int, count: int) -> np.ndarray:
    """``count`` chunk vectors plus noise of norm ≈ 0.75, normalized (cosine ≈ 0.8 to the chunk)."""
    rng = np.random.default_rng(1)
    targets = rng.integers(0, n, count)
    noise = rng.standard_normal((count, DIM), dtype=np.float32) * (0.75 / np.sqrt(DIM))
    out = np.empty((count, DIM), dtype=np.float32)
    for b, rows in enumerate(vector_batches(n)):
        here = (targets // BATCH) == b
        out[here] = rows[targets[here] - b * BATCH]
    out += noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def bm25_corpus(n: int, count: int) -> tuple[list[str], list[str], str]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bm25_scale import synthetic_corpus

    return synthetic_corpus("en", n, count)


def latencies(search: Callable[[int], list[int]], count: int) -> tuple[list[list[int]], list[float]]:
    """Per query: its hits and the seconds of its call; ``WARMUP`` untimed calls first."""
    for q in range(WARMUP):
        search(q)
    hits, seconds = [], []
    for q in range(count):
        start = time.perf_counter()
        hits.append(search(q))
        seconds.append(time.perf_counter() - start)
    return hits, seconds


def summary(seconds: list[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95)), "mean_ms": float(ms.mean())}


def memory_dense(kind: str, n: int, count: int, work: Path) -> dict[str, Any]:
    import faiss

    queries = query_vectors(n, count)
    start, cpu = time.perf_counter(), cpu_s()
    index = faiss.IndexFlatIP(DIM) if kind == "flat" else faiss.IndexHNSWFlat(DIM, 32, faiss.METRIC_INNER_PRODUCT)
    for rows in vector_batches(n):
        index.add(rows)
    if kind == "hnsw":
        index.hnsw.efSearch = 128
    build_s, build_cpu = time.perf_counter() - start, cpu_s() - cpu
    hits, seconds = latencies(lambda q: index.search(queries[q : q + 1], DEPTH)[1][0].tolist(), count)
    start = time.perf_counter()
    index.search(queries, DEPTH)
    batch = (time.perf_counter() - start) / count
    out = {"build_s": build_s, "build_cpu_s": build_cpu, **summary(seconds), "batch_ms": batch * 1000}
    if kind == "flat":
        np.save(work / f"truth-{n}.npy", np.array(hits)[:, :TOP])
    else:
        out["recall"] = recall(np.array(hits)[:, :TOP], work / f"truth-{n}.npy")
    return out


def recall(found: np.ndarray, truth_file: Path) -> float | None:
    """Mean share of the exact top-10 (``memory-flat``'s) among the found top-10; None without the exact run."""
    if not truth_file.exists():
        return None
    truth = np.load(truth_file)
    return float(np.mean([len(set(f) & set(t)) / TOP for f, t in zip(found.tolist(), truth.tolist(), strict=True)]))


def wait_indexed(db: Path, field: str) -> float:
    """Seconds waited until every segment of the collection has its index for ``field`` attached. Milvus Lite builds
    segment indexes in a background thread after a flush or compaction and searches an unindexed segment by brute
    force meanwhile, while ``describe_index`` reports ``Finished`` from the start; so this looks at the in-process
    engine itself (``milvus_lite.server_manager``), which a cluster would answer through ``describe_index``."""
    from milvus_lite.server_manager import server_manager_instance

    _, engine, _ = server_manager_instance._servers[str(db.resolve())]
    collection = engine.get_collection(COLLECTION)
    start = time.perf_counter()
    while not all(field in segment.indexes for segment in collection._segments_snapshot()):
        time.sleep(0.5)
    return time.perf_counter() - start


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def milvus_collection(db: Path, add_fields: Callable[[Any], None], add_index: Callable[[Any], None]) -> Any:
    """A client of a new Milvus Lite file at ``db`` holding the empty collection :data:`COLLECTION`: an INT64 primary
    key ``id`` and what ``add_fields`` adds to the schema, indexed as ``add_index`` adds to the index parameters."""
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(str(db))
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    add_fields(schema)
    params = client.prepare_index_params()
    add_index(params)
    client.create_collection(COLLECTION, schema=schema, index_params=params)
    return client


def milvus_dense(kind: str, n: int, count: int, work: Path) -> dict[str, Any]:
    from pymilvus import DataType

    queries = query_vectors(n, count)
    db = work / f"dense-{kind}-{n}.db"
    shutil.rmtree(db, ignore_errors=True)
    index_type, build_params, sweep_key, sweep = {
        "flat": ("FLAT", {}, "", (0,)),
        "hnsw": ("HNSW", {"M": 16, "efConstruction": 200}, "ef", HNSW_EF),
        "ivf": ("IVF_FLAT", {"nlist": 128}, "nprobe", IVF_NPROBE),
    }[kind]
    start, cpu = time.perf_counter(), cpu_s()
    client = milvus_collection(
        db, lambda schema: schema.add_field("vector", DataType.FLOAT_VECTOR, dim=DIM),
        lambda params: params.add_index("vector", index_type=index_type, metric_type="IP", params=build_params))
    first = 0
    for rows in vector_batches(n):
        for at in range(0, len(rows), INSERT_ROWS):
            part = rows[at : at + INSERT_ROWS]
            client.insert(COLLECTION, [{"id": first + i, "vector": v} for i, v in enumerate(part)])
            first += len(part)
    inserted_s = time.perf_counter() - start
    client.flush(COLLECTION)
    client.load_collection(COLLECTION)
    indexed_s = wait_indexed(db, "vector")

    def search_at(value: int) -> Callable[[int], list[int]]:
        search_params = {"metric_type": "IP", "params": {sweep_key: value} if sweep_key else {}}

        def one(q: int) -> list[int]:
            found = client.search(COLLECTION, data=[queries[q].tolist()], anns_field="vector", limit=DEPTH,
                                  output_fields=["id"], search_params=search_params)
            return [int(hit["id"]) for hit in found[0]]

        return one

    for q in range(WARMUP):
        search_at(sweep[-1])(q)
    build_s, build_cpu = time.perf_counter() - start, cpu_s() - cpu
    out: dict[str, Any] = {"insert_s": inserted_s, "index_wait_s": indexed_s, "build_s": build_s,
                           "build_cpu_s": build_cpu, "sweep": {}}
    for value in sweep:
        one = search_at(value)
        cpu = cpu_s()
        hits, seconds = latencies(one, count)
        batch_start = time.perf_counter()
        client.search(COLLECTION, data=queries.tolist(), anns_field="vector", limit=DEPTH, output_fields=["id"],
                      search_params={"metric_type": "IP", "params": {sweep_key: value} if sweep_key else {}})
        batch = (time.perf_counter() - batch_start) / count
        out["sweep"][f"{sweep_key or 'exact'}={value}" if sweep_key else "exact"] = {
            **summary(seconds), "batch_ms": batch * 1000, "search_cpu_s": cpu_s() - cpu,
            "recall": recall(np.array([h[:TOP] for h in hits]), work / f"truth-{n}.npy")}
    out["disk_mb"] = folder_mb(db)
    client.close()
    shutil.rmtree(db, ignore_errors=True)
    return out


def memory_bm25(n: int, count: int, work: Path) -> dict[str, Any]:
    from tuner.cache import DiskCache
    from tuner.retrieval import BM25Retriever

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bm25_scale import Passages

    passages, questions, sources = bm25_corpus(n, count)
    corpus_rss = rss_mb()
    with tempfile.TemporaryDirectory(dir=work) as folder:
        start, cpu = time.perf_counter(), cpu_s()
        retriever = BM25Retriever.build(Passages(passages, f"milvus-scale-{n}"), DiskCache(folder))  # type: ignore[arg-type]
        build_s, build_cpu = time.perf_counter() - start, cpu_s() - cpu
        hits, seconds = latencies(lambda q: retriever.search([questions[q]], DEPTH, None).indices[0].tolist(), count)
        start = time.perf_counter()
        retriever.search(questions, DEPTH, None)
        batch = (time.perf_counter() - start) / count
    np.save(work / f"bm25-{n}.npy", np.array(hits)[:, :TOP])
    return {"build_s": build_s, "build_cpu_s": build_cpu, **summary(seconds), "batch_ms": batch * 1000,
            "corpus_rss_mb": corpus_rss, "sources": sources}


def milvus_bm25(n: int, count: int, work: Path) -> dict[str, Any]:
    from pymilvus import DataType, Function, FunctionType

    def add_fields(schema: Any) -> None:
        schema.add_field("text", DataType.VARCHAR, max_length=4096, enable_analyzer=True,
                         analyzer_params={"type": "standard"})
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                     output_field_names=["sparse"]))

    passages, questions, sources = bm25_corpus(n, count)
    corpus_rss = rss_mb()
    db = work / f"bm25-{n}.db"
    shutil.rmtree(db, ignore_errors=True)
    start, cpu = time.perf_counter(), cpu_s()
    client = milvus_collection(db, add_fields, lambda params: params.add_index(
        "sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25"))
    for at in range(0, n, INSERT_ROWS):
        client.insert(COLLECTION, [{"id": at + i, "text": t} for i, t in enumerate(passages[at : at + INSERT_ROWS])])
    inserted_s = time.perf_counter() - start
    client.flush(COLLECTION)
    client.load_collection(COLLECTION)

    def one(q: int) -> list[int]:
        found = client.search(COLLECTION, data=[questions[q]], anns_field="sparse", limit=DEPTH, output_fields=["id"],
                              search_params={"metric_type": "BM25"})
        return [int(hit["id"]) for hit in found[0]]

    for q in range(WARMUP):
        one(q)
    build_s, build_cpu = time.perf_counter() - start, cpu_s() - cpu
    hits, seconds = latencies(one, count)
    start = time.perf_counter()
    client.search(COLLECTION, data=questions, anns_field="sparse", limit=DEPTH, output_fields=["id"],
                  search_params={"metric_type": "BM25"})
    batch = (time.perf_counter() - start) / count
    overlap = None
    if (theirs := work / f"bm25-{n}.npy").exists():
        ours = np.load(theirs)
        overlap = float(np.mean([len(set(a[:TOP]) & set(b)) / TOP for a, b in zip(hits, ours.tolist(), strict=True)]))
    out = {"insert_s": inserted_s, "build_s": build_s, "build_cpu_s": build_cpu, **summary(seconds),
           "batch_ms": batch * 1000, "overlap_at_10": overlap, "corpus_rss_mb": corpus_rss, "sources": sources,
           "disk_mb": folder_mb(db)}
    client.close()
    shutil.rmtree(db, ignore_errors=True)
    return out


def attach_build(n: int, work: Path) -> dict[str, Any]:
    """The team's collection of ``n`` rows in ``work/attach-N.db`` (module docstring)."""
    from pymilvus import DataType

    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import RetrievalSettings

    table = RetrievalPipeline(load_dataset(resolve_dataset("demo"))).table(RetrievalSettings())
    vectors, chunks = table.embeddings(), [c for c in table.chunks if not c.conflicting]
    db, built = work / f"attach-{n}.db", work / f"attach-{n}.built.json"
    if built.exists():  # built once, reused (a 1M-row build is hours on this machine)
        return {**json.loads(built.read_text()), "reused": True}
    shutil.rmtree(db, ignore_errors=True)
    start = time.perf_counter()

    def fields(schema: Any) -> None:
        schema.add_field("text", DataType.VARCHAR, max_length=8192)
        schema.add_field("doc", DataType.VARCHAR, max_length=256)
        schema.add_field("meta", DataType.JSON)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=vectors.shape[1])

    client = milvus_collection(db, fields, lambda p: p.add_index("vec", index_type="FLAT", metric_type="COSINE"))
    for first in range(0, n, INSERT_ROWS):
        rows = []
        for i in range(first, min(first + INSERT_ROWS, n)):
            copy, chunk = divmod(i, len(chunks))
            doc = chunks[chunk].doc_id if copy == 0 else f"copy-{copy}-{chunks[chunk].doc_id}"
            rows.append({"id": i, "text": chunks[chunk].passage, "doc": doc, "meta": {"team": "kb", "copy": copy},
                         "vec": vectors[chunk].tolist()})  # the corpus's chunks come first in the table
        client.insert(COLLECTION, rows)
    client.flush(COLLECTION)
    out = {"build_s": time.perf_counter() - start, "disk_mb": folder_mb(db)}
    built.write_text(json.dumps(out))
    return out


def attach_run(n: int, work: Path, heap: bool = False) -> dict[str, Any]:
    """Tune the collection of :func:`attach_build`: the time to the first trial, per trial, the peak RSS; with ``heap``
    (arm ``attach-heap``) also the peak of the Python heap over both trials (``tracemalloc``: tuner's, pymilvus' and the
    in-process Lite engine's Python objects and numpy arrays, not pyarrow's buffers; its tracing slows the trials, so
    their seconds are not comparable with arm ``attach``'s)."""
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.engine import MilvusEngine, MilvusPipeline
    from tuner.evaluation import evaluate_retrieval
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import RetrievalSettings

    dataset = load_dataset(resolve_dataset("demo"))
    engine = MilvusEngine.model_validate({"backend": "milvus", "uri": str(work / f"attach-{n}.db"), "collection": COLLECTION,
                                          "fields": {"text": "text", "vector": "vec", "doc_id": "doc", "metadata": "meta"}})
    RetrievalPipeline(dataset).encoder(RetrievalSettings()).inner.encode(["warm the model"], "")  # the model loaded (its encoder, not the cache: a cached text loads none), outside the figures
    before = rss_mb()
    if heap:
        tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    pipeline = MilvusPipeline(dataset, engine)
    first = evaluate_retrieval(pipeline, RetrievalSettings(retriever="dense", candidate_depth=30))
    first_s, first_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    evaluate_retrieval(pipeline, RetrievalSettings(retriever="dense", candidate_depth=20))
    traced = {"python_heap_peak_mb": tracemalloc.get_traced_memory()[1] / 2**20} if heap else {}
    return {**traced, "rss_before_mb": before, "first_trial_s": first_s, "first_trial_cpu_s": first_cpu,
            "per_trial_s": time.perf_counter() - start, "per_trial_cpu_s": time.process_time() - cpu,
            "recall_at_k": first.overall["recall_at_k"].value, "disk_mb": folder_mb(work / f"attach-{n}.db"),
            "rows_read": getattr(pipeline, "rows_read", None)}  # None: a tree that reads every row


def attach_floor(n: int, work: Path, scan: bool = False) -> dict[str, Any]:
    """The Lite engine's own share of ``attach``'s peak: the collection of :func:`attach_build` opened, loaded and
    searched once (180 of the demo's questions' worth of vectors, random), in a process that imports what ``attach``
    does and reads no row: ``attach``'s peak RSS less this one is tuner's. With ``scan`` (arm ``attach-floor-scan``)
    the key scan too (:func:`tuner.engine.key_scan`, keys and doc ids only, memory one page in tuner): what
    Milvus Lite spends executing the pages of that one pass over the collection, which every attached study sends."""
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.engine import MilvusEngine, connect, key_scan
    from tuner.progress import SilentReporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import RetrievalSettings

    RetrievalPipeline(load_dataset(resolve_dataset("demo"))).encoder(RetrievalSettings()).inner.encode(["warm the model"], "")
    before = rss_mb()
    client = connect(MilvusEngine(backend="milvus", uri=str(work / f"attach-{n}.db")), create=False)
    start = time.perf_counter()
    client.load_collection(COLLECTION)
    vectors = np.random.default_rng(0).normal(size=(180, DIM)).astype(np.float32)
    client.search(COLLECTION, data=(vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist(), anns_field="vec",
                  limit=DEPTH, search_params={"metric_type": "COSINE"}, output_fields=[])
    if scan:
        key_scan(client, COLLECTION, "id", SilentReporter(), 2048, "doc", ["d0"])
    return {"rss_before_mb": before, "first_trial_s": time.perf_counter() - start}


def one_arm(arm: str, n: int, count: int, work: Path) -> dict[str, Any]:
    runs: dict[str, Callable[[], dict[str, Any]]] = {
        "memory-flat": lambda: memory_dense("flat", n, count, work),
        "memory-hnsw": lambda: memory_dense("hnsw", n, count, work),
        "milvus-flat": lambda: milvus_dense("flat", n, count, work),
        "milvus-hnsw": lambda: milvus_dense("hnsw", n, count, work),
        "milvus-ivf": lambda: milvus_dense("ivf", n, count, work),
        "memory-bm25": lambda: memory_bm25(n, count, work),
        "milvus-bm25": lambda: milvus_bm25(n, count, work),
        "attach-build": lambda: attach_build(n, work),
        "attach": lambda: attach_run(n, work),
        "attach-floor": lambda: attach_floor(n, work),
        "attach-floor-scan": lambda: attach_floor(n, work, scan=True),
        "attach-heap": lambda: attach_run(n, work, heap=True),
    }
    wall, load_before = time.perf_counter(), load()
    out = runs[arm]()
    return {"arm": arm, "n": n, "label": os.environ.get("BENCH_LABEL", ""), **out, "peak_rss_mb": rss_mb(), "cpu_s": cpu_s(), "wall_s": time.perf_counter() - wall,
            "load_before": load_before, "load_after": load()}


def fmt(value: Any, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def table(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| arm | chunks | build s (CPU s) | search setting | p50 ms | p95 ms | batch ms/query | recall@10 vs exact "
             "| peak RSS MB | disk MB | load |", "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        if r["arm"].startswith("attach"):
            read = "" if r.get("rows_read") is None else f", {r['rows_read']:,} rows read"
            label = f" ({r['label']})" if r.get("label") else ""
            lines.append(f"| {r['arm']}{label} | {r['n']:,} | {fmt(r.get('build_s'))} ({fmt(r['cpu_s'])}) | first trial "
                         f"{fmt(r.get('first_trial_s'))} s, per trial {fmt(r.get('per_trial_s'))} s, RSS before "
                         f"{fmt(r.get('rss_before_mb'), 0)} MB{read} | — | — | — | {fmt(r.get('recall_at_k'), 3)} "
                         f"| {fmt(r['peak_rss_mb'], 0)} | {fmt(r.get('disk_mb'), 0)} "
                         f"| {r['load_before']:.1f}→{r['load_after']:.1f} |")
            continue
        rows = r.get("sweep") or {"": r}
        for setting, s in rows.items():
            quality = s.get("recall") if "bm25" not in r["arm"] else r.get("overlap_at_10")
            lines.append(f"| {r['arm']} | {r['n']:,} | {fmt(r['build_s'])} ({fmt(r['build_cpu_s'])}) | {setting or '—'} "
                         f"| {fmt(s['p50_ms'])} | {fmt(s['p95_ms'])} | {fmt(s['batch_ms'])} | {fmt(quality, 3)} "
                         f"| {fmt(r['peak_rss_mb'], 0)} | {fmt(r.get('disk_mb'), 0)} "
                         f"| {r['load_before']:.1f}→{r['load_after']:.1f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--one", nargs=2, metavar=("ARM", "N"))
    parser.add_argument("--table", action="store_true", help="print the table of the results so far and stop")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.one:
        print(json.dumps(one_arm(args.one[0], int(args.one[1]), args.queries, args.work)), flush=True)
        return
    store = args.work / "milvus_scale.json"
    results: list[dict[str, Any]] = json.loads(store.read_text()) if store.exists() else []
    if not args.table:
        for n in args.sizes:
            for arm in args.arms:
                done = subprocess.run([sys.executable, __file__, "--one", arm, str(n), "--work", str(args.work),
                                       "--queries", str(args.queries)], capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"{arm} {n}: failed (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}",
                          flush=True)
                    continue
                result = json.loads(done.stdout.strip().splitlines()[-1])
                results = [r for r in results if (r["arm"], r["n"], r.get("label", "")) != (arm, n, result["label"])] + [result]
                store.write_text(json.dumps(results, indent=1))
                print("\n".join(table([result])[2:]), flush=True)
    print("\n".join(table(sorted(results, key=lambda r: (r["n"], ARMS.index(r["arm"]), r.get("label", ""))))))


if __name__ == "__main__":
    main()
