"""Start-up of a `tuner` process (issue 23 §6): the CPU time of `tuner --help`, of the fault tests' BM25 study
(tests/fault_tests: the tiny dataset, a bm25-only space and baseline, ``noise_floor: auto``, 2 trials, an offline
generator that answers at once) and of `tuner serve` on a BM25 export of the tiny dataset until ``/healthz`` answers
200 (then SIGTERM; issue 39: the suite's dify test starts one), per source tree, run alternately in one session so
the machine's load is shared.

    PYTHONPATH=. python bench/startup.py --repeats 3 --before /path/to/main/checkout

``--before`` is a checkout of the tree to compare with (e.g. ``git archive 4321fc1 | tar -x -C DIR``); this checkout is
``after``. CPU is the user + system time of the finished `tuner` process (``os.wait4``), which load inflates less than
wall time; both are printed, with the medians per tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _timed(tree: Path, argv: list[str], cwd: Path, cache: Path, ready: str | None = None) -> tuple[float, float]:
    """(wall s, CPU s) of ``tuner ARGV``; with ``ready`` (a URL), the wall time until it answers 200, and the process
    is then stopped with SIGTERM."""
    env = {**os.environ, "PYTHONPATH": f"{cwd}{os.pathsep}{tree}", "TUNER_CACHE": str(cache), "SLOW_ANSWER": "0",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TUNER_SERVE_TOKEN": "bench"}
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "tuner", *argv], cwd=cwd, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if ready is not None:
        wall = _until_ready(process, ready) - started
        process.terminate()
    _, status, usage = os.wait4(process.pid, 0)
    if ready is None:
        wall = time.monotonic() - started
    assert process.stderr is not None
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{tree}: tuner {' '.join(argv)} failed:\n{process.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def _until_ready(process: subprocess.Popen[bytes], url: str) -> float:
    """The monotonic time at which ``url`` first answers 200 (polled by one client every 50 ms)."""
    import httpx

    with httpx.Client(timeout=5) as client:
        while process.poll() is None:
            try:
                if client.get(url).status_code == 200:
                    return time.monotonic()
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise SystemExit(f"{url}: the server exited first")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the source tree to compare with")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.fault_tests.test_interrupts import write_fault_study
    from tests.net import free_port
    from tests.tiny_dataset import write_tiny_dataset
    from tuner.export import export_document, write_export
    from tuner.settings import RetrievalSettings

    trees = {"before": args.before.resolve(), "after": ROOT}
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as work:
        dataset = write_tiny_dataset(Path(work) / "tiny")
        config = write_export(Path(work) / "deploy.yaml", export_document(
            RetrievalSettings(top_k=3, chunk_size=32, retriever="bm25").model_dump(), {"study": "tiny", "trial": 0}))
        for repeat in range(args.repeats):
            for name, tree in trees.items():
                help_wall = _timed(tree, ["--help"], Path(work), Path(work) / "cache-help")
                results.setdefault(("--help", name), []).append(help_wall)
                folder = Path(work) / f"{name}-{repeat}"
                folder.mkdir()
                study = write_fault_study(folder, dataset, noise_floor="auto", budget={"trials": 2})
                run = _timed(tree, ["run", str(study), "--no-report"], folder, folder / "cache")
                results.setdefault(("run (bm25, calibrate, 2 trials)", name), []).append(run)
                port = free_port()
                serve = _timed(tree, ["serve", "--config", str(config), "--dataset", str(dataset), "--port", str(port)],
                               folder, folder / "cache-serve", ready=f"http://127.0.0.1:{port}/healthz")
                results.setdefault(("serve (bm25 export) until ready", name), []).append(serve)
    for (command, name), rows in results.items():
        walls, cpus = zip(*rows)
        print(f"{command:34} {name:6} wall {statistics.median(walls):6.2f} s  CPU {statistics.median(cpus):6.2f} s  "
              f"(CPU per run: {', '.join(f'{c:.2f}' for c in cpus)})")


if __name__ == "__main__":
    main()
