"""Retrieval on Chinese data tuner did not generate: the CMRC 2018 trial split (256 paragraphs, 1,002 questions).

Imports the SQuAD-format file with ``tuner import squad`` into a temporary folder, then prints recall@1/5/10
of two runs over the same paragraphs and questions:

- an independent baseline: jieba word segmentation + rank-bm25 ``BM25Okapi`` over whole paragraphs;
- ``tuner eval --retriever bm25 --top-k K`` on the imported folder (through tuner's Python API, same
  defaults as the command).

Recall is document level (tuner.metrics.recall_at_k); every CMRC question has one relevant paragraph, so
recall@k is also hit@k.

CMRC 2018: Yiming Cui et al., "A Span-Extraction Dataset for Chinese Machine Reading Comprehension",
EMNLP-IJCNLP 2019; CC BY-SA 4.0. The data is read from the shared folder and never copied into the repository.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/cmrc.py [PATH/TO/cmrc2018_trial.json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import jieba
from rank_bm25 import BM25Okapi

from tuner.dataset import Dataset, write_dataset
from tuner.dataset.importers import import_squad
from tuner.evaluation import evaluate_retrieval
from tuner.metrics import recall_at_k
from tuner.progress import SilentReporter
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

TOP_K = (1, 5, 10)
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


def tuner_recall(dataset: Dataset) -> dict[int, float]:
    """recall@k of ``tuner eval --retriever bm25 --top-k k`` (all other settings at their defaults)."""
    pipeline = RetrievalPipeline(dataset, reporter=SilentReporter())
    recall = {}
    for k in TOP_K:
        value = evaluate_retrieval(pipeline, RetrievalSettings(retriever="bm25", top_k=k), ci=False).overall["recall_at_k"].value
        recall[k] = value if value is not None else float("nan")
    return recall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=default_path(), help="cmrc2018_trial.json (default: the shared copy)")
    args = parser.parse_args()
    if not args.path.is_file():
        print(f"cmrc: {args.path} not found; nothing to measure (the data is not shipped with tuner)", file=sys.stderr)
        return 0
    jieba.setLogLevel(60)  # silence jieba's dictionary-loading chatter
    with tempfile.TemporaryDirectory() as folder:
        result = import_squad(args.path)
        dataset = write_dataset(Path(folder) / "cmrc", result.corpus, result.golden, result.conflicts)
        print(f"CMRC 2018 trial ({args.path}): {dataset.summary()}")
        for note in result.notes:
            print(f"  {note}")
        runs = {}
        for name, measure in (("jieba + rank-bm25 BM25Okapi", baseline_recall), ("tuner eval --retriever bm25", tuner_recall)):
            start = time.perf_counter()
            runs[name] = (measure(dataset), time.perf_counter() - start)
    width = max(map(len, runs))
    print(f"\n{'run':<{width}}  " + "  ".join(f"recall@{k:<2}" for k in TOP_K) + "  seconds")
    for name, (recall, seconds) in runs.items():
        print(f"{name:<{width}}  " + "  ".join(f"{recall[k]:9.3f}" for k in TOP_K) + f"  {seconds:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
