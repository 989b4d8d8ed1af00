"""Parity of the first stage, memory against Milvus Lite (issue 45): recall@k of bm25, dense and hybrid (blend, rrf)
on one dataset, the share of questions whose top k chunks are the same, and the largest score difference there.

    python bench/milvus_parity.py demo --top-k 4 --uri /tmp/parity.db
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from tuner.dataset import load_dataset, resolve_dataset
from tuner.engine import MilvusEngine, MilvusPipeline
from tuner.evaluation import evaluate_retrieval
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("--top-k", type=int, default=4)
    parser.add_argument("--uri", default=str(Path(tempfile.mkdtemp()) / "parity.db"))
    args = parser.parse_args()
    dataset = load_dataset(resolve_dataset(args.dataset))
    engine, memory = MilvusPipeline(dataset, MilvusEngine(backend="milvus", uri=args.uri)), RetrievalPipeline(dataset)
    rows = []
    for retriever, fusion in (("dense", "blend"), ("bm25", "blend"), ("hybrid", "blend"), ("hybrid", "rrf")):
        settings = RetrievalSettings(retriever=retriever, fusion=fusion, top_k=args.top_k, candidate_depth=max(30, args.top_k))
        start = time.perf_counter()
        milvus_recall = evaluate_retrieval(engine, settings).overall["recall_at_k"].value
        seconds = time.perf_counter() - start
        memory_recall = evaluate_retrieval(memory, settings).overall["recall_at_k"].value
        ours, theirs = memory.candidates(settings), engine.candidates(settings)
        k = args.top_k
        same = float((np.sort(ours.indices[:, :k], axis=1) == np.sort(theirs.indices[:, :k], axis=1)).all(axis=1).mean())
        rows.append({"retriever": retriever, "fusion": fusion, "memory_recall": memory_recall, "milvus_recall": milvus_recall,
                     "same_top_k": same, "max_score_diff_top_k": float(np.abs(ours.scores[:, :k] - theirs.scores[:, :k]).max()),
                     "milvus_seconds": round(seconds, 1)})
        print(json.dumps(rows[-1]), flush=True)


if __name__ == "__main__":
    main()
