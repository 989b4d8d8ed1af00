"""Study benchmarks (issue: tuning studies §3, §8). Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/study.py [part ...]

- ``walltime``: the demo study end to end (`tuner run studies/demo.yaml`, 40 trials) in a fresh cache, in a
  subprocess, including model load and the noise-floor calibration.
- ``samplers``: hypervolume after N trials for TPE vs random vs the full grid on a reduced grid space
  (equal budgets: TPE and random get 25% of the grid's trials).
- ``pruning``: the demo study and a fixed list of configurations, each with and without noise-floor pruning:
  generator + judge calls, and whether every front trial of the unpruned run is kept or tied (within the
  noise floor) with a kept trial of the pruned run.

All parts share one cache (``$TUNER_CACHE`` or a temporary folder) after the walltime part, so the
sampler and pruning parts measure trials, not embedding.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import optuna
import yaml

from tuner.objectives import DELTA, RECALL
from tuner.pareto import Point, hypervolume_history, pareto_front
from tuner.study import (
    TrialProfile,
    TrialRecord,
    directions_of,
    load_study_file,
    points_of,
    run_study,
    should_prune,
    study_front,
    study_summary,
    trial_profile,
)

ROOT = Path(__file__).resolve().parent.parent
GRID_SPACE = {
    "top_k": {"type": "categorical", "choices": [1, 2, 3, 4, 6, 8, 10]},
    "relevance_threshold": {"type": "categorical", "choices": [0.0, 0.2, 0.4]},
    "rerank_strength": {"type": "categorical", "choices": [0.0, 0.5]},
    "retriever": {"type": "categorical", "choices": ["bm25", "dense", "hybrid"]},
}


def write_study(folder: Path, name: str, **overrides: Any) -> Path:
    base = yaml.safe_load((ROOT / "studies" / "demo.yaml").read_text())
    base.update({"name": name, "output": str(folder), "search_space": str(ROOT / "search_spaces" / "default.yaml"), **overrides})
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(base))
    return path


def walltime(folder: Path) -> list[str]:
    env = {**os.environ, "TUNER_CACHE": str(folder / "fresh-cache"), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tuner", "run", str(ROOT / "studies" / "demo.yaml"), "--out", str(folder / "demo")],
        env=env, capture_output=True, text=True,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    summary = study_summary(optuna.load_study(study_name="demo", storage=f"sqlite:///{folder / 'demo' / 'study.db'}"))
    return [f"demo study, cold cache, end to end: {seconds:.0f} s wall ({summary['n_complete']} complete, "
            f"{summary['n_pruned']} pruned, calls {summary['calls']})"]


def samplers(folder: Path) -> list[str]:
    grid_size = 1
    for spec in GRID_SPACE.values():
        grid_size *= len(spec["choices"])
    budget = grid_size // 4
    space = folder / "grid_space.yaml"
    space.write_text(yaml.safe_dump(GRID_SPACE))
    lines = []
    studies: dict[str, optuna.Study] = {}
    for name, trials in (("grid", grid_size), ("tpe", budget), ("random", budget)):
        path = write_study(
            folder, f"sampler-{name}", search_space=str(space), sampler={"name": name, "seed": 0},
            budget={"trials": trials}, pruning={"enabled": False}, enqueue=[],
        )
        start = time.perf_counter()
        studies[name] = run_study(load_study_file(path)).study
        lines.append(f"{name}: {trials} trials in {time.perf_counter() - start:.0f} s")
    directions = directions_of(studies["grid"])
    every = [p for study in studies.values() for p in points_of(study)]
    # reference: the worst value of each objective seen by any sampler (the nadir), so the volume measures
    # the part of the space the samplers actually compete for
    reference = {
        name: (min if d == "maximize" else max)(p.values[name] for p in every) for name, d in directions.items()
    }
    histories = {
        name: hypervolume_history(sorted(points_of(study), key=lambda p: p.number), directions, reference)
        for name, study in studies.items()
    }
    grid_final = histories["grid"][-1]
    lines.append(f"reference point (nadir of all trials): {reference}; grid's final hypervolume {grid_final:.4f}")
    for name in ("tpe", "random"):
        history = histories[name]
        reached = next((i + 1 for i, hv in enumerate(history) if hv >= 0.95 * grid_final), None)
        lines.append(
            f"{name}: {history[-1] / grid_final:.1%} of the grid's final hypervolume after {len(history)} trials "
            f"({len(history) / grid_size:.0%} of the grid's {grid_size}); 95% reached after "
            f"{reached if reached is not None else 'never'} trials"
        )
    return lines


def _front_kept(plain: optuna.Study, pruned: optuna.Study) -> tuple[int, list[int]]:
    """(size of the unpruned front, its trials neither kept in the pruned study nor tied with or beaten by
    a kept trial within the noise floor)."""
    _, floor, plain_front = study_front(plain)
    directions = directions_of(pruned)
    kept = points_of(pruned)
    kept_params = {tuple(sorted(p.params.items())) for p in kept}
    uncovered = [
        entry.number
        for entry in plain_front
        if tuple(sorted(entry.params.items())) not in kept_params
        and not any(
            all(abs(entry.values[name] - p.values[name]) <= floor.get(name, 0.0) or
                (p.values[name] >= entry.values[name] if d == "maximize" else p.values[name] <= entry.values[name])
                for name, d in directions.items())
            for p in kept
        )
    ]
    return len(plain_front), uncovered


def _with_and_without(folder: Path, name: str, label: str, **overrides: Any) -> tuple[list[str], optuna.Study]:
    """Run one study file with pruning off and on: the comparison lines, and the unpruned study."""
    runs = {}
    for mode, enabled in (("unpruned", False), ("pruned", True)):
        path = write_study(
            folder, f"pruning-{name}-{mode}",
            pruning={"enabled": enabled, "batch_size": 20, "alpha": 0.05, "spending": "bonferroni"}, **overrides,
        )
        start = time.perf_counter()
        runs[mode] = (run_study(load_study_file(path)).study, time.perf_counter() - start)
    (plain, plain_s), (pruned, pruned_s) = runs["unpruned"], runs["pruned"]
    calls = {mode: study_summary(study)["calls"] for mode, (study, _) in runs.items()}
    total = {mode: c["generator"] + c["judge"] for mode, c in calls.items()}
    front_size, uncovered = _front_kept(plain, pruned)
    same = sum(a.params == b.params for a, b in zip(plain.trials, pruned.trials))
    return [
        f"{label}: without pruning {total['unpruned']} generator+judge calls ({plain_s:.0f} s); with pruning "
        f"{total['pruned']} calls ({pruned_s:.0f} s), {study_summary(pruned)['n_pruned']} trials pruned; "
        f"calls saved: {1 - total['pruned'] / total['unpruned']:.1%}; same configuration in both runs: "
        f"{same}/{len(plain.trials)} trials",
        f"{label}: unpruned front {front_size} trials; not kept and not tied-or-beaten by a kept trial: {uncovered or 'none'}",
    ], plain


def _oracle_savings(study: optuna.Study, gap: float, cases: int) -> str:
    """What an oracle would save on an unpruned study: it knows every trial's final Δfaithful and stops, after
    ``cases`` cases, each trial that a front trial of its time beats on recall and on Δ by more than ``gap``.
    A stopped trial is charged ``cases``/N of its calls (calls are not uniform over cases, so this is an
    estimate)."""
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    records = {t.number: TrialRecord.from_trial(t) for t in complete}
    calls = {number: record.calls.llm for number, record in records.items() if record.calls is not None}
    n = len(records[complete[0].number].f0 or ())
    directions = directions_of(study)
    spent = 0.0
    kept: list[Point] = []
    for point in points_of(study):
        recall, delta = point.values[RECALL], point.values[DELTA]
        front = pareto_front(kept, directions) if kept else []
        if any(f.values[RECALL] > recall and delta - f.values[DELTA] > gap for f in front):
            spent += calls[point.number] * cases / n
        else:
            spent += calls[point.number]
            kept.append(point)
    full = sum(calls.values())
    return f"oracle stopping every trial beaten by > {gap} in Δ after {cases} cases: {1 - spent / full:.1%} saved"


def _false_prunes(study: optuna.Study, orders: int = 10, batch: int = 20, alpha: float = 0.05) -> str:
    """Replay the sequential test on the complete trials of an unpruned study over random case orders: for
    every pair (trial, rival) where the rival has the higher recall, how often is the trial pruned although
    its full Δfaithful is not above the rival's (H0 true)?"""
    trials = [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.COMPLETE]
    profiles = [trial_profile(t) for t in trials]
    n = len(TrialRecord.from_trial(trials[0]).f0 or ())
    looks = list(range(batch, n, batch))
    rng = random.Random(0)
    h0_pairs = wrong = prunes = 0
    for _ in range(orders):
        order = rng.sample(range(n), n)
        shuffled = [
            TrialProfile(p.number, p.recall, p.context_words, [p.f0[i] for i in order], [p.f3[i] for i in order])
            for p in profiles if p is not None
        ]
        for trial, full in zip(shuffled, trials):
            for rival, rival_full in zip(shuffled, trials):
                if rival.recall <= trial.recall:
                    continue
                h0 = full.values[1] <= rival_full.values[1]
                h0_pairs += h0
                for look, m in enumerate(looks, start=1):
                    partial = TrialProfile(trial.number, trial.recall, trial.context_words, trial.f0[:m], trial.f3[:m])
                    if should_prune(partial, [rival], {}, look, len(looks), alpha, "bonferroni", False) is not None:
                        prunes += 1
                        wrong += h0
                        break
    return (f"false prunes over {orders} random case orders: {wrong} of {h0_pairs} (trial, rival) pairs where "
            f"H0 holds ({wrong / max(h0_pairs, 1):.2%}, alpha {alpha}); {prunes} prunes in all")


