"""Cold start (issue 15): a study on a real-size multi-document corpus, from an empty cache.

Corpus (built once into ``--work``, never into the repository): 2,452 documents and 497 questions from public data,

- ConflictNQ validation (``tuner import conflictnq``): 225 questions, their real passages, 1,125 fabricated passages
  as conflicts;
- CMRC 2018 trial (``tuner import squad``): all 256 paragraphs, 272 questions (the first of every paragraph, then a
  seeded sample), and conflicts made with the project's rules (``tuner.corruption``, every type and severity, then a
  seeded sample) until the index holds 2,452 documents: ConflictNQ's shape (one real passage, several stale or
  fabricated ones) in Chinese.

The study is ``studies/demo_zh.yaml`` on that corpus (offline backends, ``search_spaces/zh.yaml``: four chunk
configurations, three retrievers, the embedding-maxsim reranker; ``noise_floor: auto``; 40 trials), run cold (a fresh
``TUNER_CACHE``) in a subprocess per variant, so caches and memory are separate. Per variant: wall time, peak RSS,
texts embedded (chunks, sentences, questions, other: read from the variant's embedding store, one row per text
embedded), recall@k of the baseline trial and the front against the first variant.

Variants: ``before`` runs main's code (``--before PATH|REV``: a checkout of main or a revision; default: ``git archive`` of the
commit of main this branch started from, into the work folder), ``after`` this branch's last commit (``git archive HEAD``);
``--backend NAME`` sets the study file's ``embedding: {backend: NAME}``. ``--backends A,B`` runs HEAD once per backend
instead (side by side; a single backend runs alone, for the cold time on an otherwise idle machine).

``recall`` (after ``study --backends A,B``): recall@k of every complete configuration of A's study, computed again under
each of A, B: what a backend changes on the same configurations (the fronts of two studies differ also because the
sampler draws other trials once any value differs).

``grid`` (no embedding): how much of the chunk grid is shared text, per chunk configuration and over the grid.
``profile``: the cold run of this checkout under cProfile, the top functions by cumulative time.

Data: ConflictNQ (Apache-2.0, 4-en/ConflictNQ) and CMRC 2018 (CC BY-SA 4.0, Yiming Cui et al., EMNLP-IJCNLP 2019),
read from ``../shared/datasets``; the bench skips cleanly when either is absent.

``--scale F`` keeps a seeded share F of each source's questions with their documents and conflicts (the same shape,
smaller: for a loaded machine).

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/coldstart.py [--work DIR] [--scale F] [--backend NAME | --backends A,B]
[--before PATH|REV] [grid] [profile] [study] [recall]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tuner.cache import DiskCache
from tuner.chunking import chunk_dataset
from tuner.corruption import CORRUPTORS, corrupt_dataset, conflict_record
from tuner.dataset import Dataset, load_dataset, write_dataset
from tuner.dataset.importers import import_conflictnq, import_squad
from tuner.embedding import EmbeddingContext, EmbeddingOptions
from tuner.progress import SilentReporter
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.front import study_front
from tuner.study import load_study_file
from tuner.text import split_sentences

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = 2452
QUESTIONS = 497
TRIALS = 40
SEED = 0
SHARED = Path("shared") / "datasets"
CONFLICTNQ = SHARED / "conflictnq" / "conflict_nq_val.jsonl"
CMRC = SHARED / "cmrc2018" / "cmrc2018_trial.json"


def shared_file(relative: Path) -> Path:
    """The shared copy beside the repository, or in a folder above a worktree of it."""
    candidates = [folder / relative for folder in Path(__file__).resolve().parents[1:]]
    return next((path for path in candidates if path.is_file()), candidates[0])


def build_corpus(folder: Path, conflictnq: Path, cmrc: Path, scale: float = 1.0) -> Dataset:
    """The 2,452-document corpus (see the module docs), written once into ``folder``; ``scale`` < 1 keeps that share
    of each source's questions (a seeded sample), their documents and conflicts, and fills the CMRC conflicts up to
    that share of 2,452 documents: the same shape, smaller."""
    if (folder / "corpus.jsonl").is_file():
        return load_dataset(folder)
    rng = random.Random(SEED)
    nq = import_conflictnq(conflictnq)
    nq_golden = sorted(rng.sample(nq.golden, round(len(nq.golden) * scale)), key=nq.golden.index)
    nq_docs = {doc_id for case in nq_golden for doc_id in case["relevant_doc_ids"]}
    nq_conflicts = [c for c in nq.conflicts if c["conflicts_with"] in nq_docs]
    zh = import_squad(cmrc)
    zh_corpus = sorted(rng.sample(zh.corpus, round(len(zh.corpus) * scale)), key=zh.corpus.index)
    firsts: dict[str, dict[str, Any]] = {}
    for case in zh.golden:
        firsts.setdefault(case["relevant_doc_ids"][0], case)
    firsts = {doc["doc_id"]: firsts[doc["doc_id"]] for doc in zh_corpus if doc["doc_id"] in firsts}
    rest = [case for case in zh.golden if case["relevant_doc_ids"][0] in firsts and case not in firsts.values()]
    extra = rng.sample(rest, round(QUESTIONS * scale) - len(nq_golden) - len(firsts))
    golden_zh = [*firsts.values(), *sorted(extra, key=rest.index)]
    zh_only = write_dataset(folder.with_name(folder.name + "-cmrc"), zh_corpus, golden_zh, [], force=True)
    made = corrupt_dataset(zh_only, CORRUPTORS, ("subtle", "moderate", "obvious"), seed=SEED)
    nq_corpus = [doc for doc in nq.corpus if doc["doc_id"] in nq_docs]
    needed = round(DOCUMENTS * scale) - len(nq_corpus) - len(nq_conflicts) - len(zh_corpus)
    if not 0 <= needed <= len(made.conflicts):
        raise SystemExit(f"coldstart: the corruption rules made {len(made.conflicts)} CMRC conflicts, {needed} needed")
    chosen = rng.sample(range(len(made.conflicts)), needed)
    conflicts_zh = [conflict_record(made.conflicts[i]) for i in sorted(chosen)]
    return write_dataset(folder, [*nq_corpus, *zh_corpus], [*nq_golden, *golden_zh], [*nq_conflicts, *conflicts_zh])


def write_study(folder: Path, dataset: Dataset, backend: str | None) -> Path:
    """``studies/demo_zh.yaml`` on ``dataset``, writing its output under ``folder``."""
    spec = yaml.safe_load((ROOT / "studies" / "demo_zh.yaml").read_text("utf-8"))
    spec.update(name="coldstart", dataset=str(dataset.path), search_space=str(ROOT / "search_spaces" / "zh.yaml"),
                output=str(folder / "out"), budget={"trials": TRIALS})
    if backend is not None:
        spec["embedding"] = {"backend": backend}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "coldstart.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), "utf-8")
    return path


STAGES: dict[str, tuple[str, str, str]] = {
    "embedding model (all texts)": ("tuner.embedding", "SentenceTransformerEncoder", "encode"),
    "chunk tables": ("tuner.retrieval", "RetrievalPipeline", "table"),
    "first-stage candidates": ("tuner.retrieval", "RetrievalPipeline", "candidates"),
    "rerank scores": ("tuner.retrieval", "RetrievalPipeline", "rerank_scores"),
    "noise floor calibration": ("tuner.noisefloor", "", "calibrate"),
}
"""Stages timed in the child: wall seconds inside each callable, outermost calls only. They nest (candidates embed
chunks, calibration retrieves and answers), so they do not add up."""


def _time_stages(totals: dict[str, float]) -> None:
    """Wrap each callable of :data:`STAGES` so its wall time adds to ``totals`` (instrumentation of this bench only;
    ``tuner run`` imports ``calibrate`` when it calibrates, so the wrapped one is the one called)."""
    import functools
    import importlib

    for stage, (module, owner_name, name) in STAGES.items():
        owner: Any = importlib.import_module(module)
        owner = getattr(owner, owner_name) if owner_name else owner
        original = getattr(owner, name)
        depth = [0]

        @functools.wraps(original)
        def timed(*args: Any, _original: Any = original, _stage: str = stage, _depth: list[int] = depth, **kwargs: Any) -> Any:
            _depth[0] += 1
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                _depth[0] -= 1
                if _depth[0] == 0:
                    totals[_stage] += time.perf_counter() - start

        setattr(owner, name, timed)


def child(study_file: Path, profile: Path | None) -> int:
    """Inside the subprocess: ``tuner run`` the study (under cProfile with ``profile``, else with the stage timers),
    then print wall time, CPU time, peak RSS and the stage times as one JSON line."""
    from tuner.cli import main

    stages = dict.fromkeys(STAGES, 0.0)
    start = time.perf_counter()
    if profile is None:
        _time_stages(stages)
        code = main(["--quiet", "run", str(study_file)])
    else:
        import cProfile

        profiler = cProfile.Profile()
        code = profiler.runcall(main, ["--quiet", "run", str(study_file)])
        profiler.dump_stats(profile)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"code": code, "seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime,
                      "peak_mib": usage.ru_maxrss / 1024, "stages": stages}))
    return code


def start_variant(name: str, code: Path, dataset: Dataset, folder: Path, backend: str | None, profile: Path | None = None) -> dict[str, Any]:
    """Start the cold study with the code at ``code`` in a subprocess (its own cache and output under ``folder / name``)."""
    where = folder / name
    shutil.rmtree(where, ignore_errors=True)  # cold: no cache, no study left by an earlier run
    where.mkdir(parents=True)
    study_file = write_study(where, dataset, backend)
    env = {**os.environ, "TUNER_CACHE": str(where / "cache"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(code)}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", str(study_file)]
    if profile is not None:
        command += ["--profile", str(profile)]
    print(f"  {name}: running the cold study ({code})", file=sys.stderr, flush=True)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=code)
    return {"name": name, "process": process, "study_file": study_file, "cache": where / "cache", "backend": backend}


def finish_variant(run: dict[str, Any]) -> dict[str, Any]:
    """Wait for a started variant; add its wall time, CPU time and peak RSS."""
    out, err = run.pop("process").communicate()
    if not out.strip():
        raise SystemExit(f"coldstart: variant {run['name']} failed:\n{err[-3000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit(f"coldstart: variant {run['name']} failed:\n{err[-3000:]}")
    return {**run, **result}


def grid_settings(study_file: Path) -> list[RetrievalSettings]:
    """One settings object per chunk configuration of the study's search space (the rest at the base settings)."""
    loaded = load_study_file(study_file)
    space = yaml.safe_load(loaded.search_space_path.read_text("utf-8"))
    base = loaded.base_settings.model_dump()
    return [
        RetrievalSettings(**{**base, "chunk_unit": unit, "chunk_size": size, "chunk_overlap": overlap})
        for unit in space["chunk_unit"]["choices"]
        for size in space["chunk_size"]["choices"]
        for overlap in space["chunk_overlap"]["choices"]
    ]


