"""BM25 at scale (issue 31 §4): index + top-30 for 1,000 questions at 10k, 100k and 1M chunks, before and after.

Parts:

- ``scale``: for each language (``en``, ``zh``) and corpus size, a synthetic corpus of chunks drawn from the word
  frequencies of the demo generators' documents (``tuner.dataset.demo``, both languages) plus, when present, the
  public texts in the shared folder (ConflictNQ passages for English, CMRC 2018 paragraphs for Chinese), with two
  model-number-like codes per chunk drawn from a Zipf law over a million codes so the vocabulary grows with the
  corpus as real ones do. Questions are 8 words of a random chunk. Each run is a child process, so its peak RSS
  and CPU time (``resource.getrusage``) are its own: ``new`` is tuner's ``BM25Retriever`` (build through the disk cache, then
  ``search``); ``old`` is the code before issue 31, kept here only: bm25s indexed from token strings, a full
  queries × chunks score matrix, a full sort per row. ``old`` runs up to ``--old-max`` chunks (its score matrix is
  4 bytes × questions × chunks: 4 GB at 1M). The figures say whether the two paths returned the same candidates.
- ``parity``: CMRC 2018 trial through ``tuner eval --retriever bm25`` (bench/cmrc.py's ``tuner_recall``):
  recall@1/5/10 to every digit, and the candidate arrays of both paths compared byte for byte. Run it again with
  ``PYTHONPATH`` on a checkout before issue 31 to compare the recall figures across versions.

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/bm25_scale.py [scale] [parity] [--sizes 10000 100000 1000000]
     [--languages en zh] [--questions 1000] [--depth 30] [--old-max 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from tuner.cache import DiskCache
from tuner.dataset.demo import demo_records
from tuner.retrieval import BM25Retriever
from tuner.text import bm25_tokens, segment

ROOT = Path(__file__).resolve().parent.parent
SHARED = [folder / "shared" / "datasets" for folder in ROOT.parents]
WORDS_PER_CHUNK = 60
QUESTION_WORDS = 8
CODES = 1_000_000
PARTS = ("scale", "parity")


def shared_file(relative: str) -> Path | None:
    return next((folder / relative for folder in SHARED if (folder / relative).is_file()), None)


def source_texts(language: str) -> tuple[list[str], list[str]]:
    """Texts whose word frequencies the synthetic corpus follows, and the names of their sources."""
    corpus, _, conflicts = demo_records(0, language)
    texts = [r["text"] for r in corpus + conflicts]
    sources = [f"demo-{language}"]
    if language == "en" and (path := shared_file("conflictnq/conflict_nq_val.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            texts += [p["passage"] for key in ("real_passages", "fake_passages") for p in record.get(key, [])]
        sources.append("ConflictNQ val passages")
    if language == "zh" and (path := shared_file("cmrc2018/cmrc2018_trial.json")):
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
        texts += [p["context"] for article in data for p in article["paragraphs"]]
        sources.append("CMRC 2018 trial paragraphs")
    return texts, sources


def synthetic_corpus(language: str, n_chunks: int, n_questions: int, seed: int = 0) -> tuple[list[str], list[str], str]:
    """``n_chunks`` passages of ``WORDS_PER_CHUNK`` words drawn by frequency, questions of ``QUESTION_WORDS`` words of
    a random passage each, and the sources' names."""
    texts, sources = source_texts(language)
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(text.split() if language == "en" else segment(text))
    words = np.array(list(counts), dtype=object)
    p = np.array(list(counts.values()), dtype=np.float64)
    rng = np.random.default_rng(seed)
    drawn = rng.choice(len(words), size=(n_chunks, WORDS_PER_CHUNK), p=p / p.sum())
    codes = np.minimum(rng.zipf(1.3, size=(n_chunks, 2)), CODES)
    glue = " " if language == "en" else ""
    passages = [glue.join(words[row]) + f" X{a} K{b}" for row, (a, b) in zip(drawn, codes, strict=True)]
    picked = rng.integers(0, n_chunks, n_questions)
    questions = [glue.join(rng.choice(words[drawn[i]], QUESTION_WORDS, replace=False)) for i in picked]
    return passages, questions, " + ".join(sources)


