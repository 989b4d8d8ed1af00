"""Study benchmarks (issue: tuning studies §3, §8). Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/study.py [--work DIR] [part ...]

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

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any

import optuna
import yaml

from tuner.objectives import DELTA, RECALL
from tuner.pareto import Point, hypervolume_history, pareto_front
from tuner.front import StudyRecord, TrialRecord, directions_of, points_of, study_front, study_summary
from tuner.study import PruningConfig, TrialProfile, load_study_file, plan_looks, run_study, should_prune, trial_profile

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
    return [f"demo study, cold cache, end to end: {seconds:.0f} s wall ({summary.n_complete} complete, "
            f"{summary.n_pruned} pruned, calls {summary.to_json()['calls']})"]


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


RULES: dict[str, dict[str, Any]] = {
    "unpruned": {"enabled": False},
    "issue-16": {"enabled": True, "batch_size": 20, "alpha": 0.05, "spending": "bonferroni", "looks": "every_batch"},
    "issue-17": {"enabled": True, "batch_size": 20, "alpha": 0.05},
}
"""The pruning rules compared: none; the rule before issue 17 (a look after every batch of 20 cases, Bonferroni
over those looks); the study file default since issue 17 (looks at fixed fractions of the case list, α spent by
the default spending function)."""


def run_rules(
    folder: Path, name: str, rules: Sequence[str], study_file: Callable[..., Path], **overrides: Any
) -> dict[str, tuple[optuna.Study, float]]:
    """Run one study file once per pruning rule (named in ``RULES``): each study and its wall time in seconds.
    ``study_file(folder, name, **overrides)`` writes the study file; a study already complete in ``folder`` (same
    name) is loaded, not run again."""
    runs = {}
    for rule in rules:
        path = study_file(folder, f"pruning-{name}-{rule}", pruning=RULES[rule], **overrides)
        start = time.perf_counter()
        runs[rule] = (run_study(load_study_file(path)).study, time.perf_counter() - start)
    return runs


def compare_runs(label: str, runs: dict[str, tuple[optuna.Study, float]]) -> list[str]:
    """Per pruned rule against the unpruned run: calls saved, trials pruned and the cases each used, whether
    both runs evaluated the same configurations, and the unpruned-front trials lost."""
    plain, plain_s = runs["unpruned"]
    total = {rule: _llm_calls(study) for rule, (study, _) in runs.items()}
    lines = [f"{label}: without pruning {total['unpruned']} generator+judge calls ({plain_s:.0f} s)"]
    for rule, (pruned, seconds) in runs.items():
        if rule == "unpruned":
            continue
        front_size, uncovered = _front_kept(plain, pruned)
        same = sum(a.params == b.params for a, b in zip(plain.trials, pruned.trials))
        used = sorted(record.pruning.cases_used for record in _pruned_records(pruned) if record.pruning is not None)
        lines += [
            f"  {rule}: {total[rule]} calls ({seconds:.0f} s), {len(used)} trials pruned, calls saved "
            f"{1 - total[rule] / total['unpruned']:.1%}; same configuration in both runs: {same}/{len(plain.trials)} trials",
            f"  {rule}: cases used per pruned trial (of {_case_count(plain)}): {used}",
            f"  {rule}: unpruned front {front_size} trials; not kept and not tied-or-beaten by a kept trial: "
            f"{uncovered or 'none'}",
        ]
    return lines


def _llm_calls(study: optuna.Study) -> int:
    return study_summary(study).calls.llm


def _pruned_records(study: optuna.Study) -> list[TrialRecord]:
    """The records of the trials pruned by the test (repeated configurations are pruned too, without evidence)."""
    return [TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.PRUNED,))]


def _case_count(study: optuna.Study) -> int:
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    return len(TrialRecord.from_trial(complete[0]).f0 or ())


def oracle_savings(study: optuna.Study, gap: float, cases: int) -> float:
    """The share of calls an oracle would save on an unpruned study: it knows every trial's final Δ and stops,
    after ``cases`` cases, each trial that a front trial of its time beats on recall and on Δ by more than
    ``gap``. A stopped trial is charged ``cases``/N of its calls (calls are not uniform over cases, so this is
    an estimate)."""
    calls = _trial_calls(study)
    n = _case_count(study)
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
    return 1 - spent / sum(calls.values())


def replay(study: optuna.Study, config: PruningConfig) -> tuple[float, list[int]]:
    """The pruning rule ``config`` replayed on an unpruned study, trial after trial in the study's own case order,
    against the front of the trials it kept: (share of calls saved, cases used per pruned trial). A pruned trial is
    charged its share of the cases evaluated (an estimate, as for the oracle); with deterministic backends the
    decisions are those a pruned run of the same configurations makes."""
    calls = _trial_calls(study)
    n = _case_count(study)
    directions = directions_of(study)
    looks = plan_looks(config, n)
    trials = {t.number: t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))}
    margin = StudyRecord.from_study(study).pruning_margin
    spent = 0.0
    used: list[int] = []
    kept: list[Point] = []
    for point in points_of(study):
        profile = trial_profile(trials[point.number])
        front = [trial_profile(trials[f.number]) for f in pareto_front(kept, directions)] if kept else []
        rivals = [f for f in front if f is not None]
        stop = next(
            (look.cases for look in looks if profile is not None and should_prune(
                _first(profile, look.cases), rivals, margin, look, False) is not None),
            None,
        )
        if stop is None:
            spent += calls[point.number]
            kept.append(point)
        else:
            spent += calls[point.number] * stop / n
            used.append(stop)
    return 1 - spent / sum(calls.values()), used


def _first(profile: TrialProfile, cases: int) -> TrialProfile:
    return TrialProfile(profile.number, profile.recall, profile.context_words, profile.f0[:cases], profile.f3[:cases])


def _trial_calls(study: optuna.Study) -> dict[int, int]:
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    return {t.number: record.calls.llm for t in complete if (record := TrialRecord.from_trial(t)).calls is not None}


def false_prunes(study: optuna.Study, config: PruningConfig, orders: int = 10) -> tuple[int, int, int]:
    """Replay the sequential test on the complete trials of an unpruned study over random case orders: for every
    pair (trial, rival) where the rival has the higher recall, is the trial pruned at some look of ``config``
    although its full Δ is not above the rival's (H0 true)? (false prunes, pairs where H0 holds, prunes in all)."""
    trials = [t for t in study.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.COMPLETE]
    profiles = [p for t in trials if (p := trial_profile(t)) is not None]
    n = _case_count(study)
    looks = plan_looks(config, n)
    rng = random.Random(0)
    h0_pairs = wrong = prunes = 0
    for _ in range(orders):
        order = rng.sample(range(n), n)
        shuffled = [
            TrialProfile(p.number, p.recall, p.context_words, [p.f0[i] for i in order], [p.f3[i] for i in order])
            for p in profiles
        ]
        for trial, full in zip(shuffled, trials):
            for rival, rival_full in zip(shuffled, trials):
                if rival.recall <= trial.recall:
                    continue
                h0 = full.values[1] <= rival_full.values[1]
                h0_pairs += h0
                if any(should_prune(_first(trial, look.cases), [rival], {}, look, False) is not None for look in looks):
                    prunes += 1
                    wrong += h0
    return wrong, h0_pairs, prunes


