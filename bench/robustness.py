"""Benchmark of the robustness layer on the demo dataset, offline backends (extractive + lexical).

(a) wall time of the full v0–v4 matrix for the default settings: cold (fresh cache folder: chunks,
    embeddings, candidates and answer-sentence embeddings all computed) and warm (same cache folder,
    new pipeline and evaluator, as a second process would see it);
(b) generator + judge calls per trial over 10 trials sampled with a fixed seed from a small grid of
    top_k / relevance_threshold / rerank_strength: one shared evaluator (call memo on) versus a
    fresh evaluator per trial (memo off).

Run: ``.venv/bin/python bench/robustness.py`` — appends its results to bench/HISTORY.md (the log).
"""

from __future__ import annotations

import datetime
import os
import platform
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tuner.cache import DiskCache  # noqa: E402
from tuner.dataset import Dataset, load_dataset, resolve_dataset  # noqa: E402
from tuner.embedding import EmbeddingContext  # noqa: E402
from tuner.evaluation import Responder, RobustnessEvaluator, summarize  # noqa: E402
from tuner.generation import ExtractiveGenerator, ExtractiveGeneratorConfig  # noqa: E402
from tuner.judging import LexicalJudge  # noqa: E402
from tuner.variants import VARIANTS, VariantsConfig  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import DEFAULT_EMBEDDING_MODEL, RetrievalSettings  # noqa: E402

HISTORY = Path(__file__).with_name("HISTORY.md")
HEADING = "## Robustness matrix and call cache"
GRID = {"top_k": [3, 5, 8], "relevance_threshold": [0.0, 0.3, 0.5], "rerank_strength": [0.0, 0.5, 1.0]}
TRIALS = 10


def evaluator_for(dataset: Dataset, root: Path, embeddings: EmbeddingContext) -> RobustnessEvaluator:
    encoder = embeddings.encoder(DEFAULT_EMBEDDING_MODEL, root)
    pipeline = RetrievalPipeline(dataset, cache=DiskCache(root), encoder=encoder)
    generator = ExtractiveGenerator(ExtractiveGeneratorConfig(), encoder)
    return RobustnessEvaluator(pipeline, Responder(generator, LexicalJudge()), VariantsConfig())


def timed_matrix(evaluator: RobustnessEvaluator, settings: RetrievalSettings) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    outcomes = evaluator.evaluate(settings, VARIANTS)
    report = summarize(outcomes, VARIANTS, evaluator.responder.calls())
    elapsed = time.perf_counter() - start
    v3 = report.variants["v3"]
    return elapsed, {"v3_delta": v3.delta_faithful, "n": v3.faithful.n, "N": v3.faithful.n_total, "calls": evaluator.responder.calls()}


def sample_trials() -> list[RetrievalSettings]:
    rng = random.Random(42)
    return [RetrievalSettings(**{name: rng.choice(values) for name, values in GRID.items()}) for _ in range(TRIALS)]


def calls_per_trial(dataset: Dataset, root: Path, shared: bool, embeddings: EmbeddingContext) -> tuple[list[int], float]:
    evaluator = evaluator_for(dataset, root, embeddings)
    per_trial = []
    start = time.perf_counter()
    for settings in sample_trials():
        if not shared:
            evaluator = evaluator_for(dataset, root, embeddings)
        before = evaluator.responder.calls()["total"]
        evaluator.evaluate(settings, VARIANTS)
        per_trial.append(evaluator.responder.calls()["total"] - before)
    return per_trial, time.perf_counter() - start


def results_header(heading: str) -> list[str]:
    """The opening lines of a bench/HISTORY.md section: its heading, the exact command, the date and the machine."""
    return [
        "",
        heading,
        "",
        f"- command: `{shlex.join([sys.executable, *sys.argv])}` (from the repository root)",
        f"- date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        f"- machine: {machine()}; shared with other jobs while it ran",
    ]


def machine() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
        platform.processor(),
    )
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    memory = subprocess.run(["free", "-g"], capture_output=True, text=True).stdout.splitlines()[1].split()[1]
    return f"{cpu}; nproc {nproc}; {memory} GB RAM (free -g); Python {platform.python_version()}"


def main() -> None:
    dataset = load_dataset(resolve_dataset("demo"))
    start = time.perf_counter()
    embeddings = EmbeddingContext()  # one model load for every measurement below
    embeddings.encoder(DEFAULT_EMBEDDING_MODEL).inner.encode(["warm up"])
    model_load = time.perf_counter() - start
    settings = RetrievalSettings()
    with tempfile.TemporaryDirectory(prefix="tuner-bench-") as folder:
        root = Path(folder)
        cold, cold_info = timed_matrix(evaluator_for(dataset, root, embeddings), settings)
        warm, warm_info = timed_matrix(evaluator_for(dataset, root, embeddings), settings)
        memo = evaluator_for(dataset, root, embeddings)
        memo.evaluate(settings, VARIANTS)
        memo_hit, _ = timed_matrix(memo, settings)
        # One untimed pass fills the disk caches (reranker scores, sentence embeddings) for every trial,
        # so the two timed passes below differ only in the call memo, not in which one ran first.
        calls_per_trial(dataset, root, True, embeddings)
        shared, shared_time = calls_per_trial(dataset, root, True, embeddings)
        fresh, fresh_time = calls_per_trial(dataset, root, False, embeddings)
    shared_mean, fresh_mean = sum(shared) / TRIALS, sum(fresh) / TRIALS
    trials = ", ".join(
        f"({s.top_k}, {s.relevance_threshold}, {s.rerank_strength})" for s in sample_trials()
    )
    lines = [
        *results_header(HEADING),
        f"- dataset: demo ({dataset.summary()}); offline backends: extractive generator, lexical judge; "
        f"variants: {VariantsConfig().model_dump()}",
        f"- model load (once per process, excluded below): {model_load:.1f} s",
        "",
        "(a) full v0–v4 matrix, default settings "
        f"(v3 Δfaithful {cold_info['v3_delta']:.3f}, n/N {cold_info['n']}/{cold_info['N']}, calls {cold_info['calls']}):",
        "",
        "| run | wall time |",
        "|---|---|",
        f"| cold (fresh cache folder: chunks, embeddings, candidates, answer-sentence embeddings) | {cold:.1f} s |",
        f"| warm (same cache folder, new pipeline and evaluator) | {warm:.1f} s |",
        f"| repeat on the same evaluator (every call a memo hit) | {memo_hit:.2f} s |",
        "",
        f"(b) generator + judge calls per trial, {TRIALS} trials sampled with seed 42 from "
        f"top_k × threshold × rerank_strength = {GRID['top_k']} × {GRID['relevance_threshold']} × "
        f"{GRID['rerank_strength']}; trials (top_k, threshold, rerank): {trials}. "
        "Disk caches warmed by an untimed pass over the same trials first.",
        "",
        "| evaluator | calls per trial (mean) | per trial | wall time, 10 trials |",
        "|---|---|---|---|",
        f"| shared (memo on) | {shared_mean:.1f} | {shared} | {shared_time:.1f} s |",
        f"| fresh per trial (memo off) | {fresh_mean:.1f} | {fresh} | {fresh_time:.1f} s |",
        "",
        f"Ratio memo off / memo on: {fresh_mean / shared_mean:.2f}× the calls "
        f"(warm matrix {warm_info['calls']['total']} calls for the default settings).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    with HISTORY.open("a", encoding="utf-8") as handle:
        if HISTORY.stat().st_size == 0:
            handle.write("# Benchmark results\n")
        handle.write(text)


if __name__ == "__main__":
    main()
