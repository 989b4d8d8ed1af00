"""Does the demo knowledge base show the trade-off the product exists for?

For each retriever (hybrid, BM25, dense) and each (top_k, relevance_threshold) of a small grid, the
demo (freshly generated from the current code, seed 0) is scored with the real pipeline and the
offline backends (default extractive generator, lexical judge, default ``VariantsConfig``, v3 in_index):
recall@k on the clean index, v0 faithfulness, v3 Δfaithful and the v3 misled rate. The demo is
meant to show recall@k and Δfaithful both rising with top_k, and a higher threshold lowering both.

Run: ``TUNER_CACHE=/tmp/tradeoff-cache .venv/bin/python bench/demo_tradeoff.py [--seed N]``
(the per-text embedding store in the cache makes later runs fast).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tuner.dataset import generate_demo  # noqa: E402
from tuner.evaluation import evaluate_retrieval  # noqa: E402
from tuner.evaluation import Responder, RobustnessEvaluator, summarize_variant  # noqa: E402
from tuner.generation import build_generator, parse_generator_config  # noqa: E402
from tuner.judging import build_judge, parse_judge_config  # noqa: E402
from tuner.variants import VariantsConfig  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402

GRID: dict[str, list[tuple[int, float]]] = {
    "hybrid": [(1, 0.0), (2, 0.0), (4, 0.0), (8, 0.0), (8, 0.3), (8, 0.4), (8, 0.5)],
    "bm25": [(1, 0.0), (2, 0.0), (4, 0.0), (8, 0.0), (8, 0.3), (8, 0.4), (8, 0.5)],
    "dense": [(1, 0.0), (2, 0.0), (4, 0.0), (8, 0.0), (8, 0.5), (8, 0.6), (8, 0.7)],
}


def _fmt(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--retrievers", default=",".join(GRID))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="demo-tradeoff-") as folder:
        start = time.perf_counter()
        dataset = generate_demo(Path(folder) / "demo", args.seed)
        generated = time.perf_counter() - start
        words = sum(len(d.text.split()) for d in dataset.corpus) + sum(len(c.text.split()) for c in dataset.conflicts)
        print(f"demo seed {args.seed}: {dataset.summary()}; {len(dataset.conflicts)} conflicts over "
              f"{len({c.conflicts_with for c in dataset.conflicts})} documents; {words} words; generated in {generated:.2f} s")
        pipeline = RetrievalPipeline(dataset)
        evaluator = RobustnessEvaluator(
            pipeline,
            Responder(build_generator(parse_generator_config({}, "bench")), build_judge(parse_judge_config({}, "bench"))),
            VariantsConfig(),
        )
        print(f"{'retriever':9} {'k':>2} {'thr':>4} | {'recall@k':>8} {'F(v0)':>6} {'Δfaith v3':>9} {'misled':>6} {'n/N':>8}")
        for retriever in args.retrievers.split(","):
            for top_k, threshold in GRID[retriever]:
                settings = RetrievalSettings(
                    retriever=retriever, chunk_size=240, candidate_depth=30, top_k=top_k, relevance_threshold=threshold
                )
                recall = evaluate_retrieval(pipeline, settings, ci=False).overall["recall_at_k"]
                outcomes = evaluator.evaluate(settings, ("v0", "v3"))
                v0 = summarize_variant(outcomes, "v0", ci=False)
                v3 = summarize_variant(outcomes, "v3", ci=False)
                misled = None if v3.misled_rate is None else v3.misled_rate.value
                print(f"{retriever:9} {top_k:2d} {threshold:4.2f} | {recall.value:8.3f} {_fmt(v0.faithful.value):>6} "
                      f"{_fmt(v3.delta_faithful):>9} {_fmt(misled):>6} {v3.delta_n:>4}/{len(outcomes):<3}", flush=True)
        print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
