"""Issue 29 §3: the winner's curse measured: how much of a study's pick holds on cases the search never saw.

For each part and sampler seed it runs one study with ``confirm: {share: 0.3, seed: 0}`` (TPE, ``--trials`` trials,
the offline extractive generator and lexical judge, ``pick: knee``) and prints, from the stored study:

- the best-recall front trial and the knee (picked on the tuning figures): tuning and held-out recall@k and Δ with
  their 95% intervals, and the optimism (tuning − held out; a positive recall optimism and a negative Δ optimism are
  the curse) with its interval (:func:`difference_interval`);
- the knee picked on the held-out figures (what ``tuner run`` exports with ``confirm:``), and whether it differs.

Parts: ``conflictnq`` (ConflictNQ val through ``tuner import conflictnq``'s importer with studies/demo.yaml's
settings: 225 questions, 68 held out), ``cmrc`` (CMRC 2018 trial through ``tuner import squad``, a seeded sample of
``--cases`` questions over every paragraph, Chinese conflicts from ``tuner corrupt --types factual_corruption
--severities moderate``, studies/demo_zh.yaml's settings over search_spaces/zh.yaml). The data is read from
../shared/datasets and never copied into the repository; a part whose file is absent is skipped.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/confirm.py [--trials 40] [--seeds 0 1 2] [--cases 300] [--work DIR]
     [conflictnq] [cmrc]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import optuna
import yaml

from tuner.dataset import write_dataset
from tuner.dataset.importers import import_conflictnq, import_squad
from tuner.objectives import RECALL, robustness_objective
from tuner.pareto import knee
from tuner.front import StudyRecord, TrialRecord, confirmed_entries, optimism, study_front

from paired import run  # one way to run a study and read it back, shared with the paired bench

ROOT = Path(__file__).resolve().parent.parent
DATA = {"conflictnq": Path("shared") / "datasets" / "conflictnq" / "conflict_nq_val.jsonl",
        "cmrc": Path("shared") / "datasets" / "cmrc2018" / "cmrc2018_trial.json"}
CONFIRM = {"share": 0.3, "seed": 0}


def shared_file(relative: Path) -> Path:
    """The shared copy beside the repository, or in a folder above a worktree of it."""
    candidates = [folder / relative for folder in Path(__file__).resolve().parents[1:]]
    return next((path for path in candidates if path.is_file()), candidates[0])


def dataset_folder(part: str, work: Path, cases: int) -> Path | None:
    """The part's dataset written once into ``work`` (None when its data is absent)."""
    source = shared_file(DATA[part])
    if not source.is_file():
        print(f"{part}: {source} is absent: skipped", file=sys.stderr)
        return None
    target = work / part
    if (target / "golden.jsonl").is_file():
        return target
    if part == "conflictnq":
        result = import_conflictnq(source)
        write_dataset(target, result.corpus, result.golden, result.conflicts, force=True)
        return target
    result = import_squad(source)
    chosen = sorted(random.Random(0).sample(range(len(result.golden)), min(cases, len(result.golden))))
    write_dataset(target, result.corpus, [result.golden[i] for i in chosen], [], force=True)
    subprocess.run([sys.executable, "-m", "tuner", "corrupt", str(target), "--types", "factual_corruption",
                    "--severities", "moderate"], cwd=ROOT, check=True, capture_output=True, text=True,
                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return target


def interval(bounds: Any) -> str:
    """``[low, high]`` of a 95% interval, ``[—]`` when it or a bound is undefined."""
    if not bounds or None in bounds:
        return "[—]"
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def study_file(part: str, dataset: Path, seed: int, work: Path) -> Path:
    base = "demo_zh.yaml" if part == "cmrc" else "demo.yaml"
    space = "zh.yaml" if part == "cmrc" else "default.yaml"
    study = yaml.safe_load((ROOT / "studies" / base).read_text("utf-8"))
    study.update(name=f"{part}-seed{seed}", dataset=str(dataset), search_space=str(ROOT / "search_spaces" / space),
                 sampler={"name": "tpe", "seed": seed}, pick={"rule": "knee"}, confirm=CONFIRM)
    path = work / f"{part}-seed{seed}.yaml"
    path.write_text(yaml.safe_dump(study, sort_keys=False, allow_unicode=True), "utf-8")
    return path


def difference_interval(a: float, a_ci: tuple[float, float], b: float, b_ci: tuple[float, float]) -> tuple[float, float]:
    """The 95% interval of a − b for estimates on disjoint case sets (tuning and held-out shares are independent):
    a − b ± hypot(h_a, h_b), h the half-width (high − low)/2 of each interval (a normal approximation). Example:
    0.9 [0.86, 0.94] − 0.8 [0.77, 0.83] = 0.1 ± hypot(0.04, 0.03) = [0.05, 0.15]."""
    half = math.hypot((a_ci[1] - a_ci[0]) / 2, (b_ci[1] - b_ci[0]) / 2)
    return a - b - half, a - b + half


def measure(study: optuna.Study) -> dict[str, Any]:
    directions, _, entries = study_front(study)
    delta = robustness_objective(directions)
    held = StudyRecord.from_study(study).confirm
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}

    def row(number: int) -> str:
        tuning = next(e for e in entries if e.number == number).values
        tuning_ci = TrialRecord.from_trial(trials[number]).intervals()
        confirmed = held[number]
        values, held_ci = confirmed.values, confirmed.ci
        parts = []
        for name in (RECALL, delta):
            if values.get(name) is None:
                parts.append(f"{name} {tuning[name]:.3f} / —")
                continue
            text = (f"{name} {tuning[name]:.3f} {interval(tuning_ci.get(name))} / {values[name]:.3f} "
                    f"{interval(held_ci.get(name))} (optimism {optimism(tuning[name], values[name], directions[name]):+.3f}")
            bounds = held_ci.get(name)
            if name in tuning_ci and bounds and None not in bounds:
                low, high = difference_interval(tuning[name], tuning_ci[name], values[name], (bounds[0], bounds[1]))
                text += f" [{low:+.3f}, {high:+.3f}]"
            parts.append(text + ")")
        return f"trial {number} (held out {confirmed.n}/{confirmed.n_total}): " + "; ".join(parts)

    best = max(entries, key=lambda e: (e.values[RECALL], -e.number)).number
    tuning_knee = knee(entries, directions, {}).number
    confirmed_knee = knee(confirmed_entries(study, entries), directions, {}).number
    return {
        "front": len(entries),
        "tuning cases": len(StudyRecord.from_study(study).case_order),
        "best recall (tuning / held out)": row(best),
        "knee (tuning / held out)": row(tuning_knee),
        "knee on the held-out figures": confirmed_knee,
        "pick differs": confirmed_knee != tuning_knee,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"some of {', '.join(DATA)} (default: all)")
    parser.add_argument("--trials", type=int, default=40, help="TPE trials per study (default 40)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="sampler seeds (default 0 1 2)")
    parser.add_argument("--cases", type=int, default=300, help="cmrc: questions sampled (default 300; 90 held out)")
    parser.add_argument("--work", type=Path, help="keep datasets and studies here (default: a temporary folder)")
    args = parser.parse_args()
    unknown = [part for part in args.parts if part not in DATA]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r} (known: {', '.join(DATA)})")
    work = args.work or Path(tempfile.mkdtemp(prefix="confirm-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    for part in args.parts or list(DATA):
        dataset = dataset_folder(part, work, args.cases)
        if dataset is None:
            continue
        differs = 0
        for seed in args.seeds:
            study = run(study_file(part, dataset, seed, work), work / f"out-{part}-{seed}", args.trials)
            figures = measure(study)
            differs += bool(figures["pick differs"])
            print(f"\n## {part}, TPE seed {seed}, {args.trials} trials")
            for key, value in figures.items():
                print(f"{key}: {value}")
        print(f"\n{part}: the held-out knee differs from the tuning knee in {differs}/{len(args.seeds)} seeds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