def grid_texts(dataset: Dataset, grid: list[RetrievalSettings]) -> dict[str, list[set[str]]]:
    """Per chunk configuration: its distinct chunk passages, and the sentences of those passages."""
    texts: dict[str, list[set[str]]] = {"chunks": [], "sentences": []}
    for settings in grid:
        passages = {chunk.passage for chunk in chunk_dataset(dataset, settings.chunking)}
        texts["chunks"].append(passages)
        texts["sentences"].append({s for p in passages for s in split_sentences(p) or [p]})
    return texts


def texts_embedded(run: dict[str, Any], dataset: Dataset, grid: list[RetrievalSettings]) -> Counter[str]:
    """Texts in the variant's embedding store (one row per text embedded), by kind: chunk passages of the grid,
    sentences of those passages, golden questions, other. A text that is both is counted once, as the first."""
    settings = grid[0]
    embeddings = EmbeddingContext(EmbeddingOptions(backend=run["backend"] or "torch"))  # int8 vectors are stored under their own id
    encoder = embeddings.encoder(settings.embedding_model, run["cache"])
    texts = grid_texts(dataset, grid)
    kinds = {
        "chunks": (set().union(*texts["chunks"]), settings.document_prompt),
        "sentences": (set().union(*texts["sentences"]), settings.document_prompt),
        "questions": ({case.question for case in dataset.golden}, settings.query_prompt),
    }
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    for kind, (pool, prompt) in kinds.items():
        pool = pool - seen
        stored = pool - set(encoder.with_prompt(prompt).missing(sorted(pool)))
        counts[kind] = len(stored)
        seen |= pool
    counts["total"] = stored_rows(run["cache"])
    counts["other"] = counts["total"] - counts["chunks"] - counts["sentences"] - counts["questions"]
    return counts


