"""Issue 29 §4: does sampling only the knobs that can act find a better recall–Δ front for the same trials?

Each part runs one study file per arm and seed, with the same budget, noise and a fixed noise floor. Arms:

- ``flat``: every knob sampled on every trial (``sampler: {conditional: false}``, independent TPE: the behaviour
  before §4);
- ``conditional``: the default (a knob only when the trial's other choices let it act, multivariate TPE on the
  group-decomposed space);
- ``conditional-independent``: the same define-by-run space with independent TPE (``sampler.options:
  {multivariate: false}``), which separates what define-by-run does from what the multivariate sampler does.

The space is ``search_spaces/default.yaml`` (which has ``fusion``) plus ``hybrid_weight`` and
``rrf_k``, the knobs only hybrid trials can use. Printed per part, arm and seed: the hypervolume after the first
20 and 40 evaluated trials (complete or pruned, repeats of an evaluated configuration not counted), the number of
distinct configurations evaluated (and of distinct ones counting only the settings that act: the rest retrieve the
same contexts as another trial), and how many trials recorded a knob that could not act.

Parts:

- ``demo``: ``studies/demo.yaml`` (the built-in demo, offline extractive generator and lexical judge).
- ``conflictnq``: ConflictNQ val (``conflict_nq_val.jsonl``, 225 questions) through ``tuner import conflictnq``
  with ``studies/demo.yaml``'s settings and ``pick: knee``; skipped when the file is absent.

The hypervolume reference is recall 0 and Δ 0.2, raised to the worst Δ of any trial of the part (as in
bench/versions_conflictnq.py), so that every trial counts and all runs of a part share one reference.

Run: nice -n 10 env PYTHONPATH=$PWD HF_HUB_OFFLINE=1 .venv/bin/python bench/conditional.py
     [--trials 40] [--seeds 0 1 2] [--arms ARM ...] [--at 20 40] [--floor 0.1] [--work DIR] [--data FILE]
     [demo] [conflictnq]
     or, for the runs of a part so far: bench/conditional.py --from-runs WORK/PART/runs.json
Runs of other seeds or arms already in a part's runs.json are kept, so separate invocations into one ``--work``
add up to one table.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import optuna
import yaml

from tuner.dataset import write_dataset
from tuner.dataset.importers import import_conflictnq
from tuner.objectives import DELTA, RECALL
from tuner.pareto import Point, hypervolume_2d
from tuner.settings import RetrievalSettings, acts
from tuner.front import TrialRecord, directions_of

ROOT = Path(__file__).resolve().parent.parent
RELATIVE = Path("shared") / "datasets" / "conflictnq" / "conflict_nq_val.jsonl"
PARTS = ("demo", "conflictnq")
ARMS = ("flat", "conditional", "conditional-independent")
SAMPLER_OF_ARM: dict[str, dict[str, Any]] = {
    "flat": {"conditional": False},
    "conditional": {"conditional": True},
    "conditional-independent": {"conditional": True, "options": {"multivariate": False}},
}
REFERENCE_DELTA = 0.2
HYBRID_KNOBS = {
    "hybrid_weight": {"type": "float", "low": 0.0, "high": 1.0, "step": 0.25},
    "rrf_k": {"type": "categorical", "choices": [10, 60]},
}


def default_path() -> Path:
    """The shared copy beside the repository, or in a folder above a worktree of it."""
    candidates = [folder / RELATIVE for folder in Path(__file__).resolve().parents[1:]]
    return next((path for path in candidates if path.is_file()), candidates[0])


def study_files(folder: Path, study: dict[str, Any], seed: int, floor: float, arms: list[str]) -> dict[str, Path]:
    """The study file once per arm of ``arms``, over default.yaml plus the hybrid-only knobs, with seed ``seed``."""
    space = {**yaml.safe_load((ROOT / "search_spaces" / "default.yaml").read_text("utf-8")), **HYBRID_KNOBS}
    space_file = folder / "space.yaml"
    space_file.write_text(yaml.safe_dump(space, sort_keys=False), "utf-8")
    files = {}
    for arm in arms:
        path = folder / f"study_{arm}_{seed}.yaml"
        spec = {**study, "name": f"{study['name']}_{arm}_{seed}", "search_space": str(space_file), "seed": seed,
                "sampler": {"name": "tpe", "seed": seed, **SAMPLER_OF_ARM[arm]},
                "noise_floor": {RECALL: 0.0, DELTA: floor}}
        path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), "utf-8")
        files[arm] = path
    return files


def run_study(study_file: Path, out: Path, trials: int) -> tuple[dict[str, Any], float, float]:
    """``tuner run STUDY --trials N --out OUT --json --no-report`` (a complete study there is resumed: no new trials);
    its summary, wall seconds and CPU seconds (user + system of the child, which the machine's load does not inflate
    as much as the wall time)."""
    command = [sys.executable, "-m", "tuner.cli", "run", str(study_file), "--trials", str(trials), "--out", str(out),
               "--json", "--no-report"]
    print("$", " ".join(command), file=sys.stderr, flush=True)
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary: dict[str, Any] = json.loads(done.stdout)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return summary, time.perf_counter() - start, cpu


def trials_of(out: Path, name: str) -> dict[str, Any]:
    """The evaluated trials of the study in ``out`` in the order they ran: values (None when pruned), parameters,
    settings, and the parameters recorded that could not act under the trial's settings."""
    study = optuna.load_study(study_name=name, storage=f"sqlite:///{out / 'study.db'}")
    rows = []
    for trial in sorted(study.get_trials(deepcopy=False), key=lambda t: t.number):
        record = TrialRecord.from_trial(trial)
        if record.duplicate_of is not None or record.settings is None:
            continue
        if trial.state not in (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED):
            continue
        feasible = trial.state == optuna.trial.TrialState.COMPLETE and not record.unscorable and not record.skipped
        values = dict(zip(directions_of(study), trial.values)) if feasible and trial.values else None
        inert = [name for name in trial.params if not acts(name, record.settings)]
        rows.append({"number": trial.number, "values": values, "params": dict(trial.params), "inert": inert,
                     "settings": RetrievalSettings(**record.settings).model_dump()})
    return {"directions": dict(directions_of(study)), "trials": rows}


