"""CPU a fresh process spends to load an embedding model and embed one text: the folder run with transformers alone
(``FolderModel``, tuner's loader for the usual folder shape) against the same folder loaded by sentence-transformers
(``SentenceTransformersModel``, what every folder used before). Arms alternate, each round a new interpreter, so
both see the same machine; printed per arm: the median and the spread of user + system seconds, and their ratio.

    python bench/embed_startup.py --rounds 5
    python bench/embed_startup.py --model multilingual-e5-small --rounds 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LOADS = {  # arm → the code that loads the folder at ``path`` with it
    "FolderModel": "FolderModel(folder_layout(path), 'cpu')",
    "SentenceTransformersModel": "SentenceTransformersModel(path, 'cpu')",
}
ARMS = tuple(LOADS)

_CODE = """
from tuner.embedding import resolve_model_path
from tuner.embedding._folder import FolderModel, SentenceTransformersModel, folder_layout
path = resolve_model_path({model!r})
model = {load}
assert model.encode(["How long is the warranty on the Aurora X2?"], "query: ", 8).shape[0] == 1
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(arm: str, model: str) -> float:
    """User + system seconds of one fresh interpreter loading ``model`` with ``arm`` and embedding one text."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    before = _cpu()
    subprocess.run([sys.executable, "-c", _CODE.format(load=LOADS[arm], model=model)], env=env, check=True, cwd=ROOT)
    return _cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="embedding model name or folder")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; each runs every arm once, in turn")
    args = parser.parse_args()
    run_once(ARMS[0], args.model)  # converts a packaged model and warms the file cache before anything is timed
    seconds: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for number in range(1, args.rounds + 1):
        for arm in ARMS:
            seconds[arm].append(run_once(arm, args.model))
        print(f"round {number}/{args.rounds}: " + ", ".join(f"{arm} {seconds[arm][-1]:.2f} s" for arm in ARMS), flush=True)
    for arm in ARMS:
        print(f"{arm}: median {statistics.median(seconds[arm]):.2f} s of CPU (min {min(seconds[arm]):.2f}, max {max(seconds[arm]):.2f})")
    ratio = statistics.median(seconds[ARMS[0]]) / statistics.median(seconds[ARMS[1]])
    print(f"{ARMS[0]} / {ARMS[1]}: {ratio:.2f}")


if __name__ == "__main__":
    main()
