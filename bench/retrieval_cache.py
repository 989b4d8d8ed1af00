"""Retrieval build and cache benchmark (issue: foundation §8).

1. Demo dataset: cold build (chunks, embeddings, BM25 + FAISS indexes, candidates, rerank scores)
   of one hybrid configuration, then the same evaluation warm from disk in a new pipeline, then a
   change of only top_k / relevance_threshold / rerank_strength in the warm pipeline.
2. Synthetic 100k-chunk corpus: BM25 (bm25s) index + candidate build for 200 queries, and FAISS
   flat / HNSW index build + filtered search over 100k vectors, with peak memory. Embedding 100k
   chunks is extrapolated from the measured encoder throughput (it would take tens of minutes here).

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/retrieval_cache.py
"""

from __future__ import annotations

import random
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from tuner.cache import DiskCache
from tuner.dataset import Dataset, Document, GoldenCase, load_dataset, resolve_dataset
from tuner.embedding import EmbeddingContext
from tuner.evaluation import evaluate_retrieval
from tuner.retrieval import BM25Retriever, DenseRetriever, RetrievalPipeline, load_chunk_table
from tuner.settings import Chunking, RetrievalSettings


T = TypeVar("T")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def demo_section() -> list[str]:
    dataset = load_dataset(resolve_dataset("demo"))
    settings = RetrievalSettings(retriever="hybrid", top_k=5, chunk_size=240, rerank_strength=0.5, candidate_depth=30)
    lines = [f"demo dataset: {dataset.summary()}"]
    with tempfile.TemporaryDirectory() as root:
        encoder = EmbeddingContext().encoder(settings.embedding_model, root)
        encoder.encode(["warm up the model"])  # model load is not part of the build
        cold_pipeline = RetrievalPipeline(dataset, cache=DiskCache(root), encoder=encoder)
        _, cold = timed(lambda: evaluate_retrieval(cold_pipeline, settings, ci=False))
        n_chunks = len(cold_pipeline.table(settings))
        lines.append(f"cold build + evaluation ({n_chunks} chunks, hybrid, rerank 0.5): {cold:.2f} s, "
                     f"{encoder.texts_encoded} texts embedded")
        encoded = encoder.texts_encoded
        warm_pipeline = RetrievalPipeline(dataset, cache=DiskCache(root), encoder=encoder)
        _, warm_disk = timed(lambda: evaluate_retrieval(warm_pipeline, settings, ci=False))
        lines.append(f"same settings, new pipeline, warm disk cache: {warm_disk:.3f} s "
                     f"({cold / warm_disk:.0f}x faster), texts embedded: {encoder.texts_encoded - encoded}")
        changes = [{"top_k": 3}, {"relevance_threshold": 0.4}, {"rerank_strength": 0.9}, {"top_k": 8, "relevance_threshold": 0.2}]
        times = []
        for change in changes:
            _, seconds = timed(lambda c=change: evaluate_retrieval(warm_pipeline, settings.model_copy(update=c), ci=False))
            times.append(seconds)
        changed = float(np.median(times))
        lines.append(f"top_k / threshold / rerank_strength change in the warm pipeline (median of {len(times)}): "
                     f"{changed * 1000:.1f} ms ({cold / changed:.0f}x faster than cold), texts embedded: "
                     f"{encoder.texts_encoded - encoded}")
    return lines


def synthetic_dataset(n_docs: int, words_per_doc: int, seed: int = 0) -> Dataset:
    rng = random.Random(seed)
    vocabulary = [f"term{i}" for i in range(30_000)]
    weights = [1.0 / (i + 1) for i in range(len(vocabulary))]  # Zipf-like term frequencies
    docs = tuple(
        Document(f"d{i}", " ".join(rng.choices(vocabulary, weights, k=words_per_doc))) for i in range(n_docs)
    )
    golden = tuple(
        GoldenCase(f"q{i}", " ".join(rng.choices(docs[i * 7].text.split(), k=6)), "-", (), (docs[i * 7].doc_id,))
        for i in range(200)
    )
    return Dataset(Path("synthetic"), docs, golden, (), content_hash=f"synthetic-{n_docs}-{words_per_doc}-{seed}")


def synthetic_section() -> list[str]:
    dataset = synthetic_dataset(n_docs=100_000, words_per_doc=60)
    queries = [c.question for c in dataset.golden]
    lines = []
    with tempfile.TemporaryDirectory() as root:
        cache = DiskCache(root)
        encoder = EmbeddingContext().encoder("all-MiniLM-L6-v2", root)
        table, chunk_s = timed(lambda: load_chunk_table(dataset, Chunking(60, "tokens", 0.0, encoder.model_id), cache, encoder))
        lines.append(f"synthetic corpus: {len(table)} chunks of 60 words; chunking {chunk_s:.1f} s")
        bm25, bm25_s = timed(lambda: BM25Retriever.build(table, cache))
        lines.append(f"BM25 index build (bm25s): {bm25_s:.1f} s, peak RSS so far {peak_mb():.0f} MB")
        _, search_s = timed(lambda: bm25.search(queries, 50, None))
        lines.append(f"BM25 candidates, 200 queries x depth 50: {search_s:.1f} s ({search_s / 200 * 1000:.0f} ms/query)")
        sample = table.passages[:1000]
        _, embed_s = timed(lambda: encoder.inner.encode(sample))
        lines.append(f"embedding throughput: {1000 / embed_s:.0f} chunks/s on this machine -> 100k chunks "
                     f"≈ {len(table) / (1000 / embed_s) / 60:.0f} min (one-off, then reused per chunk text)")
        vectors = np.random.default_rng(0).standard_normal((len(table), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        table._embeddings = vectors  # random unit vectors: index build and search cost do not depend on content
        for kind in ("flat", "hnsw"):
            dense, build_s = timed(lambda k=kind: DenseRetriever.build(table, cache, k))
            allowed = np.ones(len(table), dtype=bool)
            allowed[::10] = False
            _, query_s = timed(lambda d=dense: d.search(queries, 50, allowed))
            lines.append(f"FAISS {kind}: build {build_s:.1f} s, 200 filtered queries x depth 50 {query_s:.2f} s, "
                         f"peak RSS {peak_mb():.0f} MB")
    return lines


if __name__ == "__main__":
    for line in demo_section() + synthetic_section():
        print(line, flush=True)