def stored_rows(cache: Path) -> int:
    """Rows of the embedding store of ``cache``: each is one text embedded (a cold run embeds a text once)."""
    path = cache / "embeddings.sqlite"
    if not path.is_file():
        return 0
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])


def grid(dataset: Dataset, folder: Path) -> list[str]:
    """How much of the chunk grid is shared text (no embedding)."""
    settings = grid_settings(write_study(folder, dataset, None))
    texts = grid_texts(dataset, settings)
    lines = [f"{'chunk configuration':<28} {'chunks':>7} {'sentences':>9}"]
    for config, chunks, sentences in zip(settings, texts["chunks"], texts["sentences"]):
        label = f"{config.chunk_size} {config.chunk_unit}, overlap {config.chunk_overlap:g}"
        lines.append(f"{label:<28} {len(chunks):>7} {len(sentences):>9}")
    for kind in ("chunks", "sentences"):
        total = sum(map(len, texts[kind]))
        union = len(set().union(*texts[kind]))
        lines.append(f"{kind}: {total} over the grid, {union} distinct: {1 - union / total:.1%} shared "
                     f"(embedded once per text: {total / union:.2f}x fewer than per configuration)")
    whole = {doc.text for doc in dataset.corpus} | {doc.text for doc in dataset.conflicts}
    one_chunk = [sum(any(p.endswith(text) for p in chunks) for text in whole) for chunks in texts["chunks"]]
    lines.append(f"documents that are one chunk, per configuration: {one_chunk} of {len(whole)}")
    return lines + rerank_reach(dataset, folder, settings[-1])


