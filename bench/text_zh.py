"""Chinese text analysis on CMRC 2018: segmenter choice, BM25 at 100k chunks, chunk lengths.

    HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python bench/text_zh.py [--cmrc PATH] [--chunks 100000]

Prints Markdown for bench/HISTORY.md:

(a) segmenters (jieba, rjieba): tokens/s of ``tuner.text.bm25_tokens`` over all 256 CMRC trial paragraphs and
    1,002 questions, and recall@1/5/10 of tuner's BM25 (the retrieval pipeline, one chunk per paragraph), next
    to the English-only tokenizer tuner had before the text layer;
(b) BM25 build and query time on a synthetic 100k-chunk Chinese corpus: each chunk is 2–5 sentences sampled
    (seeded) from the CMRC paragraphs, so the vocabulary is real but the chunks are not documents of CMRC;
(c) chunk lengths of a 5,000-character Chinese document (CMRC paragraphs joined) per unit and size.

The CMRC dataset folder is written to a temporary directory (never into the repository); the CMRC data
itself is read from ``--cmrc`` (default: the shared copy).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

import tuner.text._segment as segment_module
from tuner.cache import DiskCache
from tuner.chunking import char_units, chunk_spans, token_units
from tuner.dataset import Dataset, Document, write_dataset
from tuner.dataset.importers import import_squad
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.text import bm25_tokens, split_sentences

CMRC = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "cmrc2018" / "cmrc2018_trial.json"
WHOLE_PARAGRAPH = RetrievalSettings(retriever="bm25", chunk_unit="chars", chunk_size=5000, candidate_depth=10, top_k=10)


def recall_at(pipeline: RetrievalPipeline, settings: RetrievalSettings) -> dict[int, float]:
    """Document-level recall@k of the first stage, k = 1, 5, 10 (each question has one relevant paragraph)."""
    table = pipeline.table(settings)
    candidates = pipeline.candidates(settings)
    ranks = []
    for row, case in enumerate(pipeline.dataset.golden):
        docs = list(dict.fromkeys(table.chunks[i].doc_id for i in candidates.indices[row] if i >= 0))
        ranks.append(docs.index(case.relevant_doc_ids[0]) + 1 if case.relevant_doc_ids[0] in docs else 99)
    return {k: float(np.mean([r <= k for r in ranks])) for k in (1, 5, 10)}


def old_english_recall(dataset: Dataset) -> dict[int, float]:
    """Recall@k of BM25 with tuner's tokenizer before the text layer (ASCII alphanumeric runs only)."""
    stop = frozenset(STOPWORDS_EN)

    def tokens(text: str) -> list[str]:
        return [t for t in re.findall(r"[a-z0-9]+(?:[.,][0-9]+)*", text.lower()) if t not in stop] or ["\x00"]

    index = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    index.index([tokens(f"{d.title}\n{d.text}") for d in dataset.corpus], show_progress=False)
    doc_ids = [d.doc_id for d in dataset.corpus]
    ranks = []
    for case in dataset.golden:
        scores = np.asarray(index.get_scores(tokens(case.question)))
        order = [doc_ids[i] for i in np.lexsort((np.arange(len(scores)), -scores))]
        ranks.append(order.index(case.relevant_doc_ids[0]) + 1)
    return {k: float(np.mean([r <= k for r in ranks])) for k in (1, 5, 10)}


def segmenter_rows(dataset: Dataset, cache_root: Path) -> list[str]:
    texts = [f"{d.title}\n{d.text}" for d in dataset.corpus] + [c.question for c in dataset.golden]
    rows = []
    for name in ("jieba", "rjieba"):
        segment_module.SEGMENTER = name
        segment_module.segmenter(name)  # dictionary load is once per process: not timed
        start = time.perf_counter()
        count = sum(len(bm25_tokens(t)) for t in texts)
        seconds = time.perf_counter() - start
        pipeline = RetrievalPipeline(dataset, DiskCache(cache_root / name))
        recall = recall_at(pipeline, WHOLE_PARAGRAPH)
        rows.append(
            f"| {name} | {count:,} | {seconds:.2f} s | {count / seconds:,.0f} | "
            f"{sum(map(len, texts)) / seconds:,.0f} | {recall[1]:.3f} | {recall[5]:.3f} | {recall[10]:.3f} |"
        )
    segment_module.SEGMENTER = "rjieba"
    old = old_english_recall(dataset)
    rows.append(f"| before (ASCII runs only) | | | | | {old[1]:.3f} | {old[5]:.3f} | {old[10]:.3f} |")
    return rows


