"""The test suite's time on a shared machine (issue 54 §3): the README's test command, run idle or with ``--busy N``
cores taken by a busy loop beside it (``python3 -c "while True: pass"``, a stand-in for another job on the box), once
per ``--omp`` value of ``OMP_NUM_THREADS`` ("default": the variable left unset, so tests/conftest.py's choice holds)
and per ``--workers`` count of xdist workers ("default": pyproject's ``-n``), one after the other in one session so
every arm sees the same machine.

    python bench/suite_load.py --busy 1 --omp 2 default
    python bench/suite_load.py --busy 1 --workers 3 4
    python bench/suite_load.py --busy 1 --own-session --workers 3 4
    python bench/suite_load.py --cpus 1

``--cpus N`` runs the suite on the first N cores only (its affinity, which every process it starts inherits): the
suite on one core as on a box another job shares, without the busy loop and the scheduler's grouping of tasks.

A number is exported to the suite and its subprocesses, overriding tests/conftest.py's ``OMP_NUM_THREADS=1``; the
cores of the machine (2 here) is torch's own default, what the suite ran with before issue 54's change. Printed per
arm: the wall seconds, the CPU seconds of the suite and every process it waited for (``RUSAGE_CHILDREN``: user +
system), and pytest's summary line.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _environment(omp: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    env["HF_HUB_OFFLINE"] = "1"
    if omp != "default":
        env["OMP_NUM_THREADS"] = omp
    return env


def _children_cpu() -> float:
    """User + system seconds of the processes this one has waited for (the suite and its descendants)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_arm(omp: str, workers: str, busy: int, pytest_args: list[str], own_session: bool = False,
            cpus: int | None = None) -> tuple[float, float, str]:
    """(wall s, CPU s, pytest's last line) of one run of the suite with ``busy`` busy loops beside it; with
    ``own_session`` the loops run in a session of their own, as another user's job would (where the kernel groups
    tasks by session, ``sched_autogroup_enabled``, the suite's session then gets its fair share as a whole, not per
    process); with ``cpus`` the suite runs on the first ``cpus`` cores of this process's."""
    if workers != "default":
        pytest_args = ["-n", workers, *pytest_args]  # after pyproject's addopts, so this -n is the one that holds
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=own_session) for _ in range(busy)]
    try:
        before, started = _children_cpu(), time.monotonic()
        cores = sorted(os.sched_getaffinity(0))[:cpus]
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", *pytest_args], cwd=ROOT, env=_environment(omp),
                             stdout=subprocess.PIPE, text=True, preexec_fn=lambda: os.sched_setaffinity(0, cores)).stdout
        wall, cpu = time.monotonic() - started, _children_cpu() - before  # read before the loops are reaped
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return wall, cpu, next((line for line in reversed(out.splitlines()) if line.strip()), "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=0, help="cores taken by a busy loop beside the suite (default 0: idle)")
    parser.add_argument("--omp", nargs="+", default=["default"], help="OMP_NUM_THREADS per arm: default or a number")
    parser.add_argument("--own-session", action="store_true", help="the busy loops in a session of their own")
    parser.add_argument("--workers", nargs="+", default=["default"], help="xdist workers per arm: default or a number")
    parser.add_argument("--cpus", type=int, help="run the suite on this many of the machine's cores (default: all)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    print(f"# {len(os.sched_getaffinity(0))} cores, the suite on {args.cpus or 'all'}, "
          f"busy loops {args.busy}{' in their own session' if args.own_session else ''}, "
          f"load {os.getloadavg()[0]:.1f} at the start")
    print("| OMP_NUM_THREADS | workers | wall s | CPU s | pytest |")
    print("|---|---|---:|---:|---|")
    for omp in args.omp:
        for workers in args.workers:
            wall, cpu, last = run_arm(omp, workers, args.busy, args.pytest_args, args.own_session, args.cpus)
            print(f"| {omp} | {workers} | {wall:.1f} | {cpu:.0f} | {last} |", flush=True)


if __name__ == "__main__":
    main()