def reachable(first_stage: np.ndarray, strength: float, top_k: int) -> int:
    """How many of one question's candidates (first-stage scores in [0, 1], best first) can still reach the top
    ``top_k`` after blending with any rerank scores in [0, 1] at ``strength`` s.

    A candidate's blended score is at most (1 − s)·f_i + s and any other's at least (1 − s)·f_j, so candidate i is
    out for sure when at least ``top_k`` others have (1 − s)·f_j > (1 − s)·f_i + s, i.e. f_j − f_i > s / (1 − s).
    First-stage scores lie in [0, 1], so nothing is ever out for s ≥ 0.5.
    """
    if strength >= 1.0:
        return len(first_stage)
    gap = strength / (1.0 - strength)
    beaten_by = [(first_stage - f > gap).sum() for f in first_stage]
    return sum(count < top_k for count in beaten_by)


def rerank_reach(dataset: Dataset, folder: Path, settings: RetrievalSettings) -> list[str]:
    """How many first-stage candidates (bm25, index view ``all``) could skip reranking, by the exact bound of
    :func:`reachable`, at the space's largest top_k and each rerank strength."""
    space = yaml.safe_load((ROOT / "search_spaces" / "zh.yaml").read_text("utf-8"))
    top_k = int(space["top_k"]["high"])
    bm25 = settings.model_copy(update={"retriever": "bm25"})
    candidates = RetrievalPipeline(dataset, cache=DiskCache(folder / "cache"), reporter=SilentReporter()).candidates(bm25, "all")
    total = int((candidates.indices >= 0).sum())
    lines = [f"first-stage candidates at candidate_depth {settings.candidate_depth}: {total}; reachable within top_k {top_k}:"]
    step = float(space["rerank_strength"]["step"])
    for strength in np.arange(step, float(space["rerank_strength"]["high"]) + step / 2, step):
        reach = sum(reachable(row[valid], float(strength), top_k)
                    for row, valid in zip(candidates.scores, candidates.indices >= 0))
        lines.append(f"  rerank_strength {strength:.2f}: {reach} ({reach / total:.1%})")
    return lines


def merge_base() -> str:
    """The commit of main this checkout branched from: what "before" measures."""
    command = ["git", "-C", str(ROOT), "merge-base", "main", "HEAD"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def checkout(folder: Path, revision: str) -> Path:
    """``git archive`` of ``revision`` of this repository, unpacked into ``folder / <commit>`` (once): a variant runs
    a fixed commit, not a working tree that may change while it runs."""
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", revision], capture_output=True, text=True, check=True).stdout.strip()
    target = folder / commit[:10]
    if not (target / "tuner").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run([*git, "archive", commit], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def profile(dataset: Dataset, folder: Path, backend: str | None) -> list[str]:
    """The cold run of this checkout under cProfile: the top functions by cumulative time."""
    import pstats

    stats_file = folder / "coldstart.prof"
    run = finish_variant(start_variant("profile", ROOT, dataset, folder, backend, stats_file))
    lines = [f"cold run under cProfile: {run['seconds']:.0f} s, peak {run['peak_mib']:.0f} MiB; top by cumulative time:"]
    stats = pstats.Stats(str(stats_file))
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][3])  # type: ignore[attr-defined]
    for (file, line, function), (_, calls, _, cumulative, _) in rows[:60]:
        where = file.replace(str(ROOT) + "/", "")
        lines.append(f"  {cumulative:8.1f} s  {calls:>9}  {where}:{line} {function}")
    return lines


