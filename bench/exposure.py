"""Issue 37 §1: conflict exposure against v3 Δfaithful as a study's second objective.

For each part it runs two studies on the same data, sampler seed and confirmation split (``confirm: {share: 0.3,
seed: 0}``, ``--trials`` TPE trials, the offline extractive generator and lexical judge, ``pick: knee``): one with the
default objectives (recall@k, v3 Δfaithful) and one with ``objectives: [recall_at_k, conflict_exposure]``. From the
stored studies it prints:

- per study: the front's size and its distinct groups (members the paired comparison tells apart, each tie group
  counted once), and for the knee and the best-recall member the second objective on the tuning and held-out cases
  and its optimism (held out − tuning for a minimized objective: positive means the tuning figure looked better);
- on the Δ study's complete trials (one per configuration): how much of the between-configuration spread of Δ the
  exposure explains: Spearman ρ and the R² of a least-squares line Δ ~ exposure, each with a 95% percentile
  bootstrap interval over trials; the median susceptibility; the largest |unexposed loss| (0 where every unexposed
  case kept its v0 context), and which trials have one.

Parts: ``demo``, ``demo-zh`` (the built-in sets, studies/demo.yaml and studies/demo_zh.yaml), ``conflictnq`` and
``cmrc`` (as bench/confirm.py builds them from ../shared/datasets; a part whose file is absent is skipped). The noise
floor is given as 0 for every objective (``noise_floor: {...: 0}``): the offline backends are deterministic, so a
calibration would measure a run-to-run floor of 0 and cost three evaluations per study.

Run: cd bench; HF_HUB_OFFLINE=1 PYTHONPATH=..:. python exposure.py [--trials 40] [--work DIR] [PART ...]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import yaml

from tuner.metrics import delta_parts
from tuner.objectives import DELTA, EXPOSURE, RECALL
from tuner.pareto import knee, tie_groups
from tuner.front import StudyRecord, TrialRecord, study_front

from confirm import CONFIRM, dataset_folder
from paired import distinct_groups, run

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("demo", "demo-zh", "conflictnq", "cmrc")
SECOND = {"delta": DELTA, "exposure": EXPOSURE}


def study_file(part: str, dataset: str, kind: str, work: Path) -> Path:
    chinese = part in ("demo-zh", "cmrc")
    study = yaml.safe_load((ROOT / "studies" / ("demo_zh.yaml" if chinese else "demo.yaml")).read_text("utf-8"))
    study.update(
        name=f"{part}-{kind}", dataset=dataset, search_space=str(ROOT / "search_spaces" / ("zh.yaml" if chinese else "default.yaml")),
        objectives=[RECALL, SECOND[kind]], noise_floor={RECALL: 0.0, SECOND[kind]: 0.0},
        sampler={"name": "tpe", "seed": 0}, pick={"rule": "knee"}, confirm=CONFIRM,
    )
    path = work / f"{part}-{kind}.yaml"
    path.write_text(yaml.safe_dump(study, sort_keys=False, allow_unicode=True), "utf-8")
    return path


def second_objective_rows(study: optuna.Study) -> dict[str, Any]:
    """Front size, distinct groups, the second objective of the knee and the best-recall member (tuning vs held out),
    and over the front members the held-out optimism of both Δ and exposure (held out − tuning: both are minimized,
    so positive means the tuning figure looked better), whichever one the study optimized."""
    directions, margins, entries = study_front(study)
    second = list(directions)[1]
    held = StudyRecord.from_study(study).confirm
    groups = distinct_groups(entries, tie_groups(entries, directions, margins))

    def tuning(number: int) -> dict[str, float | None]:
        record = TrialRecord.from_trial(study.trials[number])
        share, parts = record.exposure(), record.delta_parts()
        return {EXPOSURE: None if share is None else share.value, DELTA: None if parts is None else parts.delta}

    def held_out(number: int) -> dict[str, Any]:
        confirmation = held.get(number)
        return {} if confirmation is None else dict(confirmation.values)

    def row(number: int) -> str:
        value, confirmed = tuning(number)[second], held_out(number).get(second)
        if value is None or confirmed is None:
            return f"#{number}: {value} / —"
        return f"#{number}: {value:.3f} / {confirmed:.3f} (optimism {confirmed - value:+.3f})"

    optimism: dict[str, list[float]] = {DELTA: [], EXPOSURE: []}
    for entry in entries:
        figures, confirmed = tuning(entry.number), held_out(entry.number)
        for name, values in optimism.items():
            if figures[name] is not None and confirmed.get(name) is not None:
                values.append(confirmed[name] - figures[name])
    best = max(entries, key=lambda e: (e.values[RECALL], -e.number)).number
    return {
        "front": len(entries), "distinct groups": groups,
        "knee (tuning / held out)": row(knee(entries, directions, margins).number),
        "best recall (tuning / held out)": row(best),
        **{f"front {name} optimism (mean, held out worse)": None if not values else
           f"{float(np.mean(values)):+.4f}, {sum(v > 0 for v in values)}/{len(values)}" for name, values in optimism.items()},
        "front held-out delta (mean)": None if not entries or not all(held_out(e.number).get(DELTA) is not None for e in entries)
        else round(float(np.mean([held_out(e.number)[DELTA] for e in entries])), 4),
    }


def _ranks(values: np.ndarray) -> np.ndarray:
    order = values.argsort(kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(len(values))
    for value in np.unique(values):  # ties share their mean rank
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of the ranks (ties get their mean rank); NaN when either is constant."""
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def r_squared(x: np.ndarray, y: np.ndarray) -> float:
    """R² of the least-squares line y ~ a + b·x: 1 − SS_res / SS_tot (NaN when y or x is constant)."""
    if x.std() == 0 or y.std() == 0:
        return math.nan
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (intercept + slope * x)
    return float(1 - (residual**2).sum() / ((y - y.mean()) ** 2).sum())


