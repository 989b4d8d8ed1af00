"""`tuner golden conflicts` on large similar documents: :func:`tuner.golden.find_conflicts` on one version family
of three documents of SIZE bytes each (the second and third the first with every 20th number changed), timed against
the same function of an older commit (``--before REV``: the all-pairs sentence loop of 9fe7f21) on the same documents
in one run, and the candidates of both compared.

    PYTHONPATH=. python bench/conflicts_scale.py --size 1000000
    PYTHONPATH=. python bench/conflicts_scale.py --size 100000 --before 9fe7f21

Prints one JSON line: size, seconds and CPU seconds of each, the candidates found and whether both found the same.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tuner.dataset import Dataset, Document
from tuner.golden import find_conflicts
from tuner.progress import SilentReporter

NAMES = ["Anna Berg", "John Smith", "Maria Lopez", "Wei Chen", "Omar Haddad", "Ines Moreau", "Kofi Mensah", "Sara Nilsson"]
THINGS = ["router", "lamp", "kettle", "laptop", "drone", "scooter", "heater", "camera", "printer", "speaker", "monitor"]
VERBS = ["ships", "weighs", "costs", "lasts", "charges", "holds", "draws", "runs", "covers", "reaches"]
PLACES = ["Oslo", "Lyon", "Porto", "Gdansk", "Leeds", "Turin", "Graz", "Malmo", "Bilbao", "Tartu", "Split", "Ghent"]
WORDS = ("model series edition batch unit shipment warranty battery panel motor sensor frame cable charger filter "
         "display lens housing valve pump spring hinge module board chip antenna adapter mount bracket").split()


def _sentence(rng: random.Random) -> str:
    words = " ".join(rng.sample(WORDS, 4))
    return (f"The {rng.choice(THINGS)} {words} {rng.choice(VERBS)} {rng.randint(2, 9999)} units in "
            f"{rng.choice(PLACES)} since {rng.randint(1990, 2025)} according to {rng.choice(NAMES)}.")


def documents(size: int, seed: int = 54) -> list[Document]:
    """Three documents of about ``size`` bytes: a text, and two copies with every 20th number changed."""
    rng = random.Random(seed)
    sentences: list[str] = []
    while sum(map(len, sentences)) < size:
        sentences.append(_sentence(rng))
    versions = [sentences]
    for version in (1, 2):
        changed = [s.replace(" units", f"{version}0 units") if n % 20 == version else s for n, s in enumerate(sentences)]
        versions.append(changed)
    return [Document(f"doc-{n}", " ".join(text), f"Report {n}", {"family": "report", "date": f"2024-0{n + 1}-01"})
            for n, text in enumerate(versions)]


def _older(rev: str) -> Callable[..., Any]:
    """``find_conflicts`` as commit ``rev`` of this repository wrote it (its module loaded beside today's tuner)."""
    source = subprocess.run(["git", "show", f"{rev}:tuner/golden/_conflicts.py"], check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "conflicts_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("conflicts_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.find_conflicts  # type: ignore[no-any-return]


def _timed(find: Callable[..., Any], kb: Dataset) -> tuple[list[Any], float, float]:
    wall, cpu = time.monotonic(), _cpu()
    found = find(kb, near_duplicates=False, reporter=SilentReporter())
    return found, round(time.monotonic() - wall, 2), round(_cpu() - cpu, 2)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="bytes per document")
    parser.add_argument("--before", metavar="REV", help="also time find_conflicts of this commit (9fe7f21: all pairs)")
    args = parser.parse_args()
    corpus = documents(args.size)
    kb = Dataset(Path("conflicts-scale"), tuple(corpus), ())
    found, seconds, cpu = _timed(find_conflicts, kb)
    row: dict[str, object] = {"size": args.size, "documents": len(corpus), "seconds": seconds, "cpu_s": cpu,
                              "candidates": len(found), "values": sum(len(c.wrong_values) for c in found)}
    if args.before:
        before, seconds, cpu = _timed(_older(args.before), kb)
        row.update(before_seconds=seconds, before_cpu_s=cpu, same_candidates=[vars(c) for c in before] == [vars(c) for c in found])
    print(json.dumps(row))


if __name__ == "__main__":
    main()