def front_of(study_file: Path) -> dict[str, dict[str, float]]:
    """The study's front: its trials' parameters (as text) -> objective values."""
    from tuner.study import load_study

    _, _, entries = study_front(load_study(load_study_file(study_file)))
    return {json.dumps(entry.params, sort_keys=True): dict(entry.values) for entry in entries}


def trial_times(study_file: Path) -> dict[str, float]:
    """recall@k of trial 0 (the first enqueued configuration: the one the noise floor is measured on), its seconds,
    and the seconds of all trials (each trial's start to its end, as the storage records them)."""
    from tuner.study import load_study

    trials = load_study(load_study_file(study_file)).trials
    seconds = [(t.datetime_complete - t.datetime_start).total_seconds() for t in trials
               if t.datetime_start is not None and t.datetime_complete is not None]
    return {"recall": float(trials[0].values[0]), "trial 0": seconds[0], "trials": sum(seconds), "n": len(trials)}


def front_change(front: dict[str, dict[str, float]], reference: dict[str, dict[str, float]]) -> str:
    """Configurations gained and lost on the front, and the largest change of an objective on the common ones."""
    common = front.keys() & reference.keys()
    largest = max((abs(front[c][name] - reference[c][name]) for c in common for name in front[c]), default=0.0)
    return f"+{len(front.keys() - reference.keys())}/-{len(reference.keys() - front.keys())}, max |Δ| {largest:.3g}"


def study(dataset: Dataset, folder: Path, variants: list[tuple[str, Path, str | None]]) -> list[str]:
    """The cold study of each variant (name, code, backend), each in its own subprocess, all at once so they see the
    same machine load; the first is the reference of the ratios and the front comparison."""
    settings = grid_settings(write_study(folder / "grid", dataset, None))
    started = [start_variant(name, code, dataset, folder, backend) for name, code, backend in variants]
    runs = []
    for run in map(finish_variant, started):
        run["texts"] = texts_embedded(run, dataset, settings)
        run["front"] = front_of(run["study_file"])
        run["trials"] = trial_times(run["study_file"])
        runs.append(run)
    reference = runs[0]
    lines = [f"{TRIALS} trials, cold cache, {len(runs)} variant(s) at once (the same machine load); "
             f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}",
             f"{'variant':<8} {'wall s':>7} {'CPU s':>7} {'CPU ratio':>9} {'peak MiB':>8} {'chunks':>7} {'sentences':>9} "
             f"{'questions':>9} {'other':>6} {'recall@k #0':>11}  front vs {reference['name']}"]
    for run in runs:
        texts = run["texts"]
        lines.append(f"{run['name']:<8} {run['seconds']:>7.0f} {run['cpu']:>7.0f} {run['cpu'] / reference['cpu']:>9.2f} "
                     f"{run['peak_mib']:>8.0f} {texts['chunks']:>7} {texts['sentences']:>9} {texts['questions']:>9} "
                     f"{texts['other']:>6} {run['trials']['recall']:>11.3f}  {front_change(run['front'], reference['front'])}")
    for run in runs:
        points = sorted(run["front"].values(), key=lambda values: tuple(-v for v in values.values()))
        lines.append(f"front of {run['name']}: " + "; ".join(
            ", ".join(f"{name} {value:.3f}" for name, value in values.items()) for values in points))
    width = max(9, *(len(run["name"]) + 1 for run in runs))
    lines.append(f"{'stage (wall s, nested)':<30}" + "".join(f"{run['name']:>{width}}" for run in runs))
    for stage in STAGES:
        lines.append(f"{stage:<30}" + "".join(f"{run['stages'][stage]:>{width}.1f}" for run in runs))
    for label in ("trial 0", "trials"):
        lines.append(f"{label + ' (storage times)':<30}" + "".join(f"{run['trials'][label]:>{width}.1f}" for run in runs))
    return lines

