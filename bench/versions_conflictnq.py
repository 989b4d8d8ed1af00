"""Issue 22 §4 on data tuner did not make: does a study with the version knobs beat the recall–Δ trade-off?

Each part runs one study file twice with the same seed, budget and noise (``hard_mode: in_index``): once over its
base search space, once over the base space plus the version knobs of ``search_spaces/versions.yaml`` (the keys
that file adds to ``default.yaml``). Then it prints, per pair, the fronts with 95% intervals, the hypervolume
ratio, the noise floor, and the Δ of the best new configuration at the recall of the old study's pick.

Parts:

- ``conflictnq``: ConflictNQ val (``conflict_nq_val.jsonl``, 225 Natural Questions questions, each with real
  passages and fabricated ones that contradict them) through ``tuner import conflictnq``, then dated as stale
  versions would be. Construction, per question (in file order): its family is ``nq-<question id>``; its
  fabricated passages (the conflicts) are dated on a base date, 2015-01-01 plus a seeded offset of 0–2,999 days,
  and its real passages 30–365 days (seeded) after that base, all in that family. A real passage shared by two
  questions keeps the first question's family and date. Dates differ between families, so recency cannot tell
  a fabricated passage from a real one across questions, only within one family.
- ``conflictnq-half``: the same, with only half of the families labelled (a seeded half of the questions; the
  others' real and fabricated passages carry no ``family`` and no ``date``), to show what partial metadata is worth.
- ``demo-zh``: the Chinese demo study (``studies/demo_zh.yaml``, ``search_spaces/zh.yaml``) like the English one.

The ConflictNQ studies use ``studies/demo.yaml``'s settings (candidate depth 30, two enqueued hybrid trials, the
offline extractive generator and lexical judge) with ``pick: knee`` (recall on ConflictNQ stays below the demo's
0.95 floor). The hypervolume reference is recall 0 and Δ 0.2, as in the English figure of bench/HISTORY.md,
raised to the worst Δ of the two studies' trials when one exceeds it, so that every trial counts.

ConflictNQ: the authors' release on GitHub (see its README in the shared folder), read from ../shared/datasets
into ``--work`` and never copied into the repository. The part is skipped when the file is absent.

Run: nice -n 10 env PYTHONPATH=$PWD HF_HUB_OFFLINE=1 /work/venv/bin/python bench/versions_conflictnq.py
     [--trials 12] [--work DIR] [--data FILE] [conflictnq] [conflictnq-half] [demo-zh]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import optuna
import yaml

from tuner.dataset import DATE, FAMILY, write_dataset
from tuner.dataset.importers import import_conflictnq
from tuner.objectives import DELTA, RECALL
from tuner.pareto import Point, hypervolume_2d
from tuner.front import study_front

ROOT = Path(__file__).resolve().parent.parent
RELATIVE = Path("shared") / "datasets" / "conflictnq" / "conflict_nq_val.jsonl"
PARTS = ("conflictnq", "conflictnq-half", "demo-zh")
BASE_DATE = dt.date(2015, 1, 1)
REFERENCE_DELTA = 0.2


def default_path() -> Path:
    """The shared copy beside the repository, or in a folder above a worktree of it."""
    candidates = [folder / RELATIVE for folder in Path(__file__).resolve().parents[1:]]
    return next((path for path in candidates if path.is_file()), candidates[0])


def version_knobs() -> dict[str, Any]:
    """The distributions ``search_spaces/versions.yaml`` adds to ``default.yaml``."""
    default = yaml.safe_load((ROOT / "search_spaces" / "default.yaml").read_text("utf-8"))
    versions = yaml.safe_load((ROOT / "search_spaces" / "versions.yaml").read_text("utf-8"))
    return {name: spec for name, spec in versions.items() if name not in default}


def dated_conflictnq(source: Path, target: Path, labelled_share: float, seed: int = 0) -> int:
    """ConflictNQ as a dataset folder with the dated families of this module's docstring; returns the number of
    labelled families."""
    result = import_conflictnq(source)
    rng = random.Random(seed)
    labelled = {case["id"] for case in result.golden if rng.random() < labelled_share} if labelled_share < 1 else {
        case["id"] for case in result.golden}
    corpus = {doc["doc_id"]: doc for doc in result.corpus}
    conflicts_of: dict[str, list[dict[str, Any]]] = {}
    for conflict in result.conflicts:
        conflicts_of.setdefault(conflict["conflicts_with"], []).append(conflict)
    dates = random.Random(seed + 1)
    for case in result.golden:
        base = BASE_DATE + dt.timedelta(days=dates.randrange(3000))
        newer = base + dt.timedelta(days=dates.randrange(30, 366))
        if case["id"] not in labelled:
            continue
        family = f"nq-{case['id']}"
        for doc_id in case["relevant_doc_ids"]:
            corpus[doc_id].setdefault("metadata", {FAMILY: family, DATE: newer.isoformat()})
        for conflict in conflicts_of.get(case["relevant_doc_ids"][0], []):
            conflict.setdefault("metadata", {FAMILY: family, DATE: base.isoformat()})
    write_dataset(target, list(corpus.values()), result.golden, result.conflicts, force=True)
    return len(labelled)


def write_pair(folder: Path, study: dict[str, Any], space: dict[str, Any]) -> dict[str, Path]:
    """The study file twice: over ``space`` (``without``) and over it plus the version knobs (``with``)."""
    files = {}
    for label, params in (("without", space), ("with", {**space, **version_knobs()})):
        space_file = folder / f"space_{label}.yaml"
        space_file.write_text(yaml.safe_dump(params, sort_keys=False), "utf-8")
        study_file = folder / f"study_{label}.yaml"
        study_file.write_text(yaml.safe_dump({**study, "name": f"{study['name']}_{label}", "search_space": str(space_file)},
                                             sort_keys=False, allow_unicode=True), "utf-8")
        files[label] = study_file
    return files


def run_study(study_file: Path, out: Path, trials: int) -> dict[str, Any]:
    """``tuner run STUDY --trials N --out OUT --json --no-report`` (a study complete there is resumed, so no new trials)."""
    command = [sys.executable, "-m", "tuner.cli", "run", str(study_file), "--trials", str(trials), "--out", str(out),
               "--json", "--no-report"]
    print("$", " ".join(command), file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True)
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def figures(out: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """The front, noise floor, all complete trials and the pick of the study stored in ``out``."""
    study = optuna.load_study(study_name=summary["study"], storage=f"sqlite:///{out / 'study.db'}")
    directions, floor, entries = study_front(study)
    pick = summary["pick"]["trial"]
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}
    complete = [t for t in trials.values() if t.state == optuna.trial.TrialState.COMPLETE]
    return {
        "directions": directions, "floor": floor, "summary": summary["summary"],
        "front": [{"trial": e.number, "values": dict(e.values), "ci": {k: list(v) for k, v in e.ci.items()},
                   "params": dict(e.params)} for e in entries],
        "pick": None if pick is None else {"trial": pick, "values": dict(zip(directions, trials[pick].values))},
        "deltas": [t.values[1] for t in complete],
    }


def compare(without: dict[str, Any], with_: dict[str, Any]) -> dict[str, Any]:
    """Hypervolume of both fronts against one reference, their ratio, and at the old pick's recall the best new Δ."""
    worst = max([REFERENCE_DELTA, *without["deltas"], *with_["deltas"]])
    reference = {RECALL: 0.0, DELTA: worst if worst == REFERENCE_DELTA else round(worst + 0.005, 3)}

    def volume(run: dict[str, Any]) -> float:
        points = [Point(e["trial"], e["values"]) for e in run["front"]]
        return hypervolume_2d(points, run["directions"], reference)

    old, new = volume(without), volume(with_)
    at_pick = None
    if without["pick"] is not None:
        recall = without["pick"]["values"][RECALL]
        reaching = [e for e in with_["front"] if e["values"][RECALL] >= recall - 1e-12]
        old_pick = next((e for e in without["front"] if e["trial"] == without["pick"]["trial"]), without["pick"])
        at_pick = {"old": old_pick, "new": min(reaching, key=lambda e: e["values"][DELTA]) if reaching else None}
    return {"reference": reference, "hypervolume": {"without": old, "with": new},
            "ratio": new / old if old > 0 else None, "at_old_pick": at_pick,
            "noise_floor": {"without": without["floor"], "with": with_["floor"]}}


