"""Issue 29 §2: what comparing trials paired changes on a study's front, and the A/A check of the paired comparison.

For each part it runs one study (``tuner run STUDY --trials N --json --no-report`` into ``--work``; a study already
complete there is reused), then reads its front two ways from the same stored trials:

- before: one ε per objective, the study's single-configuration noise floor z·√2·hypot(run_sd, bootstrap_sd)
  (``tuner.stats.min_detectable_difference``) for every pair of trials;
- after: the paired margin of each pair (``tuner.stats.paired_comparison`` over the cases both scored, from the
  per-case recall and faithfulness the trials recorded, plus both trials' run-to-run sd).

It prints the front size, the number of distinct groups on it (tie groups plus untied members), the floor and the
paired margins of neighbouring front members (median and range per objective), and the A/A check on the study's
knee: the same configuration evaluated twice must tie in ≥ 95% of R repetitions at α 5%. With the offline backends a
run is deterministic, so "twice" draws one bootstrap resample of the cases per repetition and scores the knee on it
twice (identical per-case scores); for the stochastic case it regenerates: each run's per-case faithfulness at v3 is
the knee's plus Gaussian noise of sd ``--noise`` (clipped to [0, 1]), compared with and without the run-to-run term.

Parts: ``demo`` (studies/demo.yaml), ``demo-zh`` (studies/demo_zh.yaml), ``conflictnq`` (ConflictNQ val through
``tuner import conflictnq``'s importer, with demo.yaml's settings and ``pick: knee``; read from ../shared/datasets and
never copied into the repository; skipped when absent).

Run: nice -n 10 env PYTHONPATH=$PWD HF_HUB_OFFLINE=1 .venv/bin/python bench/paired.py [--trials 40] [--work DIR]
     [--repetitions 200] [--noise 0.15] [demo] [demo-zh] [conflictnq]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import yaml

from tuner.dataset import write_dataset
from tuner.dataset.importers import import_conflictnq
from tuner.objectives import CONTEXT_WORDS
from tuner.pareto import FrontEntry, front_entries, knee, tie_groups
from tuner.stats import delta_statistic, paired_comparison
from tuner.front import PairedComparisons, StudyRecord, TrialRecord, points_of, study_front

ROOT = Path(__file__).resolve().parent.parent
CONFLICTNQ = Path("shared") / "datasets" / "conflictnq" / "conflict_nq_val.jsonl"
PARTS = ("demo", "demo-zh", "conflictnq")


def shared_file(relative: Path) -> Path:
    """The shared copy beside the repository, or in a folder above a worktree of it."""
    candidates = [folder / relative for folder in Path(__file__).resolve().parents[1:]]
    return next((path for path in candidates if path.is_file()), candidates[0])


def study_file(part: str, folder: Path) -> Path | None:
    """The study file of ``part`` in ``folder`` (None when its data is absent)."""
    if part == "demo-zh":
        study = yaml.safe_load((ROOT / "studies" / "demo_zh.yaml").read_text("utf-8"))
        study["search_space"] = str(ROOT / "search_spaces" / "zh.yaml")
    else:
        study = yaml.safe_load((ROOT / "studies" / "demo.yaml").read_text("utf-8"))
        study["search_space"] = str(ROOT / "search_spaces" / "default.yaml")
    if part == "conflictnq":
        source = shared_file(CONFLICTNQ)
        if not source.is_file():
            print(f"conflictnq: {source} is absent: skipped", file=sys.stderr)
            return None
        dataset = folder / "conflictnq"
        if not dataset.is_dir():
            result = import_conflictnq(source)
            write_dataset(dataset, result.corpus, result.golden, result.conflicts, force=True)
        study.update(name="conflictnq", dataset=str(dataset), pick={"rule": "knee"})
    path = folder / f"{part}.yaml"
    path.write_text(yaml.safe_dump(study, sort_keys=False, allow_unicode=True), "utf-8")
    return path


def run(path: Path, out: Path, trials: int) -> optuna.Study:
    command = [sys.executable, "-m", "tuner.cli", "run", str(path), "--trials", str(trials), "--out", str(out),
               "--json", "--no-report"]
    print("$", " ".join(command), file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True)
    name = json.loads(done.stdout)["study"]
    return optuna.load_study(study_name=name, storage=f"sqlite:///{out / 'study.db'}")


def distinct_groups(entries: list[FrontEntry], groups: list[tuple[int, ...]]) -> int:
    """Front members the comparison can tell apart: each tie group counts once, each untied member once."""
    return len(entries) - sum(len(group) - 1 for group in groups)


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    return f"median {statistics.median(values):.4f} (range {min(values):.4f}–{max(values):.4f})"


def a_a(record: TrialRecord, repetitions: int, noise: float, seed: int = 0) -> dict[str, Any]:
    """The A/A check on one trial's per-case scores (see the module docstring)."""
    rng = np.random.default_rng(seed)
    f0 = np.array([math.nan if v is None else v for v in record.f0 or ()], dtype=float)
    f3 = np.array([math.nan if v is None else v for v in record.f3 or ()], dtype=float)
    recall = np.array(record.recall_cases or (), dtype=float)
    scored = np.isfinite(f0) & np.isfinite(f3)
    f0, f3, recall = f0[scored], f3[scored], recall[scored]
    n = int(f0.size)
    separated = {"deterministic": 0, "regenerated, paired + run term": 0, "regenerated, paired only": 0}
    for rep in range(repetitions):
        idx = rng.integers(0, n, n)
        for scores, statistic in (((recall[idx],), None), ((f0[idx], f3[idx]), delta_statistic)):
            kwargs = {} if statistic is None else {"statistic": statistic}
            if not paired_comparison(scores, scores, n_resamples=200, seed=rep, **kwargs).tied:
                separated["deterministic"] += 1
        runs = [np.clip(f3 + rng.normal(0, noise, n), 0, 1) for _ in range(2)]
        run_sd = float(np.std([delta_statistic(f0, np.clip(f3 + rng.normal(0, noise, n), 0, 1)) for _ in range(20)],
                              ddof=1))
        with_run = paired_comparison((f0, runs[0]), (f0, runs[1]), delta_statistic, run_sd=(run_sd, run_sd),
                                     n_resamples=200, seed=rep)
        alone = paired_comparison((f0, runs[0]), (f0, runs[1]), delta_statistic, n_resamples=200, seed=rep)
        separated["regenerated, paired + run term"] += not with_run.tied
        separated["regenerated, paired only"] += not alone.tied
    comparisons = {"deterministic": 2 * repetitions}
    return {name: f"{count}/{comparisons.get(name, repetitions)} ({count / comparisons.get(name, repetitions):.1%})"
            for name, count in separated.items()} | {"n": n}


