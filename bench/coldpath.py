"""The cold path of a Chinese knowledge base (issue 39 §2): ``tuner eval --retriever bm25`` with nothing cached.

Parts:

- ``build --docs N --out DIR``: a Chinese dataset folder of N documents (default 68,000, the size of issue 31 §4's
  held-out news knowledge base) made from public text: the CMRC 2018 trial split's 256 paragraphs with their
  questions (``tuner import squad``), plus N − 256 documents of 4–40 sentences (about 800 characters on average, news
  length) drawn with a fixed seed from the sentences of those paragraphs, each under a title of its own. Written
  outside the repository (the data is CC BY-SA 4.0 and read from the shared folder).
- ``time --dataset DIR [--root TREE ...]``: for each source tree (``--root``, default this checkout; give the tree
  before a change and after it to compare them on the same machine in one run), a fresh child process runs
  ``python -m tuner eval DIR --retriever bm25 --json`` with ``TUNER_CACHE`` in a new empty folder: its wall time,
  its CPU time (user + system of the child and every thread and process it starts, from ``wait4``; this process is
  their subreaper, so the worker processes tuner starts for a large corpus, which outlive it by a moment, are counted
  too), its peak RSS (of the largest single process), and the load average before and after. ``--phases`` also times, in another fresh child per tree, the stages of
  the same work one by one (loading, chunking, writing the chunk table, the BM25 index, the questions): the CPU of
  the whole process, all threads, and of its worker processes, read from ``/proc``, beside that of the process alone.
- ``tokens --dataset DIR [--dataset DIR ...] [--cmrc]``: the token spans tuner's chunking counts
  (:class:`tuner.chunking.TokenUnits`, which hands a BERT tokenizer only what is not a CJK ideograph or punctuation)
  against the tokenizer's own offsets for the whole of every text: documents, conflicts, titles and questions of each
  dataset folder, and with ``--cmrc`` the CMRC 2018 trial split's paragraphs, titles, questions and answers as
  imported. Prints the texts, characters and tokens compared and every text whose spans differ (none expected).

The machine this runs on is shared: the wall time is inflated by other work, the CPU time much less (it still
counts cache misses and frequency drops under load), so both are printed.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/coldpath.py build --docs 68000 --out /tmp/coldkb
     HF_HUB_OFFLINE=1 .venv/bin/python bench/coldpath.py time --dataset /tmp/coldkb --root /tmp/before --root . --phases
     HF_HUB_OFFLINE=1 .venv/bin/python bench/coldpath.py tokens --dataset /tmp/coldkb --cmrc
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PR_SET_CHILD_SUBREAPER = 36
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cmrc import default_path  # noqa: E402
from tuner.chunking import token_units  # noqa: E402
from tuner.dataset import load_dataset, write_dataset  # noqa: E402
from tuner.dataset.importers import import_squad  # noqa: E402
from tuner.text import split_sentences  # noqa: E402

PHASES = """
import json, os, sys, tempfile, time
from pathlib import Path
from tuner.chunking import chunk_dataset
from tuner.dataset import load_dataset
from tuner.io import jsonl_text
from tuner.retrieval import BM25Retriever, build_index
from tuner.settings import RetrievalSettings

