"""Benchmark: the RAGStress matrix of `tuner stress` on the demo and on ConflictNQ val, offline backends.

Each dataset is prepared as a user would: the demo copied and corrupted with ``tuner corrupt --force``
(4 types × 3 severities replace its stale versions); ConflictNQ val imported with ``tuner import
conflictnq`` and corrupted the same way (its fabricated passages replaced). Then
``tuner stress --config deploy.yaml --dataset DIR --out DIR`` with ``settings: {top_k: 5}``, and the
per-condition table, the corrupted share and the hypothesis checks are printed as Markdown from
``stress.json``. ConflictNQ is skipped when /work/shared/datasets/conflictnq is absent.

Run: ``.venv/bin/python bench/stress.py WORKDIR`` (WORKDIR receives the datasets and reports).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CONFLICTNQ = Path("/work/shared/datasets/conflictnq/conflict_nq_val.jsonl")


def tuner(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "tuner", "-q", *args], check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def prepare(work: Path) -> dict[str, Path]:
    from tuner.dataset import resolve_dataset

    datasets = {}
    demo = work / "demo"
    if not demo.exists():
        shutil.copytree(resolve_dataset("demo"), demo)
        tuner("corrupt", str(demo), "--force")
    datasets["demo"] = demo
    if CONFLICTNQ.is_file():
        cnq = work / "conflictnq-val"
        if not cnq.exists():
            tuner("import", "conflictnq", str(CONFLICTNQ), str(cnq))
            tuner("corrupt", str(cnq), "--force")
        datasets["ConflictNQ val"] = cnq
    return datasets


def _value(entry: dict[str, Any], form: str) -> str:
    """``value [lo, hi]`` of a JSON entry: ``form`` "pct" (a share) or "points" (a difference, signed points)."""
    value, ci = entry["value"], entry["ci"]
    if value is None:
        return "n/a"
    def show(x: float) -> str:
        return f"{x:.1%}" if form == "pct" else f"{x * 100:+.1f}"

    return show(value) + (f" [{show(ci[0])}, {show(ci[1])}]" if ci else "")


def table(report: dict[str, Any]) -> list[str]:
    lines = ["| condition | accuracy [95% CI] | Δ pts [95% CI] | ρ | misled [95% CI] | corrupted share |", "|---" * 6 + "|"]
    for name, entry in report["conditions"].items():
        share = entry["corrupted_share"]["value"]
        lines.append(f"| {name} | {_value(entry['accuracy'], 'pct')} | {_value(entry['delta'], 'points')} | "
                     f"{_value(entry['rho'], 'pct')} | {_value(entry['misled'], 'pct')} | {'—' if share is None else f'{share:.1%}'} |")
    return lines


def main() -> None:
    work = Path(sys.argv[1])
    work.mkdir(parents=True, exist_ok=True)
    config = work / "deploy.yaml"
    config.write_text("settings: {top_k: 5}\n", "utf-8")
    for name, folder in prepare(work).items():
        out = work / f"out-{folder.name}"
        out.mkdir(exist_ok=True)
        start = time.perf_counter()
        tuner("stress", "--config", str(config), "--dataset", str(folder), "--out", str(out))
        elapsed = time.perf_counter() - start
        report = json.loads((out / "stress.json").read_text("utf-8"))
        print(f"### {name} ({elapsed / 60:.1f} min)\n")
        print("\n".join(table(report)))
        print()
        print((out / "stress.md").read_text("utf-8").split("Hypotheses (as measured)")[1].split("##")[0].strip())
        print()


if __name__ == "__main__":
    main()