def rule_report(study: optuna.Study, label: str, configs: dict[str, PruningConfig], orders: int = 10) -> list[str]:
    """The oracle bound and, per rule, its replay and false-prune rate, on an unpruned study."""
    n = _case_count(study)
    first = min(look.cases for config in configs.values() for look in plan_looks(config, n))
    lines = [
        f"{label}: oracle (stops every trial a front trial of its time beats on recall and Δ): "
        f"after {first} of {n} cases {oracle_savings(study, 0.0, first):.1%} of the calls saved; "
        f"after 0 cases {oracle_savings(study, 0.0, 0):.1%}"
    ]
    for rule, config in configs.items():
        saved, used = replay(study, config)
        wrong, h0_pairs, prunes = false_prunes(study, config, orders)
        lines.append(
            f"  {rule} replayed: {saved:.1%} saved, {len(used)} pruned after {used} cases; false prunes over {orders} "
            f"random case orders: {wrong} of {h0_pairs} pairs where H0 holds ({wrong / max(h0_pairs, 1):.2%}, "
            f"alpha {config.alpha}), {prunes} prunes in all"
        )
    return lines


def random_configs(seed: int, count: int, space: Path = ROOT / "search_spaces" / "default.yaml") -> list[dict[str, Any]]:
    """``count`` seeded random draws from the search space file ``space``."""
    spec = yaml.safe_load(space.read_text())
    rng = random.Random(seed)

    def draw(param: dict[str, Any]) -> Any:
        if param["type"] == "categorical":
            return rng.choice(param["choices"])
        if param["type"] == "int":
            return rng.randint(param["low"], param["high"])
        steps = int(round((param["high"] - param["low"]) / param["step"]))
        return round(param["low"] + rng.randint(0, steps) * param["step"], 10)

    return [{name: draw(param) for name, param in spec.items()} for _ in range(count)]


