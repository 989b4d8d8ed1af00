"""Reciprocal-rank fusion as a hybrid first stage (issue 29 §4): the formula by hand, and the fused candidates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.retrieval import RetrievalPipeline
from tuner.retrieval._hybrid import reciprocal_rank_fusion
from tuner.settings import RetrievalSettings


def test_reciprocal_rank_fusion_by_hand() -> None:
    # k = 60, two rankings: chunk 4 is 1st and 3rd, chunk 9 is 2nd and absent, chunk 2 absent and 1st
    rankings = [np.array([4, 9, 5]), np.array([2, 7, 4, -1])]
    got = reciprocal_rank_fusion(np.array([4, 9, 2, 8]), rankings, k=60)
    # RRF = 1/61 + 1/63, 1/62, 1/61, 0; scaled by (k + 1) / 2 = 30.5
    expected = [(1 / 61 + 1 / 63) * 30.5, 30.5 / 62, 0.5, 0.0]
    assert got.tolist() == pytest.approx(expected, rel=1e-6)
    assert reciprocal_rank_fusion(np.array([1]), [np.array([1]), np.array([1])], k=5).tolist() == [1.0]


def test_rrf_candidates_rank_by_fused_ranks_of_the_two_first_stages(
    tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder
) -> None:
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir), DiskCache(tmp_path), encoder=encoder)
    rrf = RetrievalSettings(retriever="hybrid", fusion="rrf", rrf_k=5, chunk_size=40, candidate_depth=6, top_k=3)
    candidates = pipeline.candidates(rrf)
    sparse = pipeline.candidates(rrf.model_copy(update={"retriever": "bm25"}))
    dense = pipeline.candidates(rrf.model_copy(update={"retriever": "dense"}))
    for row in range(len(pipeline.queries)):
        valid = candidates.indices[row] >= 0
        chosen = candidates.indices[row][valid]
        expected = reciprocal_rank_fusion(chosen, [sparse.indices[row], dense.indices[row]], k=5)
        assert candidates.scores[row][valid].tolist() == pytest.approx(expected.tolist(), abs=1e-6)
        assert np.all(np.diff(candidates.scores[row][valid]) <= 1e-7) and np.all((0 <= expected) & (expected <= 1))
    blend = pipeline.candidates(rrf.model_copy(update={"fusion": "blend"}))
    assert candidates.key != blend.key and not np.allclose(candidates.scores, blend.scores)
