"""Eval figures before and after a change to retrieval, side by side: `tuner eval --json` run from two source trees.

Issue 24 §1: a chunk whose first-stage score is 0 (BM25: no shared term; dense: cosine ≤ 0) is never returned.
This runs the same evaluations with the tree before the fix (``--before``, e.g. ``git archive bb83f69``
unpacked in a folder) and the tree after it (``--after``, default: this checkout), both sharing one cache
(candidates are cached before the rule applies, so both read the same first-stage entries), and prints every
figure that moved.

    mkdir -p /tmp/base && git archive bb83f69 | tar -x -C /tmp/base
    tuner import conflictnq conflict_nq_val.jsonl /tmp/cnq
    python bench/zero_score.py --before /tmp/base demo demo-zh /tmp/cnq
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FIGURES = ("hit_at_k", "mrr", "recall_at_k", "context_precision", "mean_context_words")


def evaluate(tree: Path, dataset: str, retriever: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "tuner", "eval", dataset, "--retriever", retriever, "--json"],
        env=env, capture_output=True, text=True, check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="source tree before the change")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1], help="source tree after it")
    parser.add_argument("--retrievers", default="bm25,dense,hybrid")
    parser.add_argument("datasets", nargs="+", help="dataset folders, or demo / demo-zh")
    args = parser.parse_args()
    print("| dataset | retriever | figure | before | after |\n|---|---|---|---|---|")
    for dataset in args.datasets:
        for retriever in args.retrievers.split(","):
            before, after = evaluate(args.before, dataset, retriever), evaluate(args.after, dataset, retriever)
            moved = [name for name in FIGURES if before[name] != after[name]]
            for name in moved or ["(none moved)"]:
                old, new = (before.get(name, ""), after.get(name, ""))
                cells = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in (old, new)]
                print(f"| {Path(dataset).name} | {retriever} | {name} | {cells[0]} | {cells[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