def bootstrap(statistic: Any, x: np.ndarray, y: np.ndarray, resamples: int = 2000, seed: int = 0) -> list[float] | None:
    """The 95% percentile interval of ``statistic`` over trials drawn with replacement (resamples where it is
    undefined left out)."""
    rng = np.random.default_rng(seed)
    values = [statistic(x[idx], y[idx]) for idx in rng.integers(0, len(x), size=(resamples, len(x)))]
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 100:
        return None
    return [round(float(np.quantile(finite, 0.025)), 3), round(float(np.quantile(finite, 0.975)), 3)]


def explained(study: optuna.Study) -> dict[str, Any]:
    """How much of Δ's spread across the Δ study's complete trials their exposure explains."""
    delta, exposure, susceptibility, unexposed, moved = [], [], [], [], []
    for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        record = TrialRecord.from_trial(trial)
        if record.unscorable or record.skipped or record.exposed_cases is None or record.f0 is None or record.f3 is None:
            continue
        paired = [(a, b, bool(e)) for a, b, e in zip(record.f0, record.f3, record.exposed_cases) if a is not None and b is not None]
        parts = delta_parts([p[0] for p in paired], [p[1] for p in paired], [p[2] for p in paired])
        delta.append(trial.values[1])
        exposure.append(sum(record.exposed_cases) / len(record.exposed_cases))
        if parts.susceptibility is not None:
            susceptibility.append(parts.susceptibility)
        if parts.unexposed_loss is not None:
            unexposed.append(abs(parts.unexposed_loss))
            if parts.unexposed_loss != 0:
                settings = record.settings or {}
                moved.append(f"#{trial.number} {settings.get('retriever')} top_k {settings.get('top_k')} "
                             f"rerank {settings.get('rerank_strength')}: {parts.unexposed_loss:+.4f}")
    x, y = np.array(exposure), np.array(delta)
    return {
        "trials": len(x),
        "exposure range": [round(float(x.min()), 3), round(float(x.max()), 3)] if len(x) else None,
        "delta range": [round(float(y.min()), 3), round(float(y.max()), 3)] if len(y) else None,
        "spearman rho": round(spearman(x, y), 3), "rho 95%": bootstrap(spearman, x, y),
        "R2 delta ~ exposure": round(r_squared(x, y), 3), "R2 95%": bootstrap(r_squared, x, y),
        "median susceptibility": None if not susceptibility else round(float(np.median(susceptibility)), 3),
        "max |unexposed loss|": None if not unexposed else round(max(unexposed), 4),
        "trials with an unexposed loss": moved,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"some of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--trials", type=int, default=40, help="trials per study (default 40)")
    parser.add_argument("--cases", type=int, default=300, help="CMRC questions sampled (default 300, as bench/confirm.py)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tuner-exposure"), help="datasets and studies go here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    for part in args.parts or PARTS:
        if part in ("demo", "demo-zh"):
            dataset = part
        else:
            folder = dataset_folder(part, args.work, args.cases)
            if folder is None:
                continue
            dataset = str(folder)
        studies = {kind: run(study_file(part, dataset, kind, args.work), args.work / f"{part}-{kind}", args.trials)
                   for kind in SECOND}
        results[part] = {
            "by delta": second_objective_rows(studies["delta"]),
            "by exposure": second_objective_rows(studies["exposure"]),
            "exposure explains delta": explained(studies["delta"]),
        }
        print(json.dumps({part: results[part]}, indent=2, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
