"""Issue 40: a served configuration measured back through Dify's External Knowledge API.

Starts ``tuner serve`` on an export over the demo corpus (its own empty cache folder), then for top_k 1..K evaluates
the golden set twice: in process (``evaluate_retrieval`` over ``RetrievalPipeline``) and through ``POST /retrieval``
(``ExternalPipeline``), and counts the cases whose metrics differ (parity: 0 expected). Then the cost of the contract:
every golden question sent once with an empty call cache (requests/s at ``--concurrency``), and the same again from
the cache (no request).

Run: PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/external.py [--dataset demo] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tuner.dataset import load_dataset, resolve_dataset
from tuner.evaluation import evaluate_retrieval
from tuner.export import export_document, write_export
from tuner.external import ExternalClient, ExternalConfig, ExternalPipeline
from tuner.llm import CallCache
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.testing import wait_until_ready

REPO = Path(__file__).resolve().parents[1]
SETTINGS = RetrievalSettings(top_k=5, chunk_size=128, retriever="hybrid", hybrid_weight=0.5, rerank_strength=0.3,
                             relevance_threshold=0.1, candidate_depth=20)
KEY = "bench-external-key"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="demo")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--port", type=int, default=8771)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-external-"))
    os.environ["TUNER_CACHE"] = str(folder / "cache")
    os.environ["TUNER_EXTERNAL_API_KEY"] = KEY
    config = write_export(folder / "deploy.yaml", export_document(SETTINGS.model_dump(), {"study": "bench", "trial": 0}))
    env = {**os.environ, "PYTHONPATH": str(REPO), "TUNER_SERVE_API_KEY": KEY}
    server = subprocess.Popen([sys.executable, "-m", "tuner", "serve", "--knowledge", f"kb={config}:{args.dataset}",
                               "--port", str(args.port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{args.port}"
    try:
        started = time.monotonic()
        wait_until_ready(server, url, seconds=600)
        print(f"service ready in {time.monotonic() - started:.1f} s wall; load average {os.getloadavg()[0]:.1f}")
        dataset = load_dataset(resolve_dataset(args.dataset))
        local = RetrievalPipeline(dataset)
        service = ExternalConfig(url=url, knowledge_id="kb", concurrency=args.concurrency)
        print(f"\n{len(dataset.golden)} golden questions, settings {SETTINGS.retriever} top_k {SETTINGS.top_k}\n")
        print("| top_k | cases | recall@k in process | recall@k through /retrieval | cases differing (any metric) | unmatched records |")
        print("|---|---|---|---|---|---|")
        for k in range(1, SETTINGS.top_k + 1):
            settings = SETTINGS.model_copy(update={"top_k": k})
            through_pipeline = ExternalPipeline(dataset, ExternalClient(service, CallCache(folder / f"k{k}.sqlite")))
            inside, through = evaluate_retrieval(local, settings), evaluate_retrieval(through_pipeline, settings)
            differing = sum(any(inside.per_case[m][i] != through.per_case[m][i] for m in inside.per_case)
                            for i in range(len(dataset.golden)))
            print(f"| {k} | {len(dataset.golden)} | {inside.overall['recall_at_k'].value:.4f} | "
                  f"{through.overall['recall_at_k'].value:.4f} | {differing} | {through_pipeline.matching.unmatched} |")
        print("\n| pass | requests sent | cache hits | wall s | CPU s (this process) | questions/s |")
        print("|---|---|---|---|---|---|")
        cache = folder / "timing.sqlite"
        for label in ("empty call cache", "rerun from the cache"):
            client = ExternalClient(service, CallCache(cache))
            wall, cpu = time.perf_counter(), time.process_time()
            client.many([case.question for case in dataset.golden], SETTINGS.top_k, 0.0)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            usage = client.usage.snapshot()
            print(f"| {label} | {usage.calls} | {usage.cache_hits} | {wall:.2f} | {cpu:.2f} | {len(dataset.golden) / wall:.1f} |")
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    finally:
        server.terminate()
        server.wait(timeout=60)


if __name__ == "__main__":
    main()
