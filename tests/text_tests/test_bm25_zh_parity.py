"""tuner's BM25 (bm25s through the retrieval pipeline) against rank-bm25 fed the same segmenter's tokens,
on a small Chinese fixture: recall@k must agree within ±0.02."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from tests.text_tests.zh_fixture import DOCS, QUERIES
from tuner.cache import DiskCache
from tuner.dataset import Dataset, Document, GoldenCase
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.text import bm25_tokens

K = (1, 3)


def _dataset() -> Dataset:
    corpus = tuple(Document(doc_id, text) for doc_id, text in DOCS)
    golden = tuple(GoldenCase(f"q{i}", q, "", (), (doc_id,)) for i, (q, doc_id) in enumerate(QUERIES))
    return Dataset(Path("zh-fixture"), corpus, golden, content_hash="zh-fixture-v1", language="zh")


def _recall(rankings: list[list[str]], k: int) -> float:
    return float(np.mean([doc_id in ranking[:k] for ranking, (_, doc_id) in zip(rankings, QUERIES)]))


@pytest.fixture(scope="module")
def tuner_rankings(tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    pipeline = RetrievalPipeline(_dataset(), DiskCache(tmp_path_factory.mktemp("cache")))
    # every document is one chunk: 1,000 characters is more than the longest
    settings = RetrievalSettings(retriever="bm25", chunk_unit="chars", chunk_size=1000, candidate_depth=len(DOCS))
    table = pipeline.table(settings)
    candidates = pipeline.candidates(settings)
    return [[table.chunks[i].doc_id for i in row if i >= 0] for row in candidates.indices]


def _rank_bm25_rankings() -> list[list[str]]:
    oracle = BM25Okapi([bm25_tokens(text) for _, text in DOCS], k1=1.5, b=0.75)
    rankings = []
    for question, _ in QUERIES:
        scores = oracle.get_scores(bm25_tokens(question))
        rankings.append([DOCS[i][0] for i in np.lexsort((np.arange(len(DOCS)), -scores))])
    return rankings


@pytest.mark.parametrize("k", K)
def test_recall_matches_rank_bm25(tuner_rankings: list[list[str]], k: int) -> None:
    ours, reference = _recall(tuner_rankings, k), _recall(_rank_bm25_rankings(), k)
    assert abs(ours - reference) <= 0.02
    assert ours >= 0.9  # segmentation works: a whitespace/ASCII tokenizer finds almost nothing here