def _random_configs(seed: int, count: int) -> list[dict[str, Any]]:
    """``count`` seeded random draws from ``search_spaces/default.yaml``."""
    spec = yaml.safe_load((ROOT / "search_spaces" / "default.yaml").read_text())
    rng = random.Random(seed)

    def draw(param: dict[str, Any]) -> Any:
        if param["type"] == "categorical":
            return rng.choice(param["choices"])
        if param["type"] == "int":
            return rng.randint(param["low"], param["high"])
        steps = int(round((param["high"] - param["low"]) / param["step"]))
        return round(param["low"] + rng.randint(0, steps) * param["step"], 10)

    return [{name: draw(param) for name, param in spec.items()} for _ in range(count)]


def pruning(folder: Path, n_configs: int = 40) -> list[str]:
    """Each with and without pruning: the demo study itself with three sampler seeds (TPE: the two runs
    sample different trials once a trial is pruned) and three fixed lists of random configurations (the
    same trials in both runs); then the test's false-prune rate on the first list. For the demo study, what
    an oracle that knew every trial's final Δ would save bounds what any early-stopping rule can save."""
    lines: list[str] = []
    for seed in (0, 1, 2):
        compared, plain = _with_and_without(
            folder, f"demo-seed{seed}", f"demo study (TPE seed {seed}, 40 trials)", sampler={"name": "tpe", "seed": seed}
        )
        lines += compared
        lines += [f"  {_oracle_savings(plain, gap, cases)}" for gap, cases in ((0.0, 20), (0.02, 60), (0.05, 20))]
    plains = []
    for seed in (7, 11, 13):
        fixed, plain = _with_and_without(
            folder, f"fixed-seed{seed}", f"{n_configs} fixed configurations (draw seed {seed})",
            enqueue=_random_configs(seed, n_configs), budget={"trials": n_configs}, sampler={"name": "random", "seed": 0},
        )
        lines += fixed
        plains.append(plain)
    return [*lines, _false_prunes(plains[0])]


PARTS = {"walltime": walltime, "samplers": samplers, "pruning": pruning}

if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    chosen = sys.argv[1:] or list(PARTS)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ.setdefault("TUNER_CACHE", str(folder / "fresh-cache"))
        for part in chosen:
            print(f"## {part}", flush=True)
            for line in PARTS[part](folder):
                print(line, flush=True)
