"""Pooling bias of a reviewed golden set, before and after the review app's search and "no answer" outcome (issue 29 §1).

CMRC 2018 trial (Chinese, 256 paragraphs, 1,002 questions, each labelled with its paragraph) is imported with
``tuner import squad`` into a temporary folder. Every question gets the candidate pool ``tuner golden from-log``
builds (default pool on this knowledge base: BM25 alone, dense and hybrid left out because MiniLM does not cover Chinese;
``--pool`` to change it; depth 10). A simulated reviewer then decides each question from the labels:

- before (pool only): accept when the pool holds a chunk of the labelled paragraph (checking those chunks), else
  reject: the answer cannot be labelled;
- after (search + no answer): the same where the pool has it; else search the whole knowledge base with the answer
  text through the review app's own search (:class:`tuner.golden.KnowledgeSearch`, top 10) and accept when a chunk of
  the labelled paragraph is found (a label found by search), else mark the case "no answer in the knowledge base"
  (``--search-with question``: the reviewer types the question instead, as one who does not know the answer).

Then a BM25 configuration like a study's knee (top_k 3, 5, 9) is scored with ``evaluate_retrieval`` on the full labels
(all N questions) and on each reviewed set (its accepted cases), and the gap reviewed − full is reported with a paired
bootstrap interval (cases of the full set resampled; the reviewed mean taken over the resampled accepted cases), plus,
after, the lower bound that counts the no-answer cases as misses (:func:`tuner.metrics.recall_lower_bound`).

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/pool_bias.py [--shared PATH] [--depth 10] [--top-k 3,5,9] [--pool bm25,hybrid]
     [--search-with answer|question]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tuner.dataset import load_dataset
from tuner.evaluation import evaluate_retrieval
from tuner.golden import KnowledgeSearch, build_pools, choose_pool
from tuner.metrics import recall_lower_bound
from tuner.progress import RichReporter
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import mean_estimate

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path("cmrc2018") / "cmrc2018_trial.json"
RESAMPLES = 2000


@dataclass(frozen=True)
class Review:
    """The simulated reviewer's outcome per question: accepted from the pool, accepted from search, no answer, rejected."""

    in_pool: np.ndarray
    by_search: np.ndarray

    @property
    def before(self) -> np.ndarray:
        return self.in_pool

    @property
    def after(self) -> np.ndarray:
        return self.in_pool | self.by_search


def simulate(kb_path: Path, depth: int, retrievers: tuple[str, ...], search_with: str, reporter: RichReporter) -> Review:
    dataset = load_dataset(kb_path)
    cases = dataset.golden
    pools = build_pools(dataset, [c.question for c in cases], depth, reporter=reporter, retrievers=retrievers)
    in_pool = np.array([bool(set(c.relevant_doc_ids) & {chunk["doc_id"] for chunk in pool}) for c, pool in zip(cases, pools)])
    search = KnowledgeSearch(dataset, reporter=reporter)
    by_search = np.zeros(len(cases), dtype=bool)
    for index in np.flatnonzero(~in_pool):
        case = cases[index]
        hits = search.search(case.ground_truth if search_with == "answer" else case.question, 10)
        by_search[index] = bool(set(case.relevant_doc_ids) & {hit["doc_id"] for hit in hits})
    reporter.stage(f"search over {search.retrievers}: {int(by_search.sum())} of {int((~in_pool).sum())} cases outside the pool found")
    return Review(in_pool, by_search)


def gap_interval(values: np.ndarray, kept: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """mean(values[kept]) − mean(values), and its 95% percentile interval over resamples of all cases."""
    rng = np.random.default_rng(seed)
    n = len(values)
    gaps = []
    for _ in range(RESAMPLES):
        sample = rng.integers(0, n, n)
        chosen = kept[sample]
        if chosen.any():
            gaps.append(values[sample][chosen].mean() - values[sample].mean())
    low, high = np.percentile(gaps, [2.5, 97.5])
    return float(values[kept].mean() - values.mean()), float(low), float(high)


def fmt(value: float, ci: tuple[float, float] | None) -> str:
    return f"{value:.3f}" if ci is None else f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets", help="folder holding cmrc2018/")
    parser.add_argument("--depth", type=int, default=10, help="pool depth (default 10)")
    parser.add_argument("--top-k", default="3,5,9", help="BM25 top_k values to score (default 3,5,9)")
    parser.add_argument("--pool", help="pool retrievers (default: from-log's and synth's default on this knowledge base)")
    parser.add_argument("--search-with", choices=("answer", "question"), default="answer",
                        help="what the simulated reviewer types into the search box (default: the answer text)")
    args = parser.parse_args()
    source = args.shared / SOURCE
    if not source.is_file():
        print(f"skipped: {source} not found")
        return 0
    reporter = RichReporter()
    with tempfile.TemporaryDirectory(prefix="pool-bias-") as tmp:
        kb_path = Path(tmp) / "cmrc"
        subprocess.run([sys.executable, "-m", "tuner", "-q", "import", "squad", str(source), str(kb_path)], check=True)
        dataset = load_dataset(kb_path)
        retrievers, left_out = choose_pool(dataset, args.pool)
        if left_out is not None:
            reporter.stage(left_out)
        started = time.perf_counter()
        review = simulate(kb_path, args.depth, retrievers, args.search_with, reporter)
        seconds = time.perf_counter() - started
        n = len(dataset.golden)
        accepted_before, accepted_after = int(review.before.sum()), int(review.after.sum())
        no_answer = n - accepted_after
        print(f"CMRC 2018 trial, pool {'+'.join(retrievers)} depth {args.depth}, search with the {args.search_with}: {n} questions; pool holds the labelled paragraph "
              f"for {accepted_before}/{n}; before: {accepted_before} accepted, {n - accepted_before} rejected; after: "
              f"{accepted_after} accepted ({int(review.by_search.sum())} by search), {no_answer} no answer ({seconds:.0f} s)")
        print()
        print("| bm25 top_k | full labels recall (N) | before: reviewed recall (n) | gap before | after: reviewed recall (n) | gap after "
              "| after: lower bound (no answer = miss) |")
        print("|---|---|---|---|---|---|---|")
        pipeline = RetrievalPipeline(dataset, reporter=reporter)
        for top_k in [int(k) for k in args.top_k.split(",")]:
            report = evaluate_retrieval(pipeline, RetrievalSettings(retriever="bm25", top_k=top_k, candidate_depth=max(top_k, 10)))
            values = np.array(report.per_case["recall_at_k"], dtype=float)
            full = mean_estimate(values.tolist(), ci_method="bootstrap")
            assert full.value is not None
            cells = [f"{fmt(full.value, full.ci)} ({n})"]
            for kept in (review.before, review.after):
                part = mean_estimate(values[kept].tolist(), ci_method="bootstrap")
                assert part.value is not None
                gap, low, high = gap_interval(values, kept)
                cells += [f"{fmt(part.value, part.ci)} ({int(kept.sum())}/{n})", f"{gap:+.3f} [{low:+.3f}, {high:+.3f}]"]
            after = mean_estimate(values[review.after].tolist(), ci_method="bootstrap")
            assert after.value is not None and after.ci is not None

            def bound(value: float) -> float:
                return recall_lower_bound(value, accepted_after, no_answer)

            cells.append(fmt(bound(after.value), (bound(after.ci[0]), bound(after.ci[1]))))
            print(f"| {top_k} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