REPLAYED: dict[str, PruningConfig] = {
    "issue-16 (every 20 cases, bonferroni)": PruningConfig(**RULES["issue-16"]),
    "default looks, obf": PruningConfig(spending="obf"),
    "default looks, pocock": PruningConfig(spending="pocock"),
    "default looks, bonferroni": PruningConfig(spending="bonferroni"),
}
"""The rules replayed on every unpruned study: the one before issue 17 and the three spending functions at the
default looks (10, 20, 35, 50 and 70% of the cases)."""


def pruning(
    folder: Path, rules: tuple[str, ...] = tuple(RULES), only: tuple[str, ...] = (), n_configs: int = 40
) -> list[str]:
    """Each without pruning, with the rule before issue 17 and with the default rule: the demo study itself with
    three sampler seeds (TPE: the runs may sample different trials once a trial is pruned) and three fixed lists
    of random configurations (the same trials in every run). On each unpruned study: the oracle bound (what any
    early stop could save) and the rules replayed, with their false-prune rate over random case orders. ``only``
    names the studies to run (``demo-seed0`` … ``fixed-seed13``; default all)."""
    lines: list[str] = []
    studies: list[tuple[str, str, dict[str, Any]]] = [(f"demo-seed{seed}", f"demo study (TPE seed {seed}, 40 trials)", {"sampler": {"name": "tpe", "seed": seed}})
               for seed in (0, 1, 2)]
    studies += [
        (f"fixed-seed{seed}", f"{n_configs} fixed configurations (draw seed {seed})",
         {"enqueue": random_configs(seed, n_configs), "budget": {"trials": n_configs}, "sampler": {"name": "random", "seed": 0}})
        for seed in (7, 11, 13)
    ]
    for name, label, overrides in studies:
        if only and name not in only:
            continue
        runs = run_rules(folder, name, rules, write_study, **overrides)
        lines += compare_runs(label, runs) if "unpruned" in runs and len(runs) > 1 else []
        lines += rule_report(runs["unpruned"][0], label, REPLAYED) if "unpruned" in runs else []
    return lines


PARTS = {"walltime": walltime, "samplers": samplers, "pruning": pruning}

if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"{', '.join(PARTS)} (default: all)")
    parser.add_argument("--work", type=Path, help="keep the studies in this folder; a complete study there is loaded, not run again")
    parser.add_argument("--rules", nargs="+", choices=list(RULES), default=list(RULES), help="pruning: the rules to run")
    parser.add_argument("--studies", nargs="+", default=[], help="pruning: the studies to run (demo-seed0..2, fixed-seed7/11/13)")
    args = parser.parse_args()
    if unknown := [part for part in args.parts if part not in PARTS]:
        parser.error(f"unknown part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.work or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("TUNER_CACHE", str(folder / "fresh-cache"))
        for part in args.parts or list(PARTS):
            print(f"## {part}", flush=True)
            for line in pruning(folder, tuple(args.rules), tuple(args.studies)) if part == "pruning" else PARTS[part](folder):
                print(line, flush=True)
