"""Retrieval service load test (issue 13 §3): ``tuner serve`` on the demo corpus, called over loopback HTTP.

Starts the service as a subprocess (a fresh cache folder, so the first start builds everything; then a second
start on the warm cache), and for 1, 8 and 32 concurrent clients sends ``POST /retrieve`` for ``--seconds``
each, reporting p50/p99 latency and throughput. Two query streams: the demo's golden questions repeated
(after one first pass, their vectors and the reranked sentences' vectors come from the embedding store) and unseen
questions (each a golden question with a fresh suffix, so every request encodes its question once more).

``--batching``: after the cold start, two services on the warm cache side by side, one embedding each question alone
(``--batch-wait-ms 0``: before) and one joining concurrent questions in one forward pass (the default: after), loaded
in turn at each level with unseen questions, so both see the same machine load.

``--backends A,B``: the same, one (batched) service per embedding backend (``tuner serve --embedding-backend``): what
a faster backend does to the question's forward pass. ``openvino`` shares torch's vectors, so its service starts on
the warm cache too (``openvino-bf16`` stores its own and would embed the corpus again).

``--forward A,B``: no service: the question forward pass alone, in this process, per embedding backend at 1, 8 and 32
unseen questions per pass (median of repeated passes): what the model costs a request, and what joining 8 concurrent
questions in one pass saves, against which the service's tail at 8 clients is read.

``--profile-requests BACKEND``: no service: unseen questions, one at a time, through the service's Retriever in this
process on the warm cache, timed and then under cProfile: where an unseen question's time goes besides HTTP.

``--profile-start``: the service's cold start (building the :class:`tuner.deploy.Retriever`) in this process under
cProfile, on an empty cache folder: the top functions by cumulative time, and the texts embedded.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/serve.py [--seconds 10] [--batching | --backends A,B | --forward A,B |
     --profile-requests BACKEND | --profile-start]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import itertools
import os
import pstats
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np

from tuner.dataset import load_dataset, resolve_dataset
from tuner.export import export_document, write_export
from tuner.settings import RetrievalSettings
from tuner.testing import wait_until_ready

REPO = Path(__file__).resolve().parents[1]
SETTINGS = RetrievalSettings(top_k=5, chunk_size=128, retriever="hybrid", hybrid_weight=0.5, rerank_strength=0.5,
                             relevance_threshold=0.2, candidate_depth=30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(config: Path, cache: Path, *flags: str) -> tuple[subprocess.Popen[bytes], str, float]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TUNER_CACHE": str(cache)}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "tuner", "serve", "--config", str(config), "--dataset", "demo",
                                "--port", str(port), *flags], env=env)
    url = f"http://127.0.0.1:{port}"
    wait_until_ready(process, url, seconds=600)
    return process, url, time.perf_counter() - started


async def load(url: str, queries: Iterator[str], clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            sent = time.perf_counter()
            try:
                reply = await http.post(f"{url}/retrieve", json={"query": next(queries)})
            except httpx.TransportError:  # counted, not fatal: the table says how many
                errors += 1
                continue
            if reply.status_code != 200:
                errors += 1
            latencies.append(time.perf_counter() - sent)

    began, cpu = time.perf_counter(), time.process_time()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    elapsed = time.perf_counter() - began
    ms = np.asarray(latencies) * 1000
    return {"requests": len(ms), "errors": errors, "p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)),
            "rps": len(ms) / elapsed, "seconds": elapsed, "client_cores": (time.process_time() - cpu) / elapsed}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def unseen(questions: list[str], tag: str) -> Iterator[str]:
    """Golden questions with a fresh suffix each time: a question no service has embedded."""
    counter = itertools.count()
    return (f"{q} ({tag} {next(counter)})" for q in itertools.cycle(questions))


def side_by_side(config: Path, cache: Path, questions: list[str], seconds: float,
                 variants: list[tuple[str, tuple[str, ...]]]) -> None:
    """Unseen questions at 1, 8 and 32 clients, the services of ``variants`` (name, ``tuner serve`` flags) on one
    warm cache, loaded in turn at each level so that all see the same machine load."""
    services = {}
    try:
        for name, flags in variants:
            process, url, warm = start(config, cache, *flags)
            services[name] = (process, url)
            print(f"{name}: ready after {warm:.1f} s (warm cache, load {httpx.get(f'{url}/healthz').json()['load_seconds']} s)")
        print("| questions embedded | clients | requests | errors | p50 ms | p99 ms | requests/s | service cores | "
              "load generator cores | load average |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for clients in (1, 8, 32):
            for name, (process, url) in services.items():
                served = cpu_seconds(process.pid)
                row = asyncio.run(load(url, unseen(questions, name), clients, seconds))
                service_cores = (cpu_seconds(process.pid) - served) / row["seconds"]
                print(f"| {name} | {clients} | {row['requests']:.0f} | {row['errors']:.0f} | {row['p50']:.1f} | "
                      f"{row['p99']:.1f} | {row['rps']:.1f} | {service_cores:.2f} | {row['client_cores']:.2f} | "
                      f"{os.getloadavg()[0]:.1f} |", flush=True)
    finally:
        for process, _ in services.values():
            process.terminate()
            process.wait()


def profile_start(config: Path, cache: Path) -> None:
    """Where a cold start's time goes: the Retriever built under cProfile on the empty ``cache``."""
    os.environ["TUNER_CACHE"] = str(cache)
    from tuner.deploy import Retriever
    from tuner.embedding import EmbeddingContext

    embeddings = EmbeddingContext()
    profiler = cProfile.Profile()
    started = time.perf_counter()
    retriever = profiler.runcall(Retriever.from_config, config, "demo", embeddings=embeddings)
    print(f"cold Retriever build: {time.perf_counter() - started:.1f} s, {retriever.chunk_count} returnable chunks, "
          f"{embeddings.texts_encoded()} texts embedded, load average {os.getloadavg()[0]:.1f}")
    print_profile(profiler)


