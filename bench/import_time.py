"""Import time of tuner's entry points (issue 31 §2: the embedding package must keep heavy imports lazy).

For each source tree given (``--root``, default: this checkout) and each module, ``python -X importtime -c "import
MODULE"`` runs ``--runs`` times in a fresh interpreter with that tree first on ``sys.path``; printed: the module's
cumulative import time (min and median over the runs, µs, as ``-X importtime`` reports it) and how many modules the
import loaded (tuner's own, and all). Compare two trees on the same machine in one run, so load affects both alike.

    python bench/import_time.py --root /tmp/base --root . --runs 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

MODULES = ("tuner", "tuner.embedding", "tuner.llm", "tuner.chunking", "tuner.retrieval", "tuner.cli")


def cumulative_us(root: Path, module: str) -> int:
    """The cumulative import time of ``module`` (µs) in one fresh interpreter importing it from ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], env=env, cwd=root,
                          capture_output=True, text=True, check=True)
    for line in reversed(done.stderr.splitlines()):
        parts = [part.strip() for part in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1])
    raise RuntimeError(f"{module} not in the -X importtime output")


def loaded(root: Path, module: str) -> tuple[int, int]:
    """(tuner modules, all modules) in ``sys.modules`` after importing ``module`` from ``root``."""
    code = f"import sys, {module}; print(sum(m.startswith('tuner') for m in sys.modules), len(sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, check=True).stdout
    own, total = out.split()
    return int(own), int(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", action="append", type=Path, help="a source tree holding tuner/ (repeatable)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    roots = [root.resolve() for root in (args.root or [Path(__file__).resolve().parents[1]])]
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs per cell; µs cumulative (min / median)")
    print("| module | " + " | ".join(str(root) for root in roots) + " |")
    print("|---|" + "---|" * len(roots))
    for module in MODULES:
        cells = []
        for root in roots:
            times = [cumulative_us(root, module) for _ in range(args.runs)]
            own, total = loaded(root, module)
            cells.append(f"{min(times):,} / {statistics.median(times):,.0f} ({own} tuner, {total} modules)")
        print(f"| `import {module}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
