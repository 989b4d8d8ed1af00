"""The deployed retriever on Milvus Lite against memory (issue 45, ``tuner serve --engine milvus``): per retriever, the
share of golden questions whose returned chunks are the same on both engines, and the latency of one request
(``Retriever.retrieve`` in this process, no HTTP; warm: every question asked once untimed first), p50 / p95, with no
filter, with a configured ``metadata_filter`` (sent as the trial's expression) and with a request's ``filters``
(sent as chunk ids).

    HF_HUB_OFFLINE=1 python bench/serve_milvus.py demo --uri /tmp/serve.db
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from tuner.dataset import load_dataset, resolve_dataset
from tuner.deploy import Retriever
from tuner.engine import MilvusEngine
from tuner.settings import RetrievalSettings


def _timed(retriever: Retriever, questions: list[str], filters: dict[str, Any] | None) -> tuple[list[list[str]], list[float]]:
    for question in questions:
        retriever.retrieve(question, filters=filters)
    returned, seconds = [], []
    for question in questions:
        start = time.perf_counter()
        chunks = retriever.retrieve(question, filters=filters)
        seconds.append(time.perf_counter() - start)
        returned.append([c.metadata["chunk_id"] for c in chunks])
    return returned, seconds


def _ms(seconds: list[float]) -> str:
    return f"{np.percentile(seconds, 50) * 1000:.1f} / {np.percentile(seconds, 95) * 1000:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("--uri", default=str(Path(tempfile.mkdtemp()) / "serve.db"))
    parser.add_argument("--top-k", type=int, default=4)
    args = parser.parse_args()
    dataset = load_dataset(resolve_dataset(args.dataset))
    questions = [case.question for case in dataset.golden]
    documents = sorted({doc.doc_id for doc in dataset.corpus})
    half = documents[: len(documents) // 2]  # a filter that keeps half the documents
    engine = MilvusEngine(backend="milvus", uri=args.uri)
    rows = []
    for retriever, fusion in (("dense", "blend"), ("bm25", "blend"), ("hybrid", "blend"), ("hybrid", "rrf")):
        for name, configured, request in (("none", {}, None), ("configured", {"half": {"doc_id": half}}, None),
                                          ("request", {}, {"doc_id": half})):
            settings = RetrievalSettings(retriever=retriever, fusion=fusion, top_k=args.top_k, candidate_depth=30,
                                         chunk_size=320, metadata_filters=configured,
                                         metadata_filter="half" if configured else "none")
            memory, milvus = Retriever(settings, dataset), Retriever(settings, dataset, engine=engine)
            (ours, our_seconds), (theirs, their_seconds) = _timed(memory, questions, request), _timed(milvus, questions, request)
            same = sum(a == b for a, b in zip(ours, theirs)) / len(questions)
            rows.append({"retriever": f"{retriever} {fusion}" if retriever == "hybrid" else retriever, "filter": name,
                         "same_chunks": round(same, 3), "memory_ms_p50_p95": _ms(our_seconds),
                         "milvus_ms_p50_p95": _ms(their_seconds)})
            print(json.dumps(rows[-1]), flush=True)
    print(f"{len(questions)} questions, {len(dataset.corpus)} documents, top_k {args.top_k}, candidate_depth 30, chunk_size 320")


if __name__ == "__main__":
    main()