def analyse(study: optuna.Study, repetitions: int, noise: float) -> dict[str, Any]:
    directions, margins, after = study_front(study)
    floor = dict(margins)
    before = front_entries(points_of(study), directions, floor)
    records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
    names = [n for n in directions if n != CONTEXT_WORDS]
    neighbours = PairedComparisons(StudyRecord.from_study(study).run_sd).neighbours(after, records, names)
    chosen = knee(after, directions, margins)
    return {
        "front": len(after),
        "floor": {k: round(v, 4) for k, v in floor.items()},
        "distinct groups before": distinct_groups(before, tie_groups(before, directions, floor)),
        "distinct groups after": distinct_groups(after, tie_groups(after, directions, margins)),
        "neighbour margins": {n: spread([row.objectives[n].margin for row in neighbours if n in row.objectives])
                              for n in names},
        "neighbours told apart": {n: f"{sum(not row.objectives[n].tied for row in neighbours if n in row.objectives)}"
                                     f"/{len(neighbours)}" for n in names},
        "knee": chosen.number,
        "A/A on the knee": a_a(records[chosen.number], repetitions, noise),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"some of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--trials", type=int, default=40, help="trials per study (default 40)")
    parser.add_argument("--work", type=Path, help="keep datasets and studies here (default: a temporary folder)")
    parser.add_argument("--repetitions", type=int, default=200, help="A/A repetitions (default 200)")
    parser.add_argument("--noise", type=float, default=0.15,
                        help="per-case sd of regenerated faithfulness in the stochastic A/A (default 0.15)")
    args = parser.parse_args()
    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r} (known: {', '.join(PARTS)})")
    work = args.work or Path(tempfile.mkdtemp(prefix="paired-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    for part in args.parts or PARTS:
        path = study_file(part, work)
        if path is None:
            continue
        study = run(path, work / f"out-{part}", args.trials)
        print(f"\n## {part} ({args.trials} trials)")
        for key, value in analyse(study, args.repetitions, args.noise).items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