def cpu():
    # this process and its descendants (tuner's worker server and its workers): user + system of the live ones and
    # of the ones they reaped, from /proc (process_time would miss the workers)
    total, pids = 0, [os.getpid()]
    while pids:
        pid = pids.pop()
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            tasks = os.listdir(f"/proc/{pid}/task")
            pids += [int(child) for task in tasks for child in open(f"/proc/{pid}/task/{task}/children").read().split()]
        except FileNotFoundError:
            continue
        total += sum(int(field) for field in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")

stages, last = {}, (cpu(), time.process_time())

def stage(name):
    # CPU of the stage: of this process and its workers, and of this process alone (its serial part)
    global last
    now = (cpu(), time.process_time())
    stages[name] = [now[0] - last[0], now[1] - last[1]]
    last = now

dataset = load_dataset(sys.argv[1])
stage("load")
chunks = chunk_dataset(dataset, RetrievalSettings(retriever="bm25").chunking)
stage("chunking")
with tempfile.TemporaryDirectory() as folder:
    (Path(folder) / "chunks.jsonl").write_text(jsonl_text(chunk.__dict__ for chunk in chunks), "utf-8")  # as the table
    stage("table")
    index = build_index([chunk.passage for chunk in chunks], 1.5, 0.75, dataset.language)
    stage("bm25_index")
BM25Retriever(index, len(chunks), dataset.language).search([case.question for case in dataset.golden], 50, None)
stage("queries")
print(json.dumps({"chunks": len(chunks), "stages": stages}))
"""


def build(docs: int, out: Path, seed: int = 0) -> None:
    result = import_squad(default_path())
    sentences = [s for record in result.corpus for s in split_sentences(record["text"])]
    titles = [record.get("title") or "" for record in result.corpus]
    rng = random.Random(seed)
    corpus = list(result.corpus)
    for number in range(docs - len(corpus)):
        text = "".join(rng.choice(sentences) for _ in range(rng.randint(4, 40)))
        corpus.append({"doc_id": f"kb-{number:06d}", "title": f"{rng.choice(titles)}（{number}）", "text": text})
    write_dataset(out, corpus, result.golden, [], force=True)
    chars = sum(len(record["text"]) for record in corpus)
    print(f"wrote {out}: {len(corpus)} documents, {chars:,} characters ({chars / len(corpus):.0f} per document), "
          f"{len(result.golden)} questions")


def _child(argv: list[str], root: Path, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root), "TUNER_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    load_before = os.getloadavg()
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{' '.join(argv)} under {root} failed ({status})")
    cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    while True:  # descendants it left behind (the worker server exits a moment after tuner), handed to us
        try:
            _, _, orphan = os.wait4(-1, 0)
        except ChildProcessError:
            break
        cpu, peak = cpu + orphan.ru_utime + orphan.ru_stime, max(peak, orphan.ru_maxrss)
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak / 1024,
            "load_before": load_before[0], "load_after": os.getloadavg()[0], "output": output}


def _adopt_orphans() -> None:
    """Make this process the subreaper of its descendants (Linux ``PR_SET_CHILD_SUBREAPER``): a process a timed child
    leaves behind is handed to us, not to init, so :func:`_child` reaps it and counts its CPU and its workers'."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def time_trees(dataset: Path, roots: list[Path], phases: bool) -> None:
    _adopt_orphans()
    print(f"dataset {dataset}; machine: {os.cpu_count()} cores (shared); python {sys.version.split()[0]}")
    print("| tree | wall s | CPU s | peak RSS MB | load avg before → after | recall@5 |")
    print("|---|---|---|---|---|---|")
    for root in roots:
        with tempfile.TemporaryDirectory(prefix="coldpath-cache-") as cache:
            run = _child([sys.executable, "-m", "tuner", "eval", str(dataset), "--retriever", "bm25", "--json"], root,
                         Path(cache))
        recall = json.loads(run["output"])["recall_at_k"]
        print(f"| {root} | {run['wall_s']:.1f} | {run['cpu_s']:.1f} | {run['peak_rss_mb']:.0f} | "
              f"{run['load_before']:.1f} → {run['load_after']:.1f} | {recall:.4f} |")
    if phases:
        print("\nCPU s of each stage: of the process and its workers / of the process alone (its serial part)\n")
        print("| tree | chunks | load | chunking | chunk table written | BM25 index | queries | wall s of the child | "
              "load avg before → after |")
        print("|---|---|---|---|---|---|---|---|---|")
        for root in roots:
            with tempfile.TemporaryDirectory(prefix="coldpath-cache-") as cache:
                run = _child([sys.executable, "-c", PHASES, str(dataset)], root, Path(cache))
            figures = json.loads(run["output"])
            cells = " | ".join(f"{every:.1f} / {alone:.1f}" for every, alone in figures["stages"].values())
            print(f"| {root} | {figures['chunks']} | {cells} | {run['wall_s']:.1f} | "
                  f"{run['load_before']:.1f} → {run['load_after']:.1f} |")


def compare_tokens(name: str, texts: list[str], batch: int = 1024) -> int:
    """Compare the spans of ``texts`` (see the module docs); returns how many texts differ."""
    units = token_units("all-MiniLM-L6-v2")
    tokenizer, differ, tokens, chars = units.tokenizer, 0, 0, sum(map(len, texts))
    for first in range(0, len(texts), batch):
        part = texts[first : first + batch]
        plain = tokenizer.encode_batch(part, add_special_tokens=False)
        for at, (text, (starts, ends), encoding) in enumerate(zip(part, units.many(part), plain)):
            expected = [(start, end) for start, end in encoding.offsets if end > start]
            tokens += len(expected)
            if list(zip(starts.tolist(), ends.tolist())) != expected:
                differ += 1
                print(f"  differs: text {first + at} of {name}: {text[:80]!r}")
    print(f"{name}: {len(texts):,} texts, {chars:,} characters, {tokens:,} tokens compared; {differ} differ")
    return differ


def check_tokens(datasets: list[Path], cmrc: bool) -> None:
    differ = 0
    for path in datasets:
        dataset = load_dataset(path)
        texts = [doc.text for doc in dataset.corpus] + [conflict.text for conflict in dataset.conflicts]
        texts += [doc.title for doc in dataset.corpus] + [case.question for case in dataset.golden]
        differ += compare_tokens(str(path), texts)
    if cmrc:
        result = import_squad(default_path())
        texts = [record["text"] for record in result.corpus] + [record.get("title") or "" for record in result.corpus]
        texts += [case["question"] for case in result.golden]
        texts += [alias for case in result.golden for keypoint in case["keypoints"] for alias in keypoint]
        differ += compare_tokens("CMRC 2018 trial", texts)
    if differ:
        raise SystemExit(f"{differ} texts differ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parts = parser.add_subparsers(dest="part", required=True)
    making = parts.add_parser("build")
    making.add_argument("--docs", type=int, default=68_000)
    making.add_argument("--out", type=Path, required=True)
    timing = parts.add_parser("time")
    timing.add_argument("--dataset", type=Path, required=True)
    timing.add_argument("--root", type=Path, action="append", help="a tree holding tuner/ (repeatable; default: here)")
    timing.add_argument("--phases", action="store_true", help="also the CPU of each stage, with and without the workers")
    checking = parts.add_parser("tokens")
    checking.add_argument("--dataset", type=Path, action="append", default=[])
    checking.add_argument("--cmrc", action="store_true", help="also the CMRC 2018 trial split as imported")
    args = parser.parse_args()
    if args.part == "build":
        build(args.docs, args.out)
    elif args.part == "tokens":
        check_tokens(args.dataset, args.cmrc)
    else:
        time_trees(args.dataset.resolve(), [root.resolve() for root in (args.root or [ROOT])], args.phases)


if __name__ == "__main__":
    main()
