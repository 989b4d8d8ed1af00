"""Chinese data tuner did not generate: the CMRC 2018 trial split (256 paragraphs, 1,002 questions).

Imports the SQuAD-format file with ``tuner import squad`` into a temporary folder, then, by part:

- ``retrieval``: recall@1/5/10 over the same paragraphs and questions of an independent baseline (jieba word
  segmentation + rank-bm25 ``BM25Okapi`` over whole paragraphs) and of ``tuner eval --retriever R --top-k K``
  for bm25, hybrid and dense (through tuner's Python API, the command's defaults otherwise);
- ``study``: conflicts made with the Chinese corruption rules (``tuner corrupt --types factual_corruption
  --severities moderate``: one corrupted copy per relevant paragraph, as a stale version would be), then a
  study over ``search_spaces/zh.yaml`` with the offline backends: wall time, calls, the front;
- ``pruning`` (issue 17): a golden set of ``--cases`` questions (default 500, a seeded sample; every paragraph
  stays in the corpus) with the same conflicts, and one fixed list of 40 seeded random configurations of
  ``search_spaces/zh.yaml`` run without pruning, with the rule before issue 17 and with the default rule
  (``bench/study.py``'s ``RULES``): calls saved, cases used per pruned trial, front trials lost, the oracle bound
  and the rules replayed with their false-prune rate over random case orders. ``--work DIR`` keeps the studies
  (a study already complete there is loaded, not run again) and ``--rules`` runs some of the rules only.

Recall is document level (tuner.metrics.recall_at_k); every CMRC question has one relevant paragraph, so
recall@k is also hit@k.

CMRC 2018: Yiming Cui et al., "A Span-Extraction Dataset for Chinese Machine Reading Comprehension",
EMNLP-IJCNLP 2019; CC BY-SA 4.0. The data is read from the shared folder and never copied into the repository.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/cmrc.py [--data PATH/TO/cmrc2018_trial.json] [retrieval] [study] [pruning]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

import jieba
from rank_bm25 import BM25Okapi

from study import REPLAYED, RULES, compare_runs, random_configs, rule_report, run_rules
from tuner.dataset import Dataset, load_dataset, write_dataset
from tuner.dataset.importers import import_squad
from tuner.evaluation import evaluate_retrieval
from tuner.metrics import recall_at_k
from tuner.progress import SilentReporter
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings, format_settings

TOP_K = (1, 5, 10)
STUDY_TRIALS = 40
PRUNING_CASES = 500
ROOT = Path(__file__).resolve().parent.parent
RELATIVE = Path("shared") / "datasets" / "cmrc2018" / "cmrc2018_trial.json"


def default_path() -> Path:
    """The shared copy beside the repository, or in a folder above a worktree of it."""
    candidates = [folder / RELATIVE for folder in Path(__file__).resolve().parents[1:]]
    return next((path for path in candidates if path.is_file()), candidates[0])


def segment(text: str) -> list[str]:
    """jieba's words, without whitespace and punctuation-only tokens."""
    return [word for word in jieba.lcut(text) if any(ch.isalnum() for ch in word)]


def baseline_recall(dataset: Dataset) -> dict[int, float]:
    """Mean recall@k of BM25Okapi over jieba-segmented paragraphs; ties keep corpus order."""
    doc_ids = [doc.doc_id for doc in dataset.corpus]
    bm25 = BM25Okapi([segment(doc.text) for doc in dataset.corpus])
    totals = dict.fromkeys(TOP_K, 0.0)
    for case in dataset.golden:
        scores = bm25.get_scores(segment(case.question))
        ranked = [doc_ids[i] for i in sorted(range(len(doc_ids)), key=lambda i: -scores[i])[: max(TOP_K)]]
        for k in TOP_K:
            totals[k] += recall_at_k(ranked[:k], case.relevant_doc_ids)
    return {k: total / len(dataset.golden) for k, total in totals.items()}