def recall_check(dataset: Dataset, folder: Path, reference: Path, backends: list[str]) -> list[str]:
    """recall@k (exact, deterministic) of every complete trial's configuration of the study in ``reference`` (a variant
    folder of ``study``), computed again under each backend with its own cache: what a backend changes on the same
    configurations, whatever trials the sampler drew with it. The cache of each backend's own study (``after-<backend>``
    beside ``reference``) is reused when there is one."""
    from tuner.evaluation import evaluate_retrieval
    from tuner.settings import settings_from_mapping
    from tuner.study import load_study

    loaded = load_study_file(reference / "coldstart.yaml")
    base = loaded.base_settings.model_dump()
    trials = [t for t in load_study(loaded).trials if t.state.name == "COMPLETE"]
    configurations = [settings_from_mapping({**base, **t.params}, "trial") for t in trials]
    recalls: dict[str, list[float]] = {}
    for backend in backends:
        variant = folder / f"after-{backend}"  # the cache of that backend's own study, when there is one
        own = variant / "cache" if variant.is_dir() and read_backend(variant) == backend else folder / f"recall-{backend}"
        pipeline = RetrievalPipeline(dataset, DiskCache(own), embeddings=EmbeddingContext(EmbeddingOptions(backend=backend)))
        recalls[backend] = [float(evaluate_retrieval(pipeline, settings, ci=False).overall["recall_at_k"].value or 0.0)
                            for settings in configurations]
        print(f"  recall under {backend}: {len(configurations)} configurations", file=sys.stderr, flush=True)
    first = backends[0]
    lines = [f"recall@k of the {len(configurations)} complete configurations of {reference.name}, per backend "
             f"(n = {len(dataset.golden)} questions each; differences against {first}):"]
    for backend in backends:
        diffs = np.array(recalls[backend]) - np.array(recalls[first])
        lines.append(f"  {backend:<10} mean {np.mean(recalls[backend]):.4f}  changed {int((diffs != 0).sum())} of "
                     f"{len(diffs)}  max |Δ| {np.abs(diffs).max():.4f}  mean Δ {diffs.mean():+.4f}")
    return lines


def read_backend(variant: Path) -> str:
    """The embedding backend a variant's study file sets (torch when it sets none)."""
    document = yaml.safe_load((variant / "coldstart.yaml").read_text("utf-8"))
    return str((document.get("embedding") or {}).get("backend", "torch"))


PARTS = ("grid", "profile", "study", "recall")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"what to run: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--work", type=Path, help="keep the corpus and the runs here (default: a temporary folder)")
    parser.add_argument("--backend", help="the study file's embedding: {backend: NAME} (default: the study's default)")
    parser.add_argument("--scale", type=float, default=1.0, help="a share of the corpus and questions, same shape (default 1)")
    parser.add_argument("--before", help="the code of 'before': a checkout folder or a git revision "
                        "(default: the commit of main this branch started from)")
    parser.add_argument("--backends", help="instead of before/after: this checkout's HEAD once per backend, comma-separated "
                        "(e.g. torch,onnx-int8; the first is the reference; one backend runs alone)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--profile", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        return child(args.child, args.profile)
    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    sources = (shared_file(CONFLICTNQ), shared_file(CMRC))
    absent = [str(path) for path in sources if not path.is_file()]
    if absent:
        print(f"coldstart: {', '.join(absent)} not found; nothing to measure (the data is not shipped with tuner)",
              file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = (args.work or Path(scratch)).resolve()
        dataset = build_corpus(folder / ("corpus" if args.scale == 1 else f"corpus-{args.scale:g}"), *sources, args.scale)
        runs = folder if args.scale == 1 else folder / f"runs-{args.scale:g}"  # variants of each scale apart
        print(f"corpus: {dataset.summary()}")
        for part in args.parts or PARTS:
            print(f"\n[{part}]")
            if part == "grid":
                lines = grid(dataset, folder / "grid")
            elif part == "profile":
                lines = profile(dataset, folder, args.backend)
            elif part == "recall":
                reference = runs / f"after-{(args.backends or 'torch').split(',')[0]}"
                lines = recall_check(dataset, runs, reference, (args.backends or "torch,onnx-int8").split(","))
            else:
                head = checkout(folder, "HEAD")
                if args.backends:
                    variants = [(f"after-{name}", head, name) for name in args.backends.split(",")]
                else:
                    given = args.before or merge_base()
                    before = Path(given) if Path(given).is_dir() else checkout(folder, given)
                    variants = [("before", before, args.backend), ("after", head, args.backend)]
                lines = study(dataset, runs, variants)
            print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