def show(part: str, runs: dict[str, dict[str, Any]], result: dict[str, Any]) -> None:
    def point(entry: dict[str, Any]) -> str:
        lo, hi = entry.get("ci", {}).get(DELTA, [None, None])
        interval = "" if lo is None else f" [{lo:.3f}, {hi:.3f}]"
        return f"({entry['values'][RECALL]:.3f}, {entry['values'][DELTA]:.3f}{interval})"

    print(f"\n## {part}")
    for label, run in runs.items():
        s = run["summary"]
        print(f"{label}: complete {s['n_complete']} / pruned {s['n_pruned']}; front " + "; ".join(point(e) for e in run["front"])
              + f"; hypervolume {result['hypervolume'][label]:.4f}; noise floor {run['floor']}")
        for e in run["front"]:
            print(f"    trial {e['trial']}: {e['params']}")
    print(f"reference {result['reference']}; ratio with/without: "
          + ("n/a" if result["ratio"] is None else f"{result['ratio']:.2f}"))
    at = result["at_old_pick"]
    if at is not None:
        print(f"old pick trial {at['old']['trial']} {point(at['old'])}; best new at its recall: "
              + ("none reaches it" if at["new"] is None else f"trial {at['new']['trial']} {point(at['new'])}"))


def conflictnq_study(dataset: Path) -> dict[str, Any]:
    study = yaml.safe_load((ROOT / "studies" / "demo.yaml").read_text("utf-8"))
    return {**study, "name": "conflictnq", "dataset": str(dataset), "pick": {"rule": "knee"}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"some of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--data", type=Path, default=default_path())
    parser.add_argument("--work", type=Path, help="keep datasets and studies here (default: a temporary folder)")
    args = parser.parse_args()
    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r} (known: {', '.join(PARTS)})")
    work = args.work or Path(tempfile.mkdtemp(prefix="versions-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    for part in args.parts or PARTS:
        folder = work / part
        folder.mkdir(exist_ok=True)
        if part.startswith("conflictnq"):
            if not args.data.is_file():
                print(f"{part}: skipped, {args.data} not found", file=sys.stderr)
                continue
            labelled = dated_conflictnq(args.data, folder / "data", 0.5 if part.endswith("half") else 1.0)
            print(f"{part}: {labelled} labelled families", file=sys.stderr)
            study = conflictnq_study(folder / "data")
            space = yaml.safe_load((ROOT / "search_spaces" / "default.yaml").read_text("utf-8"))
        else:
            study = {**yaml.safe_load((ROOT / "studies" / "demo_zh.yaml").read_text("utf-8")), "dataset": "demo-zh"}
            space = yaml.safe_load((ROOT / "search_spaces" / "zh.yaml").read_text("utf-8"))
        files = write_pair(folder, study, space)
        runs = {label: figures(folder / f"out_{label}", run_study(file, folder / f"out_{label}", args.trials))
                for label, file in files.items()}
        results[part] = compare(runs["without"], runs["with"])
        show(part, runs, results[part])
        (folder / "figures.json").write_text(json.dumps({"runs": runs, "comparison": results[part]}, indent=2, default=str), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
