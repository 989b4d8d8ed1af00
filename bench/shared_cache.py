"""Two workers, one PostgreSQL study: LLM calls and texts embedded with the call cache and the embedding store in the
study's database (shared) versus one SQLite cache and store per worker (isolated, as on two machines). Run (needs the
PostgreSQL server at 127.0.0.1:5432, db ``test``):

    HF_HUB_OFFLINE=1 .venv/bin/python bench/shared_cache.py [--trials 6] [--dataset demo] [--url postgresql://root@127.0.0.1:5432/test]

Per mode: (1) two ``tuner run`` processes, each with an empty ``TUNER_CACHE``, work on one new study at once; (2) a
third worker, as on another machine, then runs a second study with the first study's evaluated configurations
enqueued. The generator is the ``openai`` backend against a loopback OpenAI-compatible server that answers with the
first context line; the judge is lexical. Counted: requests the server received, distinct requests among them (a
request the server sees twice is an evaluation repeated), and texts each worker embedded (``texts_embedded`` of
``tuner run --json``: texts run through the model, not read from a store). Everything lives in a schema of its own,
dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import optuna
import psycopg
import yaml

REPO = Path(__file__).resolve().parent.parent
SPACE = {
    "top_k": {"type": "int", "low": 2, "high": 6},
    "retriever": {"type": "categorical", "choices": ["bm25", "dense"]},
    "chunk_size": {"type": "categorical", "choices": [64, 128]},
}


def write_study(folder: Path, dataset: str, name: str, trials: int, cache: str, enqueue: list[dict[str, Any]],
                base_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "space.yaml").write_text(yaml.safe_dump(SPACE))
    study = {
        "name": name, "dataset": dataset, "search_space": "space.yaml", "settings": {"candidate_depth": 10},
        "budget": {"trials": trials}, "pruning": {"enabled": False}, "sampler": {"name": "tpe", "seed": 3},
        "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}, "enqueue": enqueue,
        "call_cache": cache, "embedding_cache": cache,
        "generator": {"backend": "openai", "base_url": base_url, "model": "stand-in", "api_key_env": None},
        "heartbeat_interval": 2,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def run_workers(study_file: Path, url: str, caches: list[Path]) -> list[dict[str, Any]]:
    """One ``tuner run --json`` per cache folder, all at once, until the study's budget is spent; their summaries."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tuner", "run", str(study_file), "--storage", url, "--no-report", "--json"],
            env={**os.environ, "TUNER_CACHE": str(cache), "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for cache in caches
    ]
    summaries = []
    for worker in workers:
        out, err = worker.communicate(timeout=3600)
        if worker.returncode != 0:
            raise RuntimeError(f"worker exited {worker.returncode}: {err[-2000:]}")
        summaries.append(json.loads(out))
    return summaries


def evaluated_settings(url: str, name: str) -> list[dict[str, Any]]:
    """The distinct configurations the study completed."""
    study = optuna.load_study(study_name=name, storage=url)
    complete = [dict(t.params) for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    return list({json.dumps(params, sort_keys=True): params for params in complete}.values())


def measure(mode: str, dataset: str, url: str, trials: int, root: Path, server: Any) -> dict[str, Any]:
    """Requests and texts embedded for two concurrent workers, then for a third worker re-running their configurations."""
    cache = "auto" if mode == "shared" else "local"
    tag = uuid.uuid4().hex[:6]
    figures: dict[str, Any] = {"mode": mode}
    before = len(server.requests)
    first = write_study(root / mode, dataset, f"shared-{mode}-{tag}", trials, cache, [], server.url)
    started = time.monotonic()
    summaries = run_workers(first, url, [root / mode / f"worker-{i}" for i in (1, 2)])
    figures["two_workers_seconds"] = round(time.monotonic() - started, 1)
    sent = server.requests[before:]
    figures["two_workers_requests"] = len(sent)
    figures["two_workers_distinct"] = len({json.dumps(r.body, sort_keys=True) for r in sent})
    figures["two_workers_texts_embedded"] = [s["texts_embedded"] for s in summaries]
    study = optuna.load_study(study_name=f"shared-{mode}-{tag}", storage=url)
    figures["trials_complete"] = sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    configs = evaluated_settings(url, f"shared-{mode}-{tag}")
    figures["configurations"] = len(configs)
    before = len(server.requests)
    second = write_study(root / mode, dataset, f"again-{mode}-{tag}", len(configs), cache, configs, server.url)
    (third,) = run_workers(second, url, [root / mode / "worker-3"])
    figures["third_worker_requests"] = len(server.requests) - before
    figures["third_worker_texts_embedded"] = third["texts_embedded"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--dataset", default="demo", help="dataset folder or built-in name (default: demo)")
    parser.add_argument("--url", default=os.environ.get("TUNER_TEST_POSTGRES", "postgresql://root@127.0.0.1:5432/test"))
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from tuner.llm.testing import FakeChatServer, context_echo_reply

    schema = f"bench_shared_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = f"{args.url}{'&' if '?' in args.url else '?'}options=-csearch_path%3D{schema}"
    try:
        with tempfile.TemporaryDirectory(prefix="tuner-shared-cache-") as tmp, FakeChatServer(context_echo_reply) as server:
            rows = [measure(mode, args.dataset, url, args.trials, Path(tmp), server) for mode in ("isolated", "shared")]
    finally:
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