def tuner_recall(dataset: Dataset, retriever: str) -> dict[int, float]:
    """recall@k of ``tuner eval --retriever RETRIEVER --top-k k`` (all other settings at their defaults)."""
    pipeline = RetrievalPipeline(dataset, reporter=SilentReporter())
    recall = {}
    for k in TOP_K:
        settings = RetrievalSettings(retriever=retriever, top_k=k)
        value = evaluate_retrieval(pipeline, settings, ci=False).overall["recall_at_k"].value
        recall[k] = value if value is not None else float("nan")
    return recall


def retrieval(dataset: Dataset, folder: Path) -> list[str]:
    runs: dict[str, tuple[dict[int, float], float]] = {}
    measures: dict[str, Callable[[Dataset], dict[int, float]]] = {"jieba + rank-bm25 BM25Okapi": baseline_recall}
    for retriever in ("bm25", "hybrid", "dense"):
        measures[f"tuner eval --retriever {retriever}"] = lambda d, r=retriever: tuner_recall(d, r)
    for name, measure in measures.items():
        start = time.perf_counter()
        runs[name] = (measure(dataset), time.perf_counter() - start)
    width = max(map(len, runs))
    lines = [f"{'run':<{width}}  " + "  ".join(f"recall@{k:<2}" for k in TOP_K) + "  seconds"]
    for name, (recall, seconds) in runs.items():
        lines.append(f"{name:<{width}}  " + "  ".join(f"{recall[k]:9.3f}" for k in TOP_K) + f"  {seconds:7.1f}")
    return lines


def study(dataset: Dataset, folder: Path, trials: int = STUDY_TRIALS) -> list[str]:
    """Chinese conflicts, then the zh search space on CMRC with the offline backends, cold cache."""
    env = {**os.environ, "TUNER_CACHE": str(folder / "cache"), "HF_HUB_OFFLINE": "1"}
    tuner = [sys.executable, "-m", "tuner"]
    corrupt(dataset, env)
    study_file = write_study(folder, "cmrc", dataset, budget={"trials": trials})
    start = time.perf_counter()
    done = subprocess.run([*tuner, "run", str(study_file)], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    closing = [line for line in done.stderr.splitlines() if " complete (" in line or "picked trial" in line]
    front = subprocess.run([*tuner, "pareto", str(study_file), "--json"], env=env, capture_output=True, text=True, check=True)
    entries = json.loads(front.stdout)["front"]
    lines = [f"study over search_spaces/zh.yaml, {trials} trials, offline backends, cold cache: {seconds:.0f} s", *closing,
             "front (trial: recall@k, v3 Δfaithful [95% interval], n/N, params):"]
    for entry in sorted(entries, key=lambda e: -e["values"]["recall_at_k"]):
        ci = entry["ci"].get("v3_delta_faithful") or [float("nan")] * 2
        lines.append(f"  #{entry['trial']}: {entry['values']['recall_at_k']:.3f}, {entry['values']['v3_delta_faithful']:.3f} "
                     f"[{ci[0]:.3f}, {ci[1]:.3f}], {entry['n']}/{entry['n_total']}, {format_settings(entry['params'])}")
    return lines


def corrupt(dataset: Dataset, env: dict[str, str]) -> None:
    """Chinese conflicts: one factual corruption (moderate) per relevant paragraph, like a stale version."""
    subprocess.run([sys.executable, "-m", "tuner", "corrupt", str(dataset.path), "--types", "factual_corruption",
                    "--severities", "moderate"], env=env, check=True, capture_output=True, text=True)


def write_study(folder: Path, name: str, dataset: Dataset, **overrides: Any) -> Path:
    """The Chinese demo study file on ``dataset`` over ``search_spaces/zh.yaml``, knee pick, with ``overrides``."""
    spec = yaml.safe_load((ROOT / "studies" / "demo_zh.yaml").read_text())
    spec.update(name=name, dataset=str(dataset.path), search_space=str(ROOT / "search_spaces" / "zh.yaml"),
                output=str(folder / "out"), pick={"rule": "knee"}, **overrides)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True))
    return path