class Passages:
    """What ``BM25Retriever.build`` reads of a chunk table: the passages and the table's cache key."""

    def __init__(self, passages: list[str], key: str) -> None:
        self.passages = passages
        self.key = key

    def __len__(self) -> int:
        return len(self.passages)


def old_build(passages: list[str], folder: Path) -> bm25s.BM25:
    """The index before issue 31: bm25s from the corpus's token strings, saved and loaded as the cache does."""
    index = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    index.index([bm25_tokens(p) or ["\x00"] for p in passages], show_progress=False)
    index.save(str(folder))
    return bm25s.BM25.load(str(folder))


def old_search(index: bm25s.BM25, n: int, queries: list[str], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The search before issue 31: every query's normalized scores over the whole corpus in one matrix, then a full
    lexsort per row (ties by chunk index)."""
    doc_freq = np.diff(np.asarray(index.scores["indptr"]))
    idf = {t: np.log(1.0 + (n - doc_freq[i] + 0.5) / (doc_freq[i] + 0.5)) for t, i in index.vocab_dict.items()
           if i < len(doc_freq) and doc_freq[i] > 0}

    def normalized(query: str) -> np.ndarray:
        terms = [t for t in dict.fromkeys(bm25_tokens(query)) if t in idf]
        if not terms:
            return np.zeros(n, dtype=np.float32)
        return (np.asarray(index.get_scores(terms), dtype=np.float32) / sum(float(idf[t]) for t in terms)).clip(0.0, 1.0)

    scores = np.stack([normalized(q) for q in queries])
    indices = np.full((len(queries), depth), -1, dtype=np.int64)
    values = np.zeros((len(queries), depth), dtype=np.float32)
    for row in range(len(queries)):
        order = np.lexsort((np.arange(n), -scores[row]))[: min(depth, n)]
        indices[row, : len(order)] = order
        values[row, : len(order)] = scores[row, order]
    return indices, values


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    """CPU seconds this process used: on a machine other work loads, closer than wall time to what an idle one takes."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_run(language: str, n_chunks: int, n_questions: int, depth: int, path: str, out: Path) -> dict[str, Any]:
    """One path on one corpus in this process; writes the candidates to ``out`` for the comparison."""
    start = time.perf_counter()
    passages, questions, sources = synthetic_corpus(language, n_chunks, n_questions)
    generated, rss_corpus = time.perf_counter() - start, rss_mb()
    with tempfile.TemporaryDirectory() as folder:
        start, cpu = time.perf_counter(), cpu_s()
        if path == "new":
            retriever = BM25Retriever.build(Passages(passages, f"bench-{language}-{n_chunks}"), DiskCache(folder))  # type: ignore[arg-type]
        else:
            index = old_build(passages, Path(folder))
        indexed, indexed_cpu = time.perf_counter() - start, cpu_s() - cpu
        start, cpu = time.perf_counter(), cpu_s()
        if path == "new":
            hits = retriever.search(questions, depth, None)
            indices, scores = hits.indices, hits.scores
        else:
            indices, scores = old_search(index, n_chunks, questions, depth)
        retrieved, retrieved_cpu = time.perf_counter() - start, cpu_s() - cpu
    np.savez(out, indices=indices, scores=scores)
    return {"generate_s": generated, "index_s": indexed, "retrieve_s": retrieved, "index_cpu_s": indexed_cpu,
            "retrieve_cpu_s": retrieved_cpu, "rss_corpus_mb": rss_corpus,
            "peak_rss_mb": rss_mb(), "sources": sources}


def scale(sizes: list[int], languages: list[str], n_questions: int, depth: int, old_max: int) -> list[str]:
    lines = [f"{'lang':<4} {'chunks':>9} {'path':<4} {'index s':>8} {'retrieve s':>10} {'total s':>8} {'total CPU s':>11} "
             f"{'peak RSS MB':>11} {'corpus RSS MB':>13}  same candidates"]
    print(lines[0], flush=True)
    for language in languages:
        for n in sizes:
            runs = {}
            with tempfile.TemporaryDirectory() as folder:
                for path in ("old", "new") if n <= old_max else ("new",):
                    out = Path(folder) / f"{path}.npz"
                    done = subprocess.run([sys.executable, __file__, "--one", language, str(n), str(n_questions), str(depth),
                                           path, str(out)], capture_output=True, text=True)
                    if done.returncode != 0:
                        lines.append(f"{language:<4} {n:>9} {path:<4} failed (exit {done.returncode}): "
                                     f"{done.stderr.strip().splitlines()[-1:]}")
                        print(lines[-1], flush=True)
                        continue
                    runs[path] = json.loads(done.stdout.strip().splitlines()[-1])
                    runs[path]["arrays"] = dict(np.load(out))
            same = ""
            if len(runs) == 2:
                old, new = runs["old"]["arrays"], runs["new"]["arrays"]
                same = "yes" if all(old[k].tobytes() == new[k].tobytes() for k in ("indices", "scores")) else "NO"
            for path, run in runs.items():
                lines.append(f"{language:<4} {n:>9} {path:<4} {run['index_s']:8.1f} {run['retrieve_s']:10.1f} "
                             f"{run['index_s'] + run['retrieve_s']:8.1f} {run['index_cpu_s'] + run['retrieve_cpu_s']:11.1f} "
                             f"{run['peak_rss_mb']:11.0f} "
                             f"{run['rss_corpus_mb']:13.0f}  {same}")
            if runs:
                sources = next(iter(runs.values()))["sources"]
                lines.append(f"     ({n_questions} questions, depth {depth}; text from {sources})")
            print("\n".join(lines[-len(runs) - 1 :]), flush=True)
    return lines


def parity(depth: int) -> list[str]:
    """recall@1/5/10 of ``tuner eval --retriever bm25`` on CMRC 2018 trial, and both paths' candidates compared."""
    path = shared_file("cmrc2018/cmrc2018_trial.json")
    if path is None:
        return ["parity: cmrc2018_trial.json not found in the shared folder; skipped"]
    sys.path.insert(0, str(ROOT / "bench"))
    from cmrc import tuner_recall

    from tuner.dataset import write_dataset
    from tuner.dataset.importers import import_squad
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import RetrievalSettings

    with tempfile.TemporaryDirectory() as folder:
        os.environ["TUNER_CACHE"] = str(Path(folder) / "cache")  # cold: no candidates cached by another version
        result = import_squad(path)
        dataset = write_dataset(Path(folder) / "cmrc", result.corpus, result.golden, result.conflicts)
        recall = tuner_recall(dataset, "bm25")
        lines = ["CMRC 2018 trial, tuner eval --retriever bm25: " + ", ".join(f"recall@{k} {v!r}" for k, v in recall.items())]
        pipeline = RetrievalPipeline(dataset, cache=DiskCache(Path(folder) / "cache"))
        settings = RetrievalSettings(retriever="bm25", candidate_depth=depth)
        table = pipeline.table(settings)
        queries = list(pipeline.queries)
        retriever = BM25Retriever.build(table, pipeline.cache)
        hits = retriever.search(queries, depth, None)
        index = old_build(table.passages, Path(folder) / "old-index")
        indices, scores = old_search(index, len(table), queries, depth)
        same = hits.indices.tobytes() == indices.tobytes() and hits.scores.tobytes() == scores.tobytes()
        lines.append(f"candidates of {len(queries)} questions x depth {depth} over {len(table)} chunks, this path vs the "
                     f"path before issue 31: {'identical, byte for byte' if same else 'DIFFERENT'}")
    return lines


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        language, n, n_questions, depth, path, out = sys.argv[2:8]
        print(json.dumps(one_run(language, int(n), int(n_questions), int(depth), path, Path(out))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"what to run: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000], help="corpus sizes in chunks")
    parser.add_argument("--languages", nargs="+", choices=["en", "zh"], default=["en", "zh"])
    parser.add_argument("--questions", type=int, default=1000, help="questions per corpus (default 1000)")
    parser.add_argument("--depth", type=int, default=30, help="candidates per question (default 30)")
    parser.add_argument("--old-max", type=int, default=100_000, help="largest corpus the old path runs on (default 100000)")
    args = parser.parse_args()
    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    for part in args.parts or list(PARTS):
        print(f"\n[{part}]", flush=True)
        lines = (scale(args.sizes, args.languages, args.questions, args.depth, args.old_max) if part == "scale"
                 else parity(args.depth))
        if part == "parity":
            print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
