"""Search-time index knobs (issue 45): ``hnsw_ef`` reaches the in-process HNSW search, ``ivf`` is an engine's index."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.errors import UserError
from tuner.retrieval import DenseRetriever, RetrievalPipeline
from tuner.settings import RetrievalSettings, acts

DIM, CHUNKS, QUERIES, DEPTH = 32, 4000, 40, 10


class _Vectors:
    """What the dense retriever reads of a chunk table when it searches: its length."""

    def __init__(self, vectors: np.ndarray) -> None:
        self._vectors = vectors

    def __len__(self) -> int:
        return len(self._vectors)


class _Questions:
    """An encoder whose 'questions' are row numbers of fixed query vectors."""

    def __init__(self, vectors: np.ndarray) -> None:
        self._vectors = vectors

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors[[int(t) for t in texts]]


def _unit(rows: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_hnsw_ef_is_the_search_breadth_of_the_in_process_hnsw_index() -> None:
    chunks, queries = _unit(CHUNKS, 0), _unit(QUERIES, 1)
    exact = faiss.IndexFlatIP(DIM)
    exact.add(chunks)
    truth = exact.search(queries, DEPTH)[1]
    graph = faiss.IndexHNSWFlat(DIM, 4, faiss.METRIC_INNER_PRODUCT)  # a sparse graph: a narrow search misses neighbours
    graph.add(chunks)

    def recall(ef: int) -> float:
        retriever = DenseRetriever(_Vectors(chunks), graph, _Questions(queries), ef=ef)  # type: ignore[arg-type]
        found = retriever.search([str(q) for q in range(QUERIES)], DEPTH, None).indices
        return float(np.mean([len(set(f) & set(t)) / DEPTH for f, t in zip(found.tolist(), truth.tolist(), strict=True)]))

    narrow, wide = recall(1), recall(400)  # ef 1 is raised to the depth asked (10)
    assert narrow < wide - 0.1 and wide > 0.95


def test_search_knobs_act_only_on_their_index() -> None:
    hnsw = {"retriever": "dense", "dense_index": "hnsw"}
    assert acts("hnsw_ef", hnsw) and not acts("ivf_nprobe", hnsw)
    assert acts("ivf_nprobe", {**hnsw, "dense_index": "ivf"}) and not acts("hnsw_ef", {**hnsw, "dense_index": "flat"})
    assert not acts("hnsw_ef", {**hnsw, "retriever": "bm25"})


def test_an_ivf_index_in_the_in_process_engine_is_one_line(tiny_dataset_dir: Path, tmp_path: Path,
                                                          encoder: CachedEncoder) -> None:
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir), DiskCache(tmp_path), encoder=encoder)
    with pytest.raises(UserError, match="dense_index ivf: tuner's in-process engine has no IVF index"):
        pipeline.candidates(RetrievalSettings(retriever="dense", dense_index="ivf", chunk_size=40, candidate_depth=5))
