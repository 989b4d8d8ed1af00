"""Embedding throughput and quality per inference backend (issue 15, ``embedding.backend``), side by side in one run.

Chunks are real text: the demo corpus, ConflictNQ val passages and CMRC 2018 trial contexts, chunked at 256
characters (tuner's own chunker, ``chunk_unit: chars``, no overlap). There are fewer distinct chunks than the
larger sizes ask for, so the list is repeated, each repetition shuffled (seed 0): throughput does not depend
on whether a text was seen before (the encoder is called directly, without the embedding store).

Each measurement runs in its own process, so ``ru_maxrss`` is that backend's peak memory alone:

- ``export``: the one-off ONNX export / int8 quantization into the cache (seconds, per backend);
- ``sweep``: chunks/s at batch sizes 16/32/64/128 on the first ``--sweep`` chunks (where the per-backend
  defaults in ``tuner.embedding._encoders.DEFAULT_CPU_BATCH_SIZE`` come from), and the vectors at every batch size: torch
  against itself across batch sizes is the float noise a backend's max |Δ| is compared with;
- ``throughput``: chunks/s at the default batch size for each ``--sizes`` (the backends alternate within a
  size, so a change in the machine's load hits all of them alike), and peak memory;
- ``quality``: recall@1/5/10 of dense retrieval (default settings, ``retriever: dense``, no rerank) on the demo
  and on ConflictNQ val, each backend with its own empty cache, so every vector is its own.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/embed_throughput.py [--sizes 1000 10000] [--backends ...] [--work DIR]
One measurement alone, in the folder of an earlier run: ``--worker sweep|throughput --backend B --n N --work DIR``.
Writes ``embed_throughput.json`` in the work folder and prints the tables of bench/HISTORY.md.
ConflictNQ and CMRC are read from /work/shared/datasets; either one absent is left out (and said so).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from tuner.cache import DiskCache
from tuner.chunking import chunk_dataset
from tuner.settings import Chunking
from tuner.dataset import generate_demo, load_dataset, write_dataset
from tuner.dataset.importers import import_conflictnq, import_squad
from tuner.embedding import BACKENDS, EmbeddingContext, EmbeddingOptions, SentenceTransformerEncoder
from tuner.evaluation import evaluate_retrieval
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

MODEL = "all-MiniLM-L6-v2"
SHARED = Path("/work/shared/datasets")
CONFLICTNQ = SHARED / "conflictnq" / "conflict_nq_val.jsonl"
CMRC = SHARED / "cmrc2018" / "cmrc2018_trial.json"
BATCHES = (16, 32, 64, 128)
TOP_K = (1, 5, 10)


def datasets(work: Path) -> dict[str, Path]:
    """The demo, ConflictNQ val and CMRC trial as tuner datasets under ``work`` (those whose source exists)."""
    folders = {"demo": work / "demo"}
    if not folders["demo"].exists():
        generate_demo(folders["demo"])
    for name, source, importer in (("conflictnq", CONFLICTNQ, import_conflictnq), ("cmrc", CMRC, import_squad)):
        if not source.exists():
            print(f"{source} absent: {name} left out", file=sys.stderr)
            continue
        folders[name] = work / name
        if not folders[name].exists():
            result = importer(source)
            write_dataset(folders[name], result.corpus, result.golden, result.conflicts)
    return folders


def chunk_texts(folders: dict[str, Path]) -> list[str]:
    """Distinct 256-character chunks of every corpus and conflict document, in dataset order."""
    texts: dict[str, None] = {}
    for folder in folders.values():
        for chunk in chunk_dataset(load_dataset(folder), Chunking(256, "chars", 0.0)):
            texts.setdefault(chunk.passage)
    return list(texts)


def take(texts: list[str], n: int) -> list[str]:
    """``n`` chunks: the distinct ones, then shuffled repetitions of them (seed 0)."""
    rng, out = random.Random(0), list(texts)
    while len(out) < n:
        again = list(texts)
        rng.shuffle(again)
        out += again
    return out[:n]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def encoder(backend: str, cache: Path) -> SentenceTransformerEncoder:
    inner = SentenceTransformerEncoder(MODEL, EmbeddingOptions(device="cpu", backend=backend), cache)  # type: ignore[arg-type]
    inner.encode(["warm-up text"] * 8)
    return inner


def worker(args: argparse.Namespace) -> dict[str, Any]:
    """One measurement in this process (see the module docs); its result as JSON-ready data."""
    work, backend = Path(args.work), args.backend
    if args.worker == "export":
        started = time.perf_counter()
        inner = encoder(backend, work / "cache")
        return {"seconds": time.perf_counter() - started, "exports": inner._cache.stats.builds}
    if args.worker == "quality":
        embeddings = EmbeddingContext(EmbeddingOptions(device="cpu", backend=backend))  # type: ignore[arg-type]
        out: dict[str, Any] = {}
        for name in ("demo", "conflictnq"):
            if not (work / name).exists():
                continue
            root = work / f"cache-quality-{backend}"
            pipeline = RetrievalPipeline(load_dataset(work / name), cache=DiskCache(root), encoder=embeddings.encoder(MODEL, root))
            out[name] = {}
            for k in TOP_K:
                estimate = evaluate_retrieval(pipeline, RetrievalSettings(retriever="dense", top_k=k), ci=False).overall["recall_at_k"]
                out[name][k] = [estimate.value, estimate.n]
        return out
    texts = json.loads((work / "chunks.json").read_text("utf-8"))
    if args.worker == "sweep":
        sample, result, inner = texts[: args.n], {}, encoder(backend, work / "cache")
        for batch in BATCHES:
            inner.batch_size = batch
            started = time.perf_counter()
            vectors = inner.encode(sample)
            result[batch] = len(sample) / (time.perf_counter() - started)
            np.save(work / f"vectors-{backend}-{batch}.npy", vectors)
        return {"per_batch": result}
    inner = encoder(backend, work / "cache")
    sample = take(texts, args.n)
    started = time.perf_counter()
    inner.encode(sample)
    seconds = time.perf_counter() - started
    return {"chunks_per_s": len(sample) / seconds, "seconds": seconds, "batch_size": inner.batch_size, "peak_mb": peak_mb()}


def run_worker(work: Path, kind: str, backend: str, n: int = 0) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", kind, "--backend", backend, "--n", str(n), "--work", str(work)]
    done = subprocess.run(command, check=True, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{kind} {backend} {n or ''}: {result}", file=sys.stderr, flush=True)
    return result


def agreement(work: Path, backend: str, batch: int, reference_batch: int) -> dict[str, float]:
    """max |Δ| and cosine (min, mean) of ``backend``'s vectors against torch's at the default batch sizes."""
    ours = np.load(work / f"vectors-{backend}-{batch}.npy")
    torch = np.load(work / f"vectors-torch-{reference_batch}.npy")
    cosine = (ours * torch).sum(axis=1)
    return {"max_abs_diff": float(np.abs(ours - torch).max()), "cos_min": float(cosine.min()), "cos_mean": float(cosine.mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--sweep", type=int, default=300, help="chunks per batch size in the batch-size sweep")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    parser.add_argument("--work", help="folder for datasets, caches and vectors (default: a temporary one)")
    parser.add_argument("--worker", choices=["export", "sweep", "throughput", "quality"], help="one measurement in this process")
    parser.add_argument("--backend", choices=list(BACKENDS), help="the backend of --worker")
    parser.add_argument("--n", type=int, default=0, help="chunks of --worker sweep/throughput")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return
    work = Path(args.work or tempfile.mkdtemp(prefix="embed-throughput-"))
    work.mkdir(parents=True, exist_ok=True)
    texts = chunk_texts(datasets(work))
    (work / "chunks.json").write_text(json.dumps(texts, ensure_ascii=False), "utf-8")
    backends = ["torch", *(b for b in args.backends if b != "torch")]
    load = os.getloadavg()
    report: dict[str, Any] = {"distinct_chunks": len(texts), "load_before": load, "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    report["export"] = {b: run_worker(work, "export", b) for b in backends if BACKENDS[b].export}
    report["sweep"] = {b: run_worker(work, "sweep", b, args.sweep)["per_batch"] for b in backends}
    report["throughput"] = {str(n): {b: run_worker(work, "throughput", b, n) for b in backends} for n in args.sizes}
    first = report["throughput"][str(args.sizes[0])]
    reference = first["torch"]["batch_size"]
    report["agreement"] = {b: agreement(work, b, first[b]["batch_size"], reference) for b in backends}
    report["torch_across_batches"] = max(agreement(work, "torch", batch, reference)["max_abs_diff"] for batch in BATCHES)
    report["quality"] = {b: run_worker(work, "quality", b) for b in backends}
    report["load_after"] = os.getloadavg()
    (work / "embed_throughput.json").write_text(json.dumps(report, indent=1), "utf-8")
    print_tables(report, backends, args.sizes)


def print_tables(report: dict[str, Any], backends: list[str], sizes: list[int]) -> None:
    print(f"distinct chunks: {report['distinct_chunks']}; load before {report['load_before']}, after {report['load_after']}")
    print("\n| backend | " + " | ".join(f"chunks/s at {n:,} (× fp32)" for n in sizes) + " | peak RSS MB | first load s (export incl.) |")
    print("|---|" + "---|" * (len(sizes) + 2))
    for b in backends:
        cells = []
        for n in sizes:
            row, base = report["throughput"][str(n)][b], report["throughput"][str(n)]["torch"]
            cells.append(f"{row['chunks_per_s']:.1f} ({row['chunks_per_s'] / base['chunks_per_s']:.2f}×)")
        peak = report["throughput"][str(sizes[-1])][b]["peak_mb"]
        export = report["export"].get(b, {}).get("seconds")
        print(f"| {b} | " + " | ".join(cells) + f" | {peak:.0f} | {'—' if export is None else f'{export:.1f}'} |")
    print("\n| backend | " + " | ".join(f"batch {batch}" for batch in BATCHES) + " |")
    print("|---|" + "---|" * len(BATCHES))
    for b in backends:
        print(f"| {b} | " + " | ".join(f"{report['sweep'][b][str(batch)]:.1f}" for batch in BATCHES) + " |")
    print(f"\ntorch against itself across batch sizes: max |Δ| {report['torch_across_batches']:.2e}")
    names = list(report["quality"]["torch"])
    print("\n| backend | max abs Δ | cos min / mean | " + " | ".join(f"{name} recall@{k}" for name in names for k in TOP_K) + " |")
    print("|---|---|---|" + "---|" * (len(names) * len(TOP_K)))
    for b in backends:
        agree, cells = report["agreement"][b], []
        for name in names:
            for k in TOP_K:
                value, n = report["quality"][b][name][str(k)]
                base = report["quality"]["torch"][name][str(k)][0]
                cells.append(f"{value:.3f} ({value - base:+.3f}, n={n})")
        print(f"| {b} | {agree['max_abs_diff']:.1e} | {agree['cos_min']:.4f} / {agree['cos_mean']:.5f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
