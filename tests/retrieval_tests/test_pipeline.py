from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.retrieval import RetrievalPipeline, final_ranking
from tuner.settings import Ranking, RetrievalSettings, settings_from_mapping


@pytest.fixture()
def pipeline(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> RetrievalPipeline:
    return RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=DiskCache(tmp_path / "cache"), encoder=encoder)


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
def test_scores_are_normalized_and_sorted(pipeline: RetrievalPipeline, retriever: str) -> None:
    for view in ("clean", "all"):
        candidates = pipeline.candidates(RetrievalSettings(retriever=retriever, chunk_size=30), view)
        valid = candidates.indices >= 0
        assert ((candidates.scores[valid] >= 0) & (candidates.scores[valid] <= 1)).all()
        for row in range(len(candidates.scores)):
            kept = candidates.scores[row][valid[row]]
            assert (np.diff(kept) <= 1e-6).all()


@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
def test_relevant_document_ranks_first(pipeline: RetrievalPipeline, retriever: str) -> None:
    contexts = pipeline.retrieve(RetrievalSettings(retriever=retriever, top_k=1, chunk_size=40))
    firsts = {c.case_id: c.doc_ids[0] for c in contexts}
    assert firsts["q1"] == "aurora-x200"
    assert firsts["q5"] == "mercury-partner"


def test_clean_view_hides_conflicts_and_all_view_lets_stale_versions_in(pipeline: RetrievalPipeline) -> None:
    settings = RetrievalSettings(retriever="hybrid", top_k=3, chunk_size=40)
    clean = {c.case_id: c for c in pipeline.retrieve(settings, "clean")}
    everything = {c.case_id: c for c in pipeline.retrieve(settings, "all")}
    assert all(ch.source == "corpus" for c in clean.values() for ch in c.chunks)
    assert "aurora-x200-2023" in everything["q1"].doc_ids
    only_kind = {c.case_id: c for c in pipeline.retrieve(settings, "kind=no_such_kind")}
    assert only_kind == clean


def test_threshold_and_top_k_cut_the_context(pipeline: RetrievalPipeline) -> None:
    base = RetrievalSettings(retriever="dense", top_k=5, chunk_size=40)
    wide = pipeline.retrieve(base)
    assert all(len(c.chunks) == 5 for c in wide)
    strict = pipeline.retrieve(base.model_copy(update={"relevance_threshold": 0.6}))
    for loose, tight in zip(wide, strict):
        assert all(s >= 0.6 for s in tight.scores)
        assert list(tight.doc_ids) == [d for d, s in zip(loose.doc_ids, loose.scores) if s >= 0.6]


def test_top_k_threshold_and_rerank_changes_compute_no_embeddings(
    tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder
) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    cache = DiskCache(tmp_path / "cache")
    settings = RetrievalSettings(retriever="hybrid", top_k=3, chunk_size=17, rerank_strength=0.5)
    RetrievalPipeline(dataset, cache=cache, encoder=encoder).retrieve(settings, "all")
    encoded = encoder.texts_encoded
    # a fresh pipeline (new process, same cache) and a change of top_k / threshold / strength
    again = RetrievalPipeline(dataset, cache=cache, encoder=encoder)
    again.retrieve(settings, "all")
    for change in ({"top_k": 1}, {"relevance_threshold": 0.4}, {"rerank_strength": 0.9}):
        again.retrieve(settings.model_copy(update=change), "all")
    assert encoder.texts_encoded == encoded
    assert cache.stats.by_namespace == {"chunks": 1, "bm25": 1, "candidates": 1, "rerank": 1}


