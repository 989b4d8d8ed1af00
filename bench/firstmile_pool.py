"""Pool recall of ``tuner golden from-log`` on public data used as a query log (issue 21 §2).

For each set, the questions alone (labels hidden) are written as a CSV log and run through the whole from-log path
(normalize, merge duplicates, draw every merged question, pool BM25 + dense + hybrid top-``depth`` chunks over the
imported corpus with the default chunking). Then the labels come back: the share of questions whose labeled document
is in the pool (pool recall: what a reviewer can find by reading the pool only), and the median pool size (how many
chunks a reviewer reads per question). A merged question counts as found when any labeled document of any of its
merged wordings is in its pool.

Sets: CMRC 2018 trial (256 paragraphs, 1,002 questions; `tuner import squad`) and ConflictNQ val (225 questions;
`tuner import conflictnq`), both read from ../shared/datasets into a temporary folder, never copied into the repository.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/firstmile_pool.py [--shared PATH] [--depth 5,10,20]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tuner.dataset import load_dataset, load_knowledge_base
from tuner.golden import Sampling, drafts_from_log, normalize_question
from tuner.progress import SilentReporter

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "cmrc2018-trial": ("squad", Path("cmrc2018") / "cmrc2018_trial.json"),
    "conflictnq-val": ("conflictnq", Path("conflictnq") / "conflict_nq_val.jsonl"),
}


def imported(kind: str, source: Path, work: Path) -> Path:
    target = work / kind
    subprocess.run([sys.executable, "-m", "tuner", "-q", "import", kind, str(source), str(target)], check=True)
    return target


def measure(kb_path: Path, depth: int, work: Path) -> dict[str, float]:
    dataset = load_dataset(kb_path)
    labels: dict[str, set[str]] = {}
    for case in dataset.golden:
        labels.setdefault(normalize_question(case.question), set()).update(case.relevant_doc_ids)
    log = work / f"{kb_path.name}-log.csv"
    with log.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["query"])
        writer.writerows([case.question] for case in dataset.golden)
    kb = load_knowledge_base(kb_path)
    started = time.perf_counter()
    drafts = drafts_from_log(log, kb, Sampling(n=len(dataset.golden)), depth=depth, reporter=SilentReporter())
    seconds = time.perf_counter() - started
    runs = ("pool", "bm25", "dense", "hybrid")
    found = dict.fromkeys(runs, 0)
    for row in drafts.rows:
        wanted = set().union(*(labels.get(normalize_question(v), set()) for v in row["variants"]))
        for run in runs:  # the pool, and what each retriever alone put into it
            found[run] += bool(wanted & {c["doc_id"] for c in row["pool"] if run == "pool" or c["ranks"][run] is not None})
    n = len(drafts.rows)
    return {"questions": len(dataset.golden), "merged": n, "median_pool": statistics.median(drafts.pool_sizes),
            "mean_pool": statistics.fmean(drafts.pool_sizes), "seconds": seconds, **{f"{k}_recall": v / n for k, v in found.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--depth", default="10", help="comma-separated pool depths (default 10)")
    args = parser.parse_args()
    depths = [int(d) for d in args.depth.split(",")]
    print("| set | depth | questions (merged) | pool recall | bm25 alone | dense alone | hybrid alone | median pool | mean pool | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="firstmile-") as tmp:
        work = Path(tmp)
        for name, (kind, relative) in SETS.items():
            source = args.shared / relative
            if not source.is_file():
                print(f"| {name} | skipped: {source} not found |")
                continue
            kb = imported(kind, source, work)
            for depth in depths:
                r = measure(kb, depth, work)
                print(f"| {name} | {depth} | {r['questions']:.0f} ({r['merged']:.0f}) | {r['pool_recall']:.3f} | {r['bm25_recall']:.3f} | "
                      f"{r['dense_recall']:.3f} | {r['hybrid_recall']:.3f} | {r['median_pool']:g} | {r['mean_pool']:.1f} | {r['seconds']:.0f} |",
                      flush=True)


if __name__ == "__main__":
    main()
