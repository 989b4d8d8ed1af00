"""Issue 29: how much of ``tuner run`` goes into the front's paired comparisons at the end of a run.

Runs ``python -m tuner run STUDY`` under cProfile in a fresh output folder, from the tree ``--root`` (this checkout by
default; pass an older checkout to measure before a change), and prints wall time, the run's CPU time, and the
cumulative time and calls of the functions that compare trials at the end of a run, with the front and the pick (which a
faster end must leave as they were). cProfile's times are wall-clock; then, on the finished study in a fresh process,
the CPU time of each of ``FRONT_CALLS`` ``study_front`` calls.

    PYTHONPATH=. python -m bench.front_once --study studies/demo.yaml
    PYTHONPATH=. python -m bench.front_once --root /tmp/old-checkout --study studies/demo.yaml
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WATCHED = ("study_front", "study_margins", "pick_notes", "neighbours", "compare", "paired_comparison",
           "confirm_front", "finish", "run_summary", "write_report")


FRONT_CALLS = 4
"""``study_front`` calls timed on the finished study: as many as the end of ``tuner run --json`` makes."""

TIME_FRONT = """
import json, sys, time
import optuna
from tuner.front import study_front
study = optuna.load_study(study_name=sys.argv[1], storage=sys.argv[2])
seconds = []
for _ in range(int(sys.argv[3])):
    started = time.process_time()
    study_front(study)
    seconds.append(round(time.process_time() - started, 3))
print(json.dumps(seconds))
"""


def profile_run(root: Path, study: str, out: Path) -> dict[str, object]:
    """One profiled run of ``study`` from the tree ``root``, written under ``out``."""
    profile = out / "run.prof"
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "tuner", "run", study, "--out", str(out / "study"), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    summary = json.loads(done.stdout)
    stats = pstats.Stats(str(profile))
    watched: dict[str, dict[str, float]] = {}
    for (filename, _, name), (_, calls, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if name in WATCHED and "/tuner/" in filename:
            entry = watched.setdefault(name, {"calls": 0, "cumulative_s": 0.0})
            entry["calls"] += calls
            entry["cumulative_s"] = max(entry["cumulative_s"], round(cumulative, 2))
    storage = f"sqlite:///{out / 'study' / 'study.db'}"
    timed = subprocess.run([sys.executable, "-c", TIME_FRONT, summary["study"], storage, str(FRONT_CALLS)], cwd=root,
                           env=env, capture_output=True, text=True, check=True)
    return {
        "root": str(root),
        "wall_s": round(wall, 1),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
        "watched": dict(sorted(watched.items())),
        "study_front_cpu_s": json.loads(timed.stdout),  # in one process, on the finished study, one after the other
        # what the run decided, to check that a faster end changed nothing
        "front": [(row["trial"], row["tie_group"], row["epsilon_dominated_by"]) for row in summary["front"]],
        "pick": summary["pick"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the tuner checkout to run (default: this one)")
    parser.add_argument("--study", default="studies/demo.yaml", help="study file, relative to --root")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="front-once-") as folder:
        print(json.dumps(profile_run(args.root.resolve(), args.study, Path(folder)), indent=2))


if __name__ == "__main__":
    main()