def print_profile(profiler: cProfile.Profile) -> None:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
    print(out.getvalue())


def profile_requests(config: Path, cache: Path, questions: list[str], backend: str, n: int = 300) -> None:
    """Where an unseen question's time goes inside the service's :class:`tuner.deploy.Retriever` (warm ``cache``,
    ``backend``, each question alone: batch wait 0): ``n`` questions timed, then ``n`` more under cProfile."""
    os.environ["TUNER_CACHE"] = str(cache)
    from tuner.deploy import Retriever
    from tuner.embedding import EmbeddingContext, EmbeddingOptions
    from tuner.export import read_export

    embeddings = EmbeddingContext(EmbeddingOptions(device="cpu", backend=backend))
    retriever = Retriever.from_export(read_export(config), "demo", batch_wait=0, embeddings=embeddings)
    stream = unseen(questions, backend)
    retriever.retrieve(next(stream))
    times = []
    for _ in range(n):
        began = time.perf_counter()
        retriever.retrieve(next(stream))
        times.append((time.perf_counter() - began) * 1000)
    print(f"{backend}: {n} unseen questions one at a time in process: p50 {np.percentile(times, 50):.2f} ms, "
          f"p99 {np.percentile(times, 99):.2f} ms")
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [retriever.retrieve(next(stream)) for _ in range(n)])
    print_profile(profiler)


