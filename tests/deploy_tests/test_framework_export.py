from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tuner.errors import UserError
from tuner.export import export_document, write_framework_export
from tuner.settings import RetrievalSettings


def _written(tmp_path: Path, framework: str, **settings: object) -> tuple[str, dict[str, object]]:
    values = RetrievalSettings(**settings).model_dump()  # type: ignore[arg-type]
    path = write_framework_export(tmp_path / f"{framework}.yaml", export_document(values, {"trial": 3}), framework)
    text = path.read_text()
    return text, yaml.safe_load(text)


def test_langchain_export_names_native_units_and_what_does_not_translate(tmp_path: Path) -> None:
    text, doc = _written(tmp_path, "langchain", retriever="hybrid", hybrid_weight=0.7, chunk_size=200, chunk_overlap=0.15,
                         top_k=4, relevance_threshold=0.2, rerank_strength=0.5)
    native = doc["native"]
    assert native["text_splitter"]["tokens_per_chunk"] == 200 and native["text_splitter"]["chunk_overlap"] == 30
    assert native["retriever"]["weights"] == [0.3, 0.7]
    assert {row["setting"] for row in doc["not_translated"]} == {
        "chunking", "hybrid_weight", "relevance_threshold", "rerank_strength", "reranker"}
    assert "# | rerank_strength | 0.5 |" in text and doc["adapter"].endswith("TunerLangChainRetriever")
    assert doc["provenance"]["trial"] == 3


def test_llamaindex_export_keeps_a_cosine_cutoff_where_it_means_the_same(tmp_path: Path) -> None:
    _, doc = _written(tmp_path, "llamaindex", retriever="dense", chunk_unit="chars", chunk_size=800, chunk_overlap=0.1,
                      top_k=6, relevance_threshold=0.35)
    native = doc["native"]
    assert native["node_parser"]["chunk_size"] == 800 and native["node_parser"]["chunk_overlap"] == 80
    assert native["retriever"]["similarity_top_k"] == 6
    assert native["node_postprocessors"][0]["similarity_cutoff"] == 0.35
    assert "relevance_threshold" not in {row["setting"] for row in doc["not_translated"]}
    _, blended = _written(tmp_path, "llamaindex", retriever="dense", relevance_threshold=0.35, rerank_strength=0.2)
    assert "node_postprocessors" not in blended["native"]
    assert "relevance_threshold" in {row["setting"] for row in blended["not_translated"]}


def test_every_retriever_has_its_own_translation_in_every_registered_format_and_an_unknown_one_is_refused() -> None:
    """Each format's module holds a translation of each of tuner's retrievers (a new format without one fails here;
    Milvus's search is written from a recorded engine, no Milvus is needed); a retriever a format has no translation
    of (registered later, written for tuner alone) is refused in one line, never exported as another."""
    from tuner.export import FRAMEWORKS
    from tuner.settings import FIRST_STAGES

    assert list(FRAMEWORKS) == ["langchain", "llamaindex", "dify", "ragflow", "milvus"]
    provenance = {"engine": {"backend": "milvus", "uri": "kb.db", "index": "FLAT"}, "collection": "tuner_abc"}
    for framework in FRAMEWORKS.values():
        assert set(framework.retrievers) == {"bm25", "dense", "hybrid"} == set(FIRST_STAGES), framework.name
        natives = [framework.translate(RetrievalSettings(retriever=name), provenance)[0] for name in FIRST_STAGES]
        assert len({json.dumps(native, sort_keys=True) for native in natives}) == len(FIRST_STAGES), framework.name
        unknown = RetrievalSettings().model_copy(update={"retriever": "splade"})  # a retriever registered without an export
        with pytest.raises(UserError, match=f"^--format {framework.name}: retriever 'splade' has no {framework.name} "
                           "equivalent .*: export --format tuner"):
            framework.translate(unknown, provenance)


def test_a_framework_name_is_registered_once() -> None:
    from tuner.export import FRAMEWORKS, register_framework

    with pytest.raises(ValueError, match="framework export 'dify' registered twice"):
        register_framework(FRAMEWORKS["dify"])
    assert list(FRAMEWORKS) == ["langchain", "llamaindex", "dify", "ragflow", "milvus"]


def test_version_knobs_are_listed_as_not_translated_only_when_they_act(tmp_path: Path) -> None:
    _, plain = _written(tmp_path, "llamaindex", retriever="dense")
    assert not {"version_policy", "stale_penalty", "recency_weight", "dedupe"} & {r["setting"] for r in plain["not_translated"]}
    text, doc = _written(tmp_path, "langchain", version_policy="latest", recency_weight=0.2, recency_half_life_days=30.0,
                         dedupe=0.9)
    assert {"version_policy", "recency_weight", "dedupe"} <= {row["setting"] for row in doc["not_translated"]}
    assert "half-life 30 days" in text and doc["settings"]["version_policy"] == "latest"


FILTERS = {"current": {"status": "current", "lang": ["en", "de"]}}


