"""Issue 31 §3: what the trial loop pays per trial to know the study's counts and calls.

Before, each loop iteration read every trial's record twice (``study_summary`` at the ask and in the progress line);
now ``SummaryTracker.update`` reads a finished trial once and afterwards only the unfinished ones. On an in-memory
study of N finished trials, each with the per-case records a real trial keeps (``--cases`` per-case scores), this
prints the CPU time of one full read and of one tracker update after one more trial ended.

    PYTHONPATH=. python -m bench.summary_loop --trials 100 1000
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict

import optuna
from optuna.distributions import IntDistribution

from tuner.front import TrialCalls, study_summary
from tuner.front._summary import SummaryTracker


def _add(study: optuna.Study, number: int, cases: int) -> None:
    attrs = {"calls": asdict(TrialCalls(generator=cases * 2, judge=cases * 4, tokens=1000)), "settings": {"top_k": 4},
             "recall_cases": [1.0] * cases, "f0": [1.0] * cases, "f3": [0.9] * cases, "n": cases, "n_total": cases}
    study.add_trial(optuna.trial.create_trial(values=[0.9, 0.1], params={"top_k": number % 9 + 1},
                                              distributions={"top_k": IntDistribution(1, 9)}, user_attrs=attrs))


def measure(n_trials: int, cases: int, repeats: int = 5) -> dict[str, float]:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["maximize", "minimize"])
    for number in range(n_trials):
        _add(study, number, cases)
    tracker = SummaryTracker()
    tracker.update(study)
    full, tracked = [], []
    for repeat in range(repeats):
        _add(study, n_trials + repeat, cases)
        started = time.process_time()
        tracker.update(study)
        tracked.append(time.process_time() - started)
        started = time.process_time()
        study_summary(study)
        full.append(time.process_time() - started)
    return {"trials": n_trials, "full_read_ms": round(1000 * min(full), 2), "tracker_update_ms": round(1000 * min(tracked), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--cases", type=int, default=200, help="per-case scores each trial records")
    args = parser.parse_args()
    for n in args.trials:
        print(json.dumps(measure(n, args.cases)))


if __name__ == "__main__":
    main()