def forward(backends: list[str], cache: Path, questions: list[str]) -> None:
    """Median wall ms of one forward pass over 1, 8 and 32 unseen questions, per backend, model loaded and warm."""
    from tuner.embedding import EmbeddingOptions, SentenceTransformerEncoder

    print("| backend | questions per pass | passes | median ms per pass | ms per question | × one question alone |")
    print("|---|---|---|---|---|---|")
    for backend in backends:
        encoder = SentenceTransformerEncoder(SETTINGS.embedding_model, EmbeddingOptions(device="cpu", backend=backend), cache)
        stream = unseen(questions, backend)
        encoder.encode([next(stream) for _ in range(32)])  # load, compile, first-pass allocations
        alone = 0.0
        for size, passes in ((1, 60), (8, 30), (32, 12)):
            times = []
            for _ in range(passes):
                batch = [next(stream) for _ in range(size)]
                began = time.perf_counter()
                encoder.encode(batch)
                times.append((time.perf_counter() - began) * 1000)
            median = float(np.median(times))
            alone = alone or median
            print(f"| {backend} | {size} | {passes} | {median:.1f} | {median / size:.2f} | {median / alone:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="load duration per concurrency level")
    parser.add_argument("--cache", type=Path, help="cache folder to use (default: a new one, so the first start is cold)")
    parser.add_argument("--batching", action="store_true", help="unseen questions, each alone vs batched, side by side")
    parser.add_argument("--chunk-size", type=int, default=SETTINGS.chunk_size,
                        help=f"the served configuration's chunk_size (default {SETTINGS.chunk_size})")
    parser.add_argument("--profile-start", action="store_true", help="the cold start under cProfile, in this process")
    parser.add_argument("--backends", help="unseen questions, one batched service per embedding backend (A,B), side by "
                        "side on the cache of the first start (torch)")
    parser.add_argument("--profile-requests", metavar="BACKEND",
                        help="unseen questions through the service's Retriever in this process, timed and under cProfile")
    parser.add_argument("--forward", help="the question forward pass alone per embedding backend (A,B), no service")
    args = parser.parse_args()
    questions = [case.question for case in load_dataset(resolve_dataset("demo")).golden]
    if args.forward:
        with tempfile.TemporaryDirectory(prefix="tuner-forward-") as folder:
            forward(args.forward.split(","), args.cache or Path(folder), questions)
        return
    with tempfile.TemporaryDirectory(prefix="tuner-serve-bench-") as folder:
        root = Path(folder)
        settings = SETTINGS.model_copy(update={"chunk_size": args.chunk_size})
        config = write_export(root / "deploy.yaml", export_document(settings.model_dump(), {"study": "bench"}))
        cache = args.cache or root / "cache"
        if args.profile_start:
            profile_start(config, cache)
            return
        if args.profile_requests:
            profile_requests(config, cache, questions, args.profile_requests)
            return
        process, url, cold = start(config, cache)
        process.terminate()
        process.wait()
        print(f"ready after {cold:.1f} s (first start, load average {os.getloadavg()[0]:.1f})", flush=True)
        if args.batching:
            side_by_side(config, cache, questions, args.seconds,
                         [("alone", ("--batch-wait-ms", "0")), ("batched", ())])
            return
        if args.backends:
            side_by_side(config, cache, questions, args.seconds,
                         [(name, ("--embedding-backend", name)) for name in args.backends.split(",")])
            return
        process, url, warm = start(config, cache)
        try:
            health = httpx.get(f"{url}/healthz").json()
            print(f"settings: {settings.model_dump(include={'retriever', 'top_k', 'chunk_size', 'rerank_strength', 'relevance_threshold', 'candidate_depth'})}")
            print(f"corpus: {health['documents']} documents, {health['chunks']} chunks; ready after {cold:.1f} s (first start), "
                  f"{warm:.1f} s (warm cache, load {health['load_seconds']} s)")
            began = time.perf_counter()
            for question in questions:  # one pass: every question's vector and its candidates' sentence vectors stored
                httpx.post(f"{url}/retrieve", json={"query": question}, timeout=120).raise_for_status()
            print(f"first pass over the {len(questions)} golden questions (one client): {time.perf_counter() - began:.1f} s")
            streams = {"repeated": lambda: itertools.cycle(questions), "unseen": lambda: unseen(questions, "ticket")}
            print("| queries | clients | requests | errors | p50 ms | p99 ms | requests/s |")
            print("|---|---|---|---|---|---|---|")
            for name, stream in streams.items():
                for clients in (1, 8, 32):
                    row = asyncio.run(load(url, stream(), clients, args.seconds))
                    print(f"| {name} | {clients} | {row['requests']:.0f} | {row['errors']:.0f} | {row['p50']:.1f} | "
                          f"{row['p99']:.1f} | {row['rps']:.1f} |", flush=True)
        finally:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    main()