@pytest.mark.parametrize("change", [{"chunk_overlap": 0.2}, {"chunk_size": 400}])
def test_identical_chunks_across_chunk_configurations_are_embedded_once(
    tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder, change: dict[str, object]
) -> None:
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=DiskCache(tmp_path / "c"), encoder=encoder)
    settings = RetrievalSettings(retriever="dense", chunk_size=300, chunk_overlap=0.0)
    pipeline.retrieve(settings)
    before = encoder.texts_encoded
    # every tiny document is shorter than 300 tokens: it is one chunk under any overlap and any larger size
    again = settings.model_copy(update=change)
    assert pipeline.table(again).passages == pipeline.table(settings).passages
    pipeline.retrieve(again)
    assert encoder.texts_encoded == before


def test_corrupt_cache_entry_is_rebuilt_not_used(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    cache = DiskCache(tmp_path / "cache")
    settings = RetrievalSettings(retriever="bm25", top_k=3, chunk_size=40)
    expected = [c.doc_ids for c in RetrievalPipeline(dataset, cache=cache, encoder=encoder).retrieve(settings)]
    entry = next((tmp_path / "cache" / "candidates").iterdir())
    arrays = entry / "arrays.npz"
    arrays.write_bytes(arrays.read_bytes()[:100])  # a torn write
    fresh = DiskCache(tmp_path / "cache")
    assert [c.doc_ids for c in RetrievalPipeline(dataset, cache=fresh, encoder=encoder).retrieve(settings)] == expected
    assert fresh.stats.rebuilt_corrupt == 1
    shutil.rmtree(entry)
    (entry).mkdir()  # a partial entry without a manifest
    fresh = DiskCache(tmp_path / "cache")
    assert [c.doc_ids for c in RetrievalPipeline(dataset, cache=fresh, encoder=encoder).retrieve(settings)] == expected
    assert fresh.stats.rebuilt_corrupt == 1


def test_final_ranking_blends_thresholds_and_caps() -> None:
    indices = np.array([4, 7, 2, -1])
    first = np.array([0.9, 0.6, 0.5, 0.0])
    rerank = np.array([0.1, 0.9, 0.8, 0.0])
    chosen, scores = final_ranking(indices, first, rerank, Ranking(top_k=10, relevance_threshold=0.0, rerank_strength=0.5))
    # blended: 4 -> 0.5, 7 -> 0.75, 2 -> 0.65
    assert chosen.tolist() == [7, 2, 4]
    np.testing.assert_allclose(scores, [0.75, 0.65, 0.5])
    chosen, _ = final_ranking(indices, first, rerank, Ranking(top_k=10, relevance_threshold=0.6, rerank_strength=0.5))
    assert chosen.tolist() == [7, 2]
    chosen, _ = final_ranking(indices, first, None, Ranking(top_k=2, relevance_threshold=0.0, rerank_strength=0.0))
    assert chosen.tolist() == [4, 7]


def test_top_k_beyond_candidate_depth_is_a_user_error() -> None:
    from tuner.errors import UserError

    # one validator for every reader of settings (study, eval, export, serve): the pipeline never sees such settings
    with pytest.raises(UserError, match=r"^search space: top_k \(20\) exceeds candidate_depth \(10\)$"):
        settings_from_mapping({"top_k": 20, "candidate_depth": 10}, "search space")


def test_hnsw_index_is_cached_and_agrees_with_exact_search(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    exact = RetrievalPipeline(dataset, cache=DiskCache(tmp_path / "a"), encoder=encoder)
    approximate = RetrievalPipeline(dataset, cache=DiskCache(tmp_path / "b"), encoder=encoder)
    settings = RetrievalSettings(retriever="dense", chunk_size=40, top_k=3)
    flat = exact.candidates(settings, "all")
    hnsw = approximate.candidates(settings.model_copy(update={"dense_index": "hnsw"}), "clean")
    assert approximate.cache.stats.by_namespace.get("dense-index") == 1
    # on a corpus this small the graph search visits every node: the same ranking as exact search
    clean = exact.candidates(settings, "clean")
    np.testing.assert_array_equal(hnsw.indices, clean.indices)
    np.testing.assert_allclose(hnsw.scores, clean.scores, rtol=1e-5)
    assert not np.array_equal(flat.indices, clean.indices)
