"""Two workers, one PostgreSQL study: LLM calls with the call cache in the study's database (shared) versus one SQLite
cache per worker (isolated, as on two machines). Run (needs the PostgreSQL server at 127.0.0.1:5432, db ``test``):

    HF_HUB_OFFLINE=1 .venv/bin/python bench/shared_cache.py [--trials 12] [--url postgresql://root@127.0.0.1:5432/test]

Per mode: (1) two ``tuner run`` processes work on one new study at once; (2) a third worker, as on another machine,
then runs a second study with the first study's evaluated configurations enqueued. The generator is the ``openai``
backend against a loopback OpenAI-compatible server that answers with the first context line; the judge is
lexical. Counted: requests the server received, and distinct requests among them (a request the server sees twice
is an evaluation repeated).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import optuna
import yaml

REPO = Path(__file__).resolve().parent.parent
SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 4},
    "retriever": {"type": "categorical", "choices": ["bm25", "dense"]},
    "chunk_size": {"type": "categorical", "choices": [20, 40]},
}


def write_study(folder: Path, dataset: Path, name: str, trials: int, call_cache: str, enqueue: list[dict[str, Any]],
                base_url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "space.yaml").write_text(yaml.safe_dump(SPACE))
    study = {
        "name": name, "dataset": str(dataset), "search_space": "space.yaml", "settings": {"candidate_depth": 10},
        "budget": {"trials": trials}, "pruning": {"enabled": False}, "sampler": {"name": "tpe", "seed": 3},
        "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}, "enqueue": enqueue, "call_cache": call_cache,
        # the model name is unique per study pair, so no row of an earlier run answers this run's requests
        "generator": {"backend": "openai", "base_url": base_url, "model": f"stand-in-{name.split('-')[-1]}", "api_key_env": None},
        "heartbeat_interval": 2,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def run_workers(study_file: Path, url: str, caches: list[Path]) -> None:
    """One ``tuner run`` per cache folder, all at once, until the study's budget is spent."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tuner", "run", str(study_file), "--storage", url, "--no-report"],
            env={**os.environ, "TUNER_CACHE": str(cache), "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        for cache in caches
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=1800)
        if worker.returncode != 0:
            raise RuntimeError(f"worker exited {worker.returncode}: {err[-2000:]}")


def evaluated_settings(url: str, name: str) -> list[dict[str, Any]]:
    """The distinct configurations the study completed (two workers may have evaluated one at the same time)."""
    study = optuna.load_study(study_name=name, storage=url)
    complete = [dict(t.params) for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    return list({json.dumps(params, sort_keys=True): params for params in complete}.values())


def measure(mode: str, dataset: Path, url: str, trials: int, root: Path, server: Any, embedding_cache: Path) -> dict[str, Any]:
    """Requests the server received for two concurrent workers, then for a third worker re-running their configurations."""
    call_cache = "auto" if mode == "shared" else "local"
    tag = uuid.uuid4().hex[:6]
    figures: dict[str, Any] = {"mode": mode}
    before = len(server.requests)
    caches = [root / mode / f"worker-{i}" for i in (1, 2)]
    for cache in caches:
        # every worker starts with chunks and embeddings already computed (not what is measured), no LLM call cached
        shutil.copytree(embedding_cache, cache)
    first = write_study(root / mode, dataset, f"shared-{mode}-{tag}", trials, call_cache, [], server.url)
    started = time.monotonic()
    run_workers(first, url, caches)
    figures["two_workers_seconds"] = round(time.monotonic() - started, 1)
    sent = server.requests[before:]
    figures["two_workers_requests"] = len(sent)
    figures["two_workers_distinct"] = len({json.dumps(r.body, sort_keys=True) for r in sent})
    study = optuna.load_study(study_name=f"shared-{mode}-{tag}", storage=url)
    figures["trials_complete"] = sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    configs = evaluated_settings(url, f"shared-{mode}-{tag}")
    figures["configurations"] = len(configs)
    third = root / mode / "worker-3"
    shutil.copytree(embedding_cache, third)
    before = len(server.requests)
    second = write_study(root / mode, dataset, f"again-{mode}-{tag}", len(configs), call_cache, configs, server.url)
    run_workers(second, url, [third])
    figures["third_worker_requests"] = len(server.requests) - before
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--url", default=os.environ.get("TUNER_TEST_POSTGRES", "postgresql://root@127.0.0.1:5432/test"))
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from tests.tiny_dataset import write_tiny_dataset
    from tuner.llm.testing import FakeChatServer, context_echo_reply
    from tuner.retrieval import RetrievalPipeline
    from tuner.dataset import load_dataset
    from tuner.cache import DiskCache
    from tuner.settings import RetrievalSettings

    with tempfile.TemporaryDirectory(prefix="tuner-shared-cache-") as tmp:
        root = Path(tmp)
        dataset = write_tiny_dataset(root / "data")
        embedding_cache = root / "embeddings"
        pipeline = RetrievalPipeline(load_dataset(dataset), cache=DiskCache(embedding_cache))
        for size in (20, 40):
            pipeline.retrieve(RetrievalSettings(chunk_size=size, retriever="dense", candidate_depth=10))
        with FakeChatServer(context_echo_reply) as server:
            rows = [measure(mode, dataset, args.url, args.trials, root, server, embedding_cache) for mode in ("isolated", "shared")]
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
