"""What a study spends on LLM requests (issue 23 §1–2). Run:
HF_HUB_OFFLINE=1 /work/venv/bin/python bench/llm_cost.py [--trials N] [--llm-trials N] [--work DIR]

- ``skip``: the demo TPE study with ``constraints: {min_recall: 0.95}``, offline backends (extractive, lexical), with
  and without answering the trials below the floor (``constraints.answer_infeasible``): generator and judge requests,
  wall time, trials left unanswered, and whether the two fronts are the same trials with the same values.
- ``llm``: the same study, fewer trials, on the loopback ``FakeChatServer`` (an ``openai`` generator that answers
  with the best-ranked passage, an ``llm`` judge that answers ``supported`` when a quoted alias of the fact is in the
  judged text, else ``absent``: deterministic, computed from the prompt), with and without the skip: requests
  the server received, prompt tokens, and the share of them its simulated prefix cache served.
- ``batch``: the ``llm`` study with the skip, per-keypoint judging vs ``judge: {batch_keypoints: true}``: requests,
  prompt tokens and prefix-cache share per study, and whether every trial's values are equal (the server answers
  deterministically, so equal verdicts give equal values).

The first run of a pair also builds the chunks, indexes and vectors both runs use, so the wall times of a pair
compare only on a cache that already holds them (``TUNER_CACHE`` of an earlier run).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from tuner.llm.testing import FakeChatServer, keypoint_oracle_reply
from tuner.front import study_front, study_summary
from tuner.study import load_study_file, run_study

ROOT = Path(__file__).resolve().parent.parent
DATASET = "demo"
def write_study(folder: Path, name: str, **overrides: Any) -> Path:
    base = yaml.safe_load((ROOT / "studies" / "demo.yaml").read_text())
    base.update({"name": name, "output": str(folder), "dataset": DATASET, "search_space": str(ROOT / "search_spaces" / "default.yaml"),
                 **overrides})
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(base, sort_keys=False))
    return path


def run(folder: Path, name: str, trials: int, **overrides: Any) -> dict[str, Any]:
    study_file = write_study(folder, name, **overrides)
    start = time.perf_counter()
    result = run_study(load_study_file(study_file), trials=trials)
    elapsed = time.perf_counter() - start
    summary = study_summary(result.study)
    _, _, entries = study_front(result.study)
    return {
        "seconds": elapsed,
        "generator": summary.calls.generator,
        "judge": summary.calls.judge,
        "tokens": summary.calls.tokens,
        "cached_tokens": summary.calls.cached_tokens,
        "skipped": summary.n_skipped,
        "complete": summary.n_complete,
        "front": sorted((e.number, tuple(round(v, 6) for v in e.values.values())) for e in entries),
        "params": {t.number: t.params for t in result.study.trials},
        "values": {t.number: t.values for t in result.study.trials},
    }


def compare(label: str, without: dict[str, Any], with_skip: dict[str, Any]) -> None:
    same_front = without["front"] == with_skip["front"]
    same_trials = without["params"] == with_skip["params"]
    print(f"## {label}")
    print("| run | generator requests | judge requests | tokens | cached tokens | trials not answered | wall s |")
    print("|---|---|---|---|---|---|---|")
    for run_label, r in (("answer every trial", without), ("skip below min_recall", with_skip)):
        print(f"| {run_label} | {r['generator']:,} | {r['judge']:,} | {r['tokens']:,} | {r['cached_tokens']:,} | "
              f"{r['skipped']} | {r['seconds']:.1f} |")
    calls = lambda r: r["generator"] + r["judge"]  # noqa: E731
    print(f"requests ratio (skip / answer all): {calls(with_skip) / max(calls(without), 1):.3f}; "
          f"wall time ratio: {with_skip['seconds'] / without['seconds']:.3f}")
    print(f"same configurations sampled: {same_trials}; same front (trials and values): {same_front}")
    if not same_front:
        print(f"front answering all: {without['front']}\nfront with skip: {with_skip['front']}")
    print()


def judging(work: Path, trials: int, server: FakeChatServer, endpoint: dict[str, Any], constraints: dict[str, Any],
            floor: dict[str, float]) -> None:
    """The ``batch`` part: per-keypoint vs batched judge requests on the same study."""
    runs = {}
    for label, batched in (("per keypoint", False), ("batched", True)):
        sent = len(server.requests)
        runs[label] = run(work, f"judge-{'batched' if batched else 'per-keypoint'}", trials, constraints=constraints,
                          noise_floor=floor, generator={"backend": "openai", **endpoint},
                          judge={"backend": "llm", **endpoint, "batch_keypoints": batched})
        runs[label]["server"] = len(server.requests) - sent
    print(f"## judge requests, {DATASET} TPE, {trials} trials, loopback LLM backends, min_recall {constraints['min_recall']}")
    print("| judging | judge requests | generator requests | requests at the server | prompt tokens | cached tokens (share) | wall s |")
    print("|---|---|---|---|---|---|---|")
    for label, r in runs.items():
        print(f"| {label} | {r['judge']:,} | {r['generator']:,} | {r['server']:,} | {r['tokens']:,} | "
              f"{r['cached_tokens']:,} ({r['cached_tokens'] / max(r['tokens'], 1):.3f}) | {r['seconds']:.1f} |")
    single, batched = runs["per keypoint"], runs["batched"]
    print(f"judge requests ratio (batched / per keypoint): {batched['judge'] / max(single['judge'], 1):.3f}; "
          f"prompt tokens ratio: {batched['tokens'] / max(single['tokens'], 1):.3f}")
    print(f"same configurations: {single['params'] == batched['params']}; "
          f"every trial's values equal: {single['values'] == batched['values']}; same front: {single['front'] == batched['front']}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--llm-trials", type=int, default=8)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--dataset", default="demo", help="the study's dataset (default demo; e.g. ConflictNQ val imported "
                        "with tuner import conflictnq)")
    parser.add_argument("--min-recall", type=float, default=0.95)
    parser.add_argument("parts", nargs="*", default=["skip", "llm", "batch"])
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="llm-cost-"))
    work.mkdir(parents=True, exist_ok=True)
    constraints = {"min_recall": args.min_recall}
    global DATASET
    DATASET = args.dataset
    floor = {"recall_at_k": 0.02, "v3_delta_faithful": 0.1}  # fixed, so both runs skip the calibration and compare trials
    if "skip" in args.parts:
        without = run(work, "answer-all", args.trials, constraints={**constraints, "answer_infeasible": True},
                      noise_floor=floor)
        with_skip = run(work, "skip", args.trials, constraints=constraints, noise_floor=floor)
        compare(f"{DATASET} TPE, {args.trials} trials, offline backends, min_recall {args.min_recall}", without, with_skip)
    if "llm" in args.parts or "batch" in args.parts:
        with FakeChatServer(keypoint_oracle_reply) as server:
            endpoint = {"base_url": server.url, "model": "stand-in", "api_key_env": None, "cache": False, "concurrency": 8}
            backends = {"generator": {"backend": "openai", **endpoint}, "judge": {"backend": "llm", **endpoint}}
            if "batch" in args.parts:
                judging(work, args.llm_trials, server, endpoint, constraints, floor)
            if "llm" not in args.parts:
                return
            sent = len(server.requests)
            without = run(work, "llm-answer-all", args.llm_trials, constraints={**constraints, "answer_infeasible": True},
                          noise_floor=floor, **backends)
            without["server"] = len(server.requests) - sent
            sent = len(server.requests)
            with_skip = run(work, "llm-skip", args.llm_trials, constraints=constraints,
                            noise_floor=floor, **backends)
            with_skip["server"] = len(server.requests) - sent
        compare(f"{DATASET} TPE, {args.llm_trials} trials, loopback LLM backends, min_recall {args.min_recall}", without, with_skip)
        for label, r in (("answer every trial", without), ("skip", with_skip)):
            share = r["cached_tokens"] / max(r["tokens"], 1)
            print(f"{label}: {r['server']:,} requests reached the server; cached prompt tokens / all tokens {share:.3f}")


if __name__ == "__main__":
    main()