def test_a_metadata_filter_is_written_where_the_framework_has_one_and_listed_where_not(tmp_path: Path) -> None:
    _, langchain = _written(tmp_path, "langchain", retriever="dense", metadata_filters=FILTERS, metadata_filter="current")
    native: dict = langchain["native"]  # type: ignore[assignment]
    assert native["retriever"]["as_retriever"]["search_kwargs"] == {"k": 5, "filter": FILTERS["current"]}
    assert "metadata_filter" not in {row["setting"] for row in langchain["not_translated"]}  # type: ignore[union-attr]
    _, llama = _written(tmp_path, "llamaindex", retriever="hybrid", metadata_filters=FILTERS, metadata_filter="current")
    dense = llama["native"]["retriever"]["retrievers"][1]  # type: ignore[index]
    assert dense["filters"] == {"class": "llama_index.core.vector_stores.MetadataFilters", "condition": "and", "filters": [
        {"class": "llama_index.core.vector_stores.ExactMatchFilter", "key": "status", "value": "current"},
        {"class": "llama_index.core.vector_stores.MetadataFilter", "key": "lang", "value": ["en", "de"], "operator": "in"}]}
    rows = [row for row in llama["not_translated"] if row["setting"] == "metadata_filter"]  # type: ignore[union-attr]
    assert len(rows) == 1 and "only the dense retriever filters" in rows[0]["why"]
    _, bm25 = _written(tmp_path, "langchain", retriever="bm25", metadata_filters=FILTERS, metadata_filter="current")
    assert "filter" not in str(bm25["native"]["retriever"])  # type: ignore[index]
    assert any("nothing is filtered" in row["why"] for row in bm25["not_translated"])  # type: ignore[union-attr]
    _, unfiltered = _written(tmp_path, "langchain", retriever="dense", metadata_filters=FILTERS)
    assert "filter" not in unfiltered["native"]["retriever"]["as_retriever"]["search_kwargs"]  # type: ignore[index]


def test_rrf_fusion_is_written_where_the_framework_has_it_and_listed_where_its_k_is_fixed(tmp_path: Path) -> None:
    _, langchain = _written(tmp_path, "langchain", retriever="hybrid", fusion="rrf", rrf_k=20)
    assert langchain["native"]["retriever"]["weights"] == [0.5, 0.5] and langchain["native"]["retriever"]["c"] == 20
    assert not {"hybrid_weight", "rrf_k"} & {row["setting"] for row in langchain["not_translated"]}
    _, llamaindex = _written(tmp_path, "llamaindex", retriever="hybrid", fusion="rrf", rrf_k=20)
    assert llamaindex["native"]["retriever"]["mode"] == "reciprocal_rerank"
    assert "retriever_weights" not in llamaindex["native"]["retriever"]
    assert "rrf_k" in {row["setting"] for row in llamaindex["not_translated"]}
    _, default_k = _written(tmp_path, "llamaindex", retriever="hybrid", fusion="rrf")
    assert "rrf_k" not in {row["setting"] for row in default_k["not_translated"]}


def test_dify_export_names_its_knowledge_base_settings_and_what_does_not_translate(tmp_path: Path) -> None:
    text, doc = _written(tmp_path, "dify", retriever="hybrid", hybrid_weight=0.7, top_k=4, relevance_threshold=0.3,
                         chunk_size=200, chunk_overlap=0.1, version_policy="latest",
                         metadata_filters={"current": {"status": "current", "team": ["hr", "客服"]}}, metadata_filter="current")
    retrieval = doc["native"]["retrieval_model"]
    assert retrieval["search_method"] == "hybrid_search" and retrieval["top_k"] == 4
    assert retrieval["score_threshold_enabled"] is True and retrieval["score_threshold"] == 0.3
    assert retrieval["reranking_enable"] is False and retrieval["reranking_mode"] == "weighted_score"
    assert retrieval["weights"]["vector_setting"]["vector_weight"] == 0.7
    assert retrieval["weights"]["keyword_setting"]["keyword_weight"] == 0.3
    assert doc["native"]["process_rule"]["rules"]["segmentation"] == {"max_tokens": 200, "chunk_overlap": 20}
    assert doc["native"]["metadata_filtering_conditions"]["conditions"] == [
        {"name": "status", "comparison_operator": "is", "value": "current"},
        {"name": "team", "comparison_operator": "in", "value": ["hr", "客服"]}]
    assert {"hybrid_weight", "relevance_threshold", "version_policy", "candidate_depth"} <= {
        row["setting"] for row in doc["not_translated"]}
    assert text.startswith("# dify settings nearest") and "# | version_policy | latest |" in text
    _, off = _written(tmp_path, "dify", retriever="dense", relevance_threshold=0.0,
                      rerank_strength=0.4, reranker="cross-encoder:BAAI/bge-reranker-base")
    model = off["native"]["retrieval_model"]
    assert model["score_threshold_enabled"] is False and model["search_method"] == "semantic_search"
    assert model["reranking_enable"] is True and model["reranking_model"]["reranking_model_name"] == "BAAI/bge-reranker-base"


def test_ragflow_export_maps_threshold_weights_top_n_and_candidates(tmp_path: Path) -> None:
    text, doc = _written(tmp_path, "ragflow", retriever="hybrid", hybrid_weight=0.6, top_k=5, candidate_depth=40,
                         relevance_threshold=0.25, rerank_strength=0.5, reranker="cross-encoder:BAAI/bge-reranker-v2-m3")
    retrieval = doc["native"]["retrieval"]
    assert retrieval == {"similarity_threshold": 0.25, "vector_similarity_weight": 0.6, "keywords_similarity_weight": 0.4,
                         "top_n": 5, "top_k": 40, "rerank_id": "BAAI/bge-reranker-v2-m3"}
    assert {"relevance_threshold", "rerank_strength"} <= {row["setting"] for row in doc["not_translated"]}
    _, dense = _written(tmp_path, "ragflow", retriever="dense")
    assert dense["native"]["retrieval"]["vector_similarity_weight"] == 1.0 and dense["native"]["retrieval"]["rerank_id"] == ""
    assert "retriever" in {row["setting"] for row in dense["not_translated"]}
    assert "# | setting | value | why |" in text