def acting(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` without the values that cannot act (:data:`tuner.settings.ACTS_WHEN`): two trials with the same
    acting settings retrieve the same contexts."""
    return {name: value for name, value in settings.items() if acts(name, settings)}


def hypervolume_at(run: dict[str, Any], n: int, reference: dict[str, float]) -> float:
    points = [Point(row["number"], row["values"]) for row in run["trials"][:n] if row["values"] is not None]
    return hypervolume_2d(points, run["directions"], reference) if points else 0.0


def summarize(runs: dict[tuple[str, int], dict[str, Any]], at: list[int]) -> dict[str, Any]:
    worst = max([REFERENCE_DELTA, *(row["values"][DELTA] for run in runs.values() for row in run["trials"] if row["values"])])
    reference = {RECALL: 0.0, DELTA: worst if worst == REFERENCE_DELTA else round(worst + 0.005, 3)}
    table: dict[str, Any] = {"reference": reference, "rows": []}
    for (arm, seed), run in sorted(runs.items()):
        table["rows"].append({
            "arm": arm, "seed": seed, "evaluated": len(run["trials"]),
            "hypervolume": {n: hypervolume_at(run, n, reference) for n in at},
            "distinct": len({json.dumps(row["settings"], sort_keys=True) for row in run["trials"]}),
            "distinct_acting": len({json.dumps(acting(row["settings"]), sort_keys=True) for row in run["trials"]}),
            "inert_recorded": sum(bool(row["inert"]) for row in run["trials"]),
            "wall_s": run["wall_s"], "cpu_s": run.get("cpu_s"),
        })
    return table


def show(part: str, table: dict[str, Any], at: list[int]) -> None:
    print(f"\n## {part} (reference {table['reference']})")
    print("| arm | seed | evaluated | distinct configurations (by what acts) | trials recording a knob that cannot act | "
          + " | ".join(f"hypervolume @{n}" for n in at) + " | wall s | CPU s |")
    print("|---|---|---|---|---|" + "---|" * len(at) + "---|---|")
    for row in table["rows"]:
        print(f"| {row['arm']} | {row['seed']} | {row['evaluated']} | {row['distinct']} ({row['distinct_acting']}) | "
              f"{row['inert_recorded']} | "
              + " | ".join(f"{row['hypervolume'][n]:.4f}" for n in at) + f" | {row['wall_s']:.0f} | "
              + ("—" if row["cpu_s"] is None else f"{row['cpu_s']:.0f}") + " |")
    for n in at:
        by_arm = {arm: [r["hypervolume"][n] for r in table["rows"] if r["arm"] == arm] for arm in ARMS}
        spread = "; ".join(f"{arm} {statistics.mean(v):.4f} (seeds {min(v):.4f}–{max(v):.4f})"
                           for arm, v in by_arm.items() if v)
        print(f"@{n}: mean {spread}")
        for arm, baseline in (("conditional", "flat"), ("conditional-independent", "flat"),
                              ("conditional-independent", "conditional")):
            base = {r["seed"]: r["hypervolume"][n] for r in table["rows"] if r["arm"] == baseline}
            diffs = [r["hypervolume"][n] - base[r["seed"]] for r in table["rows"] if r["arm"] == arm and r["seed"] in base]
            if diffs:
                print(f"@{n}: {arm} − {baseline} per seed {[round(d, 4) for d in diffs]}, "
                      f"better in {sum(d > 0 for d in diffs)}/{len(diffs)} seeds")


def stored_runs(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The runs a part's runs.json holds, by (arm, seed); none when it does not exist yet."""
    if not path.is_file():
        return {}
    stored = json.loads(path.read_text("utf-8"))
    return {(key.rsplit("_", 1)[0], int(key.rsplit("_", 1)[1])): run for key, run in stored.items()}


def conflictnq_study(source: Path, folder: Path) -> dict[str, Any]:
    result = import_conflictnq(source)
    write_dataset(folder / "data", result.corpus, result.golden, result.conflicts, force=True)
    study = yaml.safe_load((ROOT / "studies" / "demo.yaml").read_text("utf-8"))
    return {**study, "name": "conflictnq", "dataset": str(folder / "data"), "pick": {"rule": "knee"}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"some of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--trials", type=int, default=40, help="evaluated trials per study (default 40)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS), help="arms to run (default: all)")
    parser.add_argument("--at", type=int, nargs="+", default=[20, 40], help="trial counts to report hypervolume at")
    parser.add_argument("--floor", type=float, default=0.1, help="the fixed Δ noise floor of every study (no calibration)")
    parser.add_argument("--data", type=Path, default=default_path(), help="ConflictNQ val (conflict_nq_val.jsonl)")
    parser.add_argument("--work", type=Path, help="keep datasets and studies here (default: a temporary folder)")
    parser.add_argument("--from-runs", type=Path, metavar="RUNS_JSON",
                        help="print the table of the runs a part wrote so far (its runs.json) instead of running")
    args = parser.parse_args()
    if args.from_runs is not None:
        show(args.from_runs.parent.name, summarize(stored_runs(args.from_runs), args.at), args.at)
        return 0
    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r} (known: {', '.join(PARTS)})")
    work = args.work or Path(tempfile.mkdtemp(prefix="conditional-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    for part in args.parts or PARTS:
        folder = work / part
        folder.mkdir(exist_ok=True)
        if part == "conflictnq":
            if not args.data.is_file():
                print(f"{part}: skipped, {args.data} not found", file=sys.stderr)
                continue
            study = conflictnq_study(args.data, folder)
        else:
            study = yaml.safe_load((ROOT / "studies" / "demo.yaml").read_text("utf-8"))
        runs = stored_runs(folder / "runs.json")
        for seed in args.seeds:
            for arm, path in study_files(folder, study, seed, args.floor, args.arms).items():
                out = folder / f"out_{arm}_{seed}"
                summary, wall, cpu = run_study(path, out, args.trials)
                runs[(arm, seed)] = {**trials_of(out, summary["study"]), "wall_s": wall, "cpu_s": cpu}
                (folder / "runs.json").write_text(json.dumps({f"{a}_{s}": r for (a, s), r in runs.items()}), "utf-8")
        table = summarize(runs, args.at)
        show(part, table, args.at)
        (folder / "figures.json").write_text(json.dumps(table, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