def synthetic_corpus(dataset: Dataset, n_chunks: int, seed: int = 0) -> Dataset:
    sentences = [s for d in dataset.corpus for s in split_sentences(d.text)]
    rng = random.Random(seed)
    docs = tuple(Document(f"s{i}", "".join(rng.choices(sentences, k=rng.randint(2, 5)))) for i in range(n_chunks))
    return Dataset(
        Path("cmrc-synthetic"), docs, dataset.golden[:0], content_hash=f"cmrc-synthetic-{n_chunks}-{seed}", language="zh"
    )


def bm25_at_scale(dataset: Dataset, n_chunks: int, cache_root: Path) -> list[str]:
    synthetic = synthetic_corpus(dataset, n_chunks)
    chars = sum(len(d.text) for d in synthetic.corpus)
    questions = [c.question for c in dataset.golden]
    query_set = Dataset(synthetic.path, synthetic.corpus, dataset.golden, content_hash=synthetic.content_hash, language="zh")
    pipeline = RetrievalPipeline(query_set, DiskCache(cache_root / "scale"))
    settings = RetrievalSettings(retriever="bm25", chunk_unit="chars", chunk_size=1000, candidate_depth=50)
    start = time.perf_counter()
    table = pipeline.table(settings)
    chunk_s = time.perf_counter() - start
    start = time.perf_counter()
    tokens = [bm25_tokens(p) for p in table.passages]
    token_s = time.perf_counter() - start
    start = time.perf_counter()
    retriever = pipeline.retriever(settings)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    retriever.search(questions, 50, None)
    query_s = time.perf_counter() - start
    return [
        f"- corpus: {len(table):,} chunks, {chars:,} characters, {sum(map(len, tokens)):,} BM25 tokens "
        f"(2–5 sentences sampled with seed 0 from the {len(dataset.corpus)} CMRC paragraphs)",
        f"- chunk table (one chunk per synthetic document): {chunk_s:.1f} s",
        f"- BM25 build, cold (segment every chunk + bm25s index + save): {build_s:.1f} s; "
        f"of which segmentation alone ≈ {token_s:.1f} s ({chars / token_s:,.0f} chars/s)",
        f"- queries: {len(questions):,} CMRC questions, top 50 each (tuner's normalized scores): {query_s:.1f} s, "
        f"{1000 * query_s / len(questions):.1f} ms per query",
    ]


def chunk_length_rows(dataset: Dataset) -> list[str]:
    text = ""
    for doc in dataset.corpus:
        if len(text) >= 5000:
            break
        text += doc.text
    text = text[: max(i + 1 for i, ch in enumerate(text[:5000]) if ch in "。！？")]
    tokens = token_units("all-MiniLM-L6-v2")
    rows = []
    for unit, measure in (("chars", char_units), ("tokens", tokens)):
        for size in (128, 256, 512):
            spans = chunk_spans(text, measure, size, 0.0, snap=True)
            lengths = [len(measure(text[s:e])) for s, e in spans]
            ends = sum(text[e - 1] in "。！？；”」" for _, e in spans[:-1]) / max(len(spans) - 1, 1)
            median = statistics.median(lengths)
            rows.append(
                f"| {unit} | {size} | {len(spans)} | {median:g} | {median / size - 1:+.1%} | {max(lengths)} | {ends:.0%} |"
            )
    header = [
        f"document: {len(text):,} characters (CMRC paragraphs joined, cut at the last sentence end before 5,000)",
        "",
        "| unit | chunk_size | chunks | median length | vs size | max | chunks ending a sentence |",
        "|---|---|---|---|---|---|---|",
    ]
    return header + rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cmrc", type=Path, default=CMRC)
    parser.add_argument("--chunks", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tuner-text-zh-") as tmp:
        imported = import_squad(args.cmrc)  # paragraphs are documents, each question's paragraph is relevant
        dataset = write_dataset(Path(tmp) / "cmrc2018", imported.corpus, imported.golden, imported.conflicts)
        print(
            f"- machine: {platform.processor() or platform.machine()}; nproc {os.cpu_count()}; Python {platform.python_version()}"
        )
        print(f"- dataset: CMRC 2018 trial, {dataset.summary()}; language {dataset.language}\n")
        print("(a) segmenters\n")
        print("| segmenter | BM25 tokens | time | tokens/s | chars/s | recall@1 | recall@5 | recall@10 |")
        print("|---|---|---|---|---|---|---|---|")
        print("\n".join(segmenter_rows(dataset, Path(tmp) / "cache")))
        print(f"\n(b) BM25 at {args.chunks:,} chunks (rjieba)\n")
        print("\n".join(bm25_at_scale(dataset, args.chunks, Path(tmp) / "cache")))
        print("\n(c) chunk lengths, sentence snapping on, overlap 0\n")
        print("\n".join(chunk_length_rows(dataset)))


if __name__ == "__main__":
    main()
