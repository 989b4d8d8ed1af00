"""The noise-floor calibration of issue 24 §3 at its scale: a ~68,000-chunk Chinese knowledge base, 207 questions,
BM25 only, the offline span reader, ``noise_floor: auto``; where ``tuner run``'s calibration spends its time, and how
fast Ctrl-C ends it.

The knowledge base is made from CMRC 2018 (the trial split: 256 paragraphs, 1,000 answerable questions), written
outside the repository (``--work``, default a temporary folder):

- corpus: every paragraph, plus ``copies`` variants of it (document ``ID~k``: its sentences in a seeded shuffled
  order), so the chunker (``chunk_unit: chars``, ``chunk_size`` 64, no overlap) cuts ~68,000 chunks; ``copies`` is
  the smallest count reaching ``--chunks``;
- golden: 207 questions (a seeded sample), each with its original paragraph as the relevant document;
- conflicts: ``tuner corrupt --types factual_corruption --severities moderate`` (one per relevant paragraph);
- a study file over a BM25-only space at that chunking: the span reader, the lexical judge, v3 ``in_index``.

Parts:

- ``profile``: ``tuner run STUDY --trials 1`` on a cold cache with its calibration call under cProfile (it runs in a
  worker thread, which ``python -m cProfile`` does not see), the run's wall time, then the time per phase of the
  calibration (cumulative seconds of the functions that do each phase) and the top functions by own time; with
  ``--questions N`` the golden set is a prefix of N of the 207 questions (the corpus stays whole), to profile a
  measured fraction on a loaded machine;
- ``interrupt``: ``tuner run`` (no profiler) on the warm cache of ``profile``, one SIGINT once the calibration has
  printed ``--phase``'s line, and the seconds until the process exits (and its exit code); then, in a second run,
  two SIGINT one second apart during the same phase, and the seconds from the second one to the exit.

Run: HF_HUB_OFFLINE=1 nice -n 10 python bench/calibration_scale.py [--work DIR] [--questions N] [profile] [interrupt]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from cmrc import corrupt, default_path
from tuner.chunking import chunk_spans, unit_spans
from tuner.dataset import load_dataset, write_dataset
from tuner.dataset.importers import import_squad
from tuner.text import sentence_spans

CHUNK_SIZE = 64
QUESTIONS = 207
TARGET_CHUNKS = 68_000

PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("chunking (character units, sentence snapping)", ("chunking.py:.*\\(chunk_dataset\\)",)),
    ("BM25 tokenization (jieba) + index build", ("_bm25.py:.*\\(build\\)",)),
    ("BM25 scoring: every question against every chunk", ("_bm25.py:.*\\(search\\)",)),
    ("final ranking of the candidates (per run)", ("_pipeline.py:.*\\(retrieve\\)",)),
    ("reader: span answers (generate)", ("_extractive.py:.*\\(generate\\)",)),
    ("judge: lexical verdicts", ("_lexical.py:.*\\(judge\\)",)),
    ("bootstrap + variance decomposition", ("_calibrate.py:.*\\(_faithfulness_components\\)",
                                            "_calibrate.py:.*\\(_retrieval_components\\)")),
    ("the whole calibration", ("_calibrate.py:.*\\(calibrate\\)",)),
)
"""Each phase's seconds: the largest cumulative time among the functions matching its patterns (pstats keys
``file:line(function)``); phases nest (a run's retrieval holds its BM25 scoring), the last row is their sum and more."""


def variant(text: str, copy: int) -> str:
    """Copy ``copy`` of a paragraph: its sentences in an order shuffled with seed ``copy``."""
    sentences = [text[start:end] for start, end in sentence_spans(text)]
    random.Random(copy).shuffle(sentences)
    return "".join(sentences)


def build_kb(folder: Path, target_chunks: int, questions: int) -> tuple[Path, dict[str, Any]]:
    """The knowledge base and its study file in ``folder`` (made once; see the module docstring)."""
    dataset_dir = folder / "kb"
    facts_file = folder / "kb.json"
    if not (dataset_dir / "conflicts.jsonl").is_file():
        result = import_squad(default_path())
        units = unit_spans("chars", "")
        per_copy = sum(len(chunk_spans(d["text"], units, CHUNK_SIZE, 0.0, True)) for d in result.corpus)
        copies = -(-target_chunks // per_copy) - 1
        corpus = list(result.corpus) + [
            {**doc, "doc_id": f"{doc['doc_id']}~{k}", "text": variant(doc["text"], k)}
            for k in range(1, copies + 1) for doc in result.corpus
        ]
        golden = [result.golden[i] for i in sorted(random.Random(0).sample(range(len(result.golden)), QUESTIONS))]
        dataset = write_dataset(dataset_dir, corpus, golden, [], force=True)
        corrupt(dataset, {**os.environ, "HF_HUB_OFFLINE": "1"})
        facts_file.write_text(json.dumps({"copies": copies, "documents": len(corpus)}))
    facts = json.loads(facts_file.read_text())
    dataset_path = dataset_dir
    if questions < QUESTIONS:  # a prefix of the golden set over the whole corpus and conflicts
        dataset_path = folder / f"kb-{questions}"
        if not (dataset_path / "golden.jsonl").is_file():
            dataset_path.mkdir(exist_ok=True)
            for name in ("corpus.jsonl", "conflicts.jsonl"):
                (dataset_path / name).write_bytes((dataset_dir / name).read_bytes())
            lines = (dataset_dir / "golden.jsonl").read_text(encoding="utf-8").splitlines()[:questions]
            (dataset_path / "golden.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = load_dataset(dataset_path)
    space = folder / "space.yaml"
    space.write_text(yaml.safe_dump({
        "top_k": {"type": "int", "low": 3, "high": 8},
        "chunk_unit": {"type": "categorical", "choices": ["chars"]},
        "chunk_size": {"type": "categorical", "choices": [CHUNK_SIZE]},
        "retriever": {"type": "categorical", "choices": ["bm25"]},
    }))
    study = folder / f"calibration-{questions}.yaml"
    study.write_text(yaml.safe_dump({
        "name": f"calibration_scale_{questions}",
        "dataset": str(dataset_path),
        "search_space": str(space),
        "objectives": ["recall_at_k", "v3_delta_faithful"],
        "settings": {"retriever": "bm25", "chunk_unit": "chars", "chunk_size": CHUNK_SIZE, "chunk_overlap": 0.0,
                     "top_k": 5, "candidate_depth": 30},
        "generator": {"backend": "extractive", "reader": "span"},
        "judge": {"backend": "lexical"},
        "variants": {"n": 2, "position": "end", "hard_mode": "in_index", "seed": 0},
        "sampler": {"name": "random", "seed": 0},
        "budget": {"trials": 1},
        "noise_floor": "auto",
        "seed": 0,
        "output": str(folder / f"out-{questions}"),
    }, allow_unicode=True))
    return study, {**facts, "questions": len(dataset.golden), "summary": dataset.summary()}


PROFILED_RUN = """
import cProfile
import sys

import tuner.noisefloor

# the calibration runs in a worker thread (the Ctrl-C rules), which `python -m cProfile` does not see: profile the
# call itself, in whatever thread it runs (tuner.study._run imports it from tuner.noisefloor at call time)
profiler = cProfile.Profile()
original = tuner.noisefloor.calibrate
tuner.noisefloor.calibrate = lambda *args, **kwargs: profiler.runcall(original, *args, **kwargs)
from tuner.cli import main

code = main(sys.argv[2:])
profiler.dump_stats(sys.argv[1])
sys.exit(code)
"""


TREE = Path(__file__).resolve().parent.parent


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "TUNER_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": os.pathsep.join([str(TREE), os.environ.get("PYTHONPATH", "")])}


def profile(folder: Path, study: Path, tag: str) -> list[str]:
    """``tuner run`` under cProfile on a cold cache: wall time and the seconds per phase."""
    cache, stats_file = folder / f"cache-{tag}", folder / f"run-{tag}.prof"
    log = folder / f"run-{tag}.log"
    out = folder / f"out-{tag}"
    for stale in (cache, out):
        shutil.rmtree(stale, ignore_errors=True)
    start = time.perf_counter()
    with log.open("w") as stderr:
        done = subprocess.run([sys.executable, "-c", PROFILED_RUN, str(stats_file), "run", str(study), "--trials", "1",
                               "--out", str(out)], env=_env(cache), stderr=stderr, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    lines = [f"tuner run --trials 1, its calibration under cProfile, cold cache: exit {done.returncode}, {wall:.0f} s "
             f"wall for the whole run (log {log})"]
    stats = pstats.Stats(str(stats_file))
    table: dict[str, float] = {}
    for name, patterns in PHASES:
        best = 0.0
        for (file, line, function), row in stats.stats.items():  # type: ignore[attr-defined]
            key = f"{file}:{line}({function})"
            if any(re.search(pattern, key) for pattern in patterns):
                best = max(best, row[3])
        table[name] = best
    total = float(stats.total_tt)  # type: ignore[attr-defined]
    lines.append(f"{'phase':<52} {'seconds':>8} {'share':>17}")
    for name, seconds in table.items():
        lines.append(f"{name:<52} {seconds:8.1f} {seconds / total:17.0%}")
    lines.append(f"{'profiled total (the calibration call)':<52} {total:8.1f}")
    lines.append("top functions by own time:")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:12]  # type: ignore[attr-defined]
    for (file, line, function), row in rows:
        lines.append(f"  {row[2]:7.1f} s own, {row[3]:7.1f} s cumulative  {Path(file).name}:{line}({function})")
    return lines


def _interrupted_run(study: Path, cache: Path, phase: str, signals: int) -> tuple[int, float, str]:
    """(exit code, seconds from the last SIGINT to the exit, the last lines) of ``tuner run`` sent ``signals``
    SIGINT (one second apart) once its stderr shows ``phase``."""
    process = subprocess.Popen([sys.executable, "-m", "tuner", "run", str(study), "--trials", "1", "--out",
                                str(cache.parent / f"out-interrupt-{cache.name}")], env=_env(cache),
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                               # a shell running the bench in the background ignores SIGINT, and children inherit that
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert process.stderr is not None
    seen, lines = threading.Event(), []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line.rstrip())
            if phase in line:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while not seen.wait(1.0):
        if process.poll() is not None:
            raise SystemExit(f"interrupt: the run ended (exit {process.returncode}) before '{phase}': {lines[-5:]}")
    for _ in range(signals):
        time.sleep(1.0)  # inside the phase, not at its first line
        process.send_signal(signal.SIGINT)
        sent = time.perf_counter()
    code = process.wait(600)
    latency = time.perf_counter() - sent
    reader.join(5)
    return code, latency, " | ".join(lines[-2:])


def interrupt(folder: Path, study: Path, tag: str, phase: str) -> list[str]:
    cache = folder / f"cache-{tag}"
    lines = []
    for signals in (1, 2):
        code, latency, last = _interrupted_run(study, cache, phase, signals)
        lines.append(f"{signals} SIGINT during '{phase}': exit {code}, {latency:.2f} s from the last SIGINT to the "
                     f"exit; last lines: {last}")
    return lines


def main() -> int:
    global TREE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help="profile, interrupt (default: both)")
    parser.add_argument("--work", type=Path, help="keep the knowledge base, caches and profiles here")
    parser.add_argument("--chunks", type=int, default=TARGET_CHUNKS, help=f"chunks to reach (default {TARGET_CHUNKS})")
    parser.add_argument("--questions", type=int, default=QUESTIONS, help=f"golden questions (≤ {QUESTIONS})")
    parser.add_argument("--tree", type=Path, default=TREE,
                        help="the tuner checkout to run (default: this one; e.g. a `git archive` of an earlier commit)")
    parser.add_argument("--tag", default="", help="a suffix for this run's cache, profile and log files")
    parser.add_argument("--phase", default="noise floor: regenerating answers",
                        help="interrupt: the line after which SIGINT is sent")
    args = parser.parse_args()
    TREE = args.tree.resolve()
    unknown = [part for part in args.parts if part not in ("profile", "interrupt")]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; choose from profile, interrupt")
    if not default_path().is_file():
        print(f"calibration_scale: {default_path()} not found; nothing to measure", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.work or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        study, facts = build_kb(folder, args.chunks, min(args.questions, QUESTIONS))
        print(f"knowledge base: {facts['summary']}; {facts['copies']} shuffled copies of each CMRC paragraph; "
              f"study {study}")
        tag = f"{facts['questions']}{args.tag}"
        for part in args.parts or ["profile", "interrupt"]:
            print(f"\n[{part}]")
            lines = profile(folder, study, tag) if part == "profile" else interrupt(folder, study, tag, args.phase)
            print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