def sample_golden(dataset: Dataset, folder: Path, cases: int) -> Dataset:
    """A golden set of ``cases`` questions of ``dataset`` (seeded sample, file order kept) over its whole corpus,
    with conflicts made as in the study part; written once into ``folder``."""
    target = folder / f"cmrc-{cases}"
    if not (target / "conflicts.jsonl").is_file():
        lines = (dataset.path / "golden.jsonl").read_text(encoding="utf-8").splitlines()
        chosen = sorted(random.Random(0).sample(range(len(lines)), min(cases, len(lines))))
        corpus = [json.loads(line) for line in (dataset.path / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
        sampled = write_dataset(target, corpus, [json.loads(lines[i]) for i in chosen], [], force=True)
        corrupt(sampled, {**os.environ, "HF_HUB_OFFLINE": "1"})
    return load_dataset(target)


def pruning(dataset: Dataset, folder: Path, cases: int = PRUNING_CASES, rules: tuple[str, ...] = tuple(RULES)) -> list[str]:
    """40 fixed configurations on a ``cases``-question golden set, per pruning rule (see the module docstring)."""
    sampled = sample_golden(dataset, folder, cases)
    zh_space = ROOT / "search_spaces" / "zh.yaml"

    def study_file(where: Path, name: str, **overrides: Any) -> Path:
        return write_study(where, name, sampled, **overrides)

    runs = run_rules(
        folder, f"cmrc{cases}", rules, study_file,
        enqueue=random_configs(7, STUDY_TRIALS, zh_space), budget={"trials": STUDY_TRIALS},
        sampler={"name": "random", "seed": 0},
    )
    label = f"CMRC 2018 trial, {sampled.summary()}, {STUDY_TRIALS} fixed configurations (draw seed 7)"
    lines = compare_runs(label, runs) if "unpruned" in runs and len(runs) > 1 else []
    return lines + (rule_report(runs["unpruned"][0], label, REPLAYED) if "unpruned" in runs else [])


PARTS: dict[str, Callable[..., list[str]]] = {"retrieval": retrieval, "study": study, "pruning": pruning}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_path(), help="cmrc2018_trial.json (default: the shared copy)")
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"what to run: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--trials", type=int, default=STUDY_TRIALS, help=f"study budget (default {STUDY_TRIALS})")
    parser.add_argument("--cases", type=int, default=PRUNING_CASES, help=f"pruning: golden-set size (default {PRUNING_CASES})")
    parser.add_argument("--rules", nargs="+", choices=list(RULES), default=list(RULES), help="pruning: the rules to run")
    parser.add_argument("--work", type=Path, help="pruning: keep the studies in this folder (default: a temporary one)")
    args = parser.parse_args()
    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    if not args.data.is_file():
        print(f"cmrc: {args.data} not found; nothing to measure (the data is not shipped with tuner)", file=sys.stderr)
        return 0
    jieba.setLogLevel(60)  # silence jieba's dictionary-loading chatter
    with tempfile.TemporaryDirectory() as folder:
        result = import_squad(args.data)
        dataset = write_dataset(Path(folder) / "cmrc", result.corpus, result.golden, result.conflicts)
        print(f"CMRC 2018 trial ({args.data}): {dataset.summary()}")
        for note in result.notes:
            print(f"  {note}")
        for part in args.parts or list(PARTS):
            print(f"\n[{part}]")
            if part == "study":
                lines = study(dataset, Path(folder), args.trials)
            elif part == "pruning":
                work = args.work or Path(folder) / "pruning"
                work.mkdir(parents=True, exist_ok=True)
                lines = pruning(dataset, work, args.cases, tuple(args.rules))
            else:
                lines = retrieval(dataset, Path(folder))
            for line in lines:
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
