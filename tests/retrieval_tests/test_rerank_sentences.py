"""The maxsim reranker embeds the sentences of the candidates that reach reranking once, in one pass, and scores as
it did when each query embedded its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder, EmbeddingStore
from tuner.rerank import EmbeddingMaxSimReranker
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.text import split_sentences

SETTINGS = RetrievalSettings(retriever="bm25", chunk_size=40, top_k=5, rerank_strength=1.0, candidate_depth=8)


def _private(encoder: CachedEncoder, path: Path) -> CachedEncoder:
    """The session's model with an empty store of its own, so counts do not depend on other tests."""
    return CachedEncoder(encoder.inner, EmbeddingStore(path))


def _reached(pipeline: RetrievalPipeline, settings: RetrievalSettings) -> list[str]:
    candidates = pipeline.candidates(settings, "all")
    table = pipeline.table(settings)
    return [table.passages[i] for i in np.unique(candidates.indices[candidates.indices >= 0])]


def _sentences(passages: list[str]) -> list[str]:
    return sorted({s for p in passages for s in split_sentences(p) or [p]})


def test_each_candidate_sentence_is_embedded_once_and_scores_match_per_query_embedding(
    tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder
) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    batched = _private(encoder, tmp_path / "batched.sqlite")
    pipeline = RetrievalPipeline(dataset, cache=DiskCache(tmp_path / "cache"), encoder=batched)
    reached = _reached(pipeline, SETTINGS)
    expected = len(batched.missing(_sentences(reached) + pipeline.queries))
    assert expected > len(reached)  # passages have several sentences: there is something to share
    before = batched.texts_encoded
    scores = pipeline.rerank_scores(SETTINGS, "all")
    assert batched.texts_encoded - before == expected

    per_query = EmbeddingMaxSimReranker(_private(encoder, tmp_path / "per-query.sqlite"))
    candidates = pipeline.candidates(SETTINGS, "all")
    table = pipeline.table(SETTINGS)
    for row, query in enumerate(pipeline.queries):
        valid = candidates.indices[row] >= 0
        alone = per_query.score(query, [table.passages[i] for i in candidates.indices[row][valid]])
        np.testing.assert_allclose(scores[row, valid], alone, atol=1e-6)
        assert list(np.argsort(-scores[row, valid], kind="stable")) == list(np.argsort(-alone, kind="stable"))


def test_sentences_are_shared_across_chunk_sizes(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    store = _private(encoder, tmp_path / "store.sqlite")
    pipeline = RetrievalPipeline(dataset, cache=DiskCache(tmp_path / "cache"), encoder=store)
    pipeline.rerank_scores(SETTINGS, "all")
    larger = SETTINGS.model_copy(update={"chunk_size": 60})
    sentences = _sentences(_reached(pipeline, larger))
    new = store.missing(sentences)
    assert len(new) < len(sentences)  # sentences of the larger chunks were embedded for the smaller ones
    before = store.texts_encoded
    pipeline.rerank_scores(larger, "all")
    assert store.texts_encoded - before == len(new)
