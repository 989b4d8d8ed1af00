"""Version and metadata knobs of the final ranking (issue 22 §3): hand-computed cases of every step, and the
in-index rule: with ``version_policy: latest`` a conflicting chunk whose family has a newer document is dropped."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.io import write_jsonl
from tuner.retrieval import ChunkVersions, RetrievalPipeline, chunk_versions, final_ranking
from tuner.settings import Ranking, RetrievalSettings
from tests.tiny_dataset import write_tiny_dataset

INDICES = np.array([3, 1, 0, 2, -1])
FIRST = np.array([0.9, 0.8, 0.7, 0.6, 0.0])
# chunk 3 is stale; ages 0, 365, 730, ∞ (undated) days for chunks 0, 1, 2, 3
VERSIONS = ChunkVersions(np.array([False, False, False, True]), np.array([0.0, 365.0, 730.0, np.nan]))


def _rank(versions: ChunkVersions | None = VERSIONS, vectors: np.ndarray | None = None, **knobs: object) -> list[int]:
    ranking = Ranking(**{"top_k": 4, "relevance_threshold": 0.0, "rerank_strength": 0.0, **knobs})  # type: ignore[arg-type]
    chosen, _ = final_ranking(INDICES, FIRST, None, ranking, versions, vectors)
    return chosen.tolist()


def test_the_defaults_change_nothing_and_need_no_versions() -> None:
    assert _rank(versions=None) == [3, 1, 0, 2]


def test_latest_drops_the_stale_chunk_and_the_penalty_demotes_it() -> None:
    assert _rank(version_policy="latest") == [1, 0, 2]
    # 0.9 · (1 − 0.5) = 0.45 < 0.6: the stale chunk falls to last
    ranking = Ranking(top_k=4, relevance_threshold=0.0, rerank_strength=0.0, stale_penalty=0.5)
    chosen, scores = final_ranking(INDICES, FIRST, None, ranking, VERSIONS)
    assert chosen.tolist() == [1, 0, 2, 3]
    np.testing.assert_allclose(scores, [0.8, 0.7, 0.6, 0.45])


def test_recency_blends_a_half_life_score() -> None:
    # w = 0.5, half-life 365 days: chunk 3 (undated) 0.45; chunk 1 0.4 + 0.25 = 0.65; chunk 0 0.35 + 0.5 = 0.85;
    # chunk 2 0.3 + 0.125 = 0.425
    ranking = Ranking(top_k=4, relevance_threshold=0.0, rerank_strength=0.0, recency_weight=0.5, recency_half_life_days=365.0)
    chosen, scores = final_ranking(INDICES, FIRST, None, ranking, VERSIONS)
    assert chosen.tolist() == [0, 1, 3, 2]
    np.testing.assert_allclose(scores, [0.85, 0.65, 0.45, 0.425])


def test_dedupe_skips_a_near_copy_of_a_better_chunk() -> None:
    # order 3, 1, 0, 2; cos(3, 1) = 0.6, cos(0, 3) = 0.8, cos(0, 1) = 0, cos(2, 3) = 0.96, cos(2, 1) = 0.8
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6]])
    assert _rank(vectors=vectors, dedupe=0.7) == [3, 1]  # 0 is 0.8 from 3, 2 is 0.96 from 3
    assert _rank(vectors=vectors, dedupe=0.85) == [3, 1, 0]
    assert _rank(vectors=vectors, dedupe=0.97) == [3, 1, 0, 2]
    assert _rank(vectors=vectors, dedupe=0.7, top_k=1) == [3]
    with pytest.raises(ValueError, match="dedupe < 1 needs the chunk vectors"):
        _rank(dedupe=0.7)


def test_chunk_versions_compare_dates_within_a_family_among_the_indexed_chunks() -> None:
    metadata = {"a": {"family": "f", "date": "2024-03-01"}, "a-old": {"family": "f", "date": "2023-03-01"},
                "b": {"date": "2024-01-01"}, "c": {"family": "g"}}
    doc_ids = ["a", "a-old", "a-old", "b", "c"]
    versions = chunk_versions(doc_ids, lambda d: metadata[d], None)
    assert versions.stale.tolist() == [False, True, True, False, False]
    np.testing.assert_allclose(versions.age_days, [0.0, 366.0, 366.0, 60.0, np.nan])
    # without the current document in the index, the old one is the newest of its family
    alone = chunk_versions(doc_ids, lambda d: metadata[d], np.array([False, True, True, True, True]))
    assert not alone.stale.any()


@pytest.fixture(scope="module")
def versioned(tmp_path_factory: pytest.TempPathFactory, encoder: CachedEncoder) -> RetrievalPipeline:
    root = write_tiny_dataset(tmp_path_factory.mktemp("versioned"))
    for name, dates in (("corpus.jsonl", {"aurora-x200": "2024-03-01", "returns": "2024年1月1日"}),
                        ("conflicts.jsonl", {"aurora-x200-2023": "2023-03-01", "returns-2022": "2022-01-01"})):
        rows = [json.loads(line) for line in (root / name).read_text().splitlines()]
        for row in rows:
            if row["doc_id"] in dates:
                row["metadata"] = {"family": row.get("conflicts_with", row["doc_id"]), "date": dates[row["doc_id"]]}
        write_jsonl(root / name, rows)
    return RetrievalPipeline(load_dataset(root), DiskCache(tmp_path_factory.mktemp("versioned-cache")), encoder=encoder)


def test_latest_drops_conflicting_chunks_of_older_versions_in_the_index(versioned: RetrievalPipeline) -> None:
    base = RetrievalSettings(retriever="bm25", chunk_size=200, chunk_unit="chars", top_k=8, candidate_depth=20)
    stale_ids = {"aurora-x200-2023", "returns-2022"}
    kept = {d for c in versioned.retrieve(base, "all") for d in c.doc_ids}
    assert stale_ids <= kept  # the in-index noise reaches the contexts under version_policy: all
    latest = versioned.retrieve(base.model_copy(update={"version_policy": "latest"}), "all")
    assert not stale_ids & {d for c in latest for d in c.doc_ids}
    # dropping happens before top_k: each context is the full ranking without the stale chunks, cut at top_k
    everything = versioned.retrieve(base.model_copy(update={"top_k": base.candidate_depth}), "all")
    expected = [[d for d in c.doc_ids if d not in stale_ids][: base.top_k] for c in everything]
    assert [c.doc_ids for c in latest] == expected
    # the clean index has no newer version to compare with: nothing is stale there
    clean = base.model_copy(update={"version_policy": "latest"})
    assert [c.doc_ids for c in versioned.retrieve(clean)] == [c.doc_ids for c in versioned.retrieve(base)]
