"""Export (framework exports): ``--format dify``, the retrieval settings of a Dify knowledge base nearest a
configuration; ``tuner serve`` registered as a Dify external knowledge base reproduces the measured retrieval instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tuner.export._framework import (
    FrameworkExport, Untranslated, filter_untranslated, overlap_units, register_framework, retriever_entry, untranslated,
)
from tuner.settings import RetrievalSettings


DIFY_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: {"search_method": "full_text_search"},
    "dense": lambda s: {"search_method": "semantic_search"},
    "hybrid": lambda s: {"search_method": "hybrid_search"},
}
"""Dify's knowledge-base search method nearest each tuner retriever."""
def platform_filter(wanted: Mapping[str, Any]) -> dict[str, Any]:
    """A ``metadata_filter`` as Dify's manual metadata filtering conditions (``is`` one value, ``in`` a list)."""
    return {"logical_operator": "and", "conditions": [
        {"name": key, "comparison_operator": "in" if isinstance(value, list) else "is", "value": value}
        for key, value in wanted.items()]}


def _dify(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    """The retrieval settings of a Dify knowledge base (Knowledge → Settings → Retrieval Setting, and a knowledge
    retrieval node's metadata filtering) nearest the measured configuration."""
    retrieval: dict[str, Any] = {**retriever_entry(DIFY_RETRIEVERS, settings, "dify")(settings), "top_k": settings.top_k, "score_threshold_enabled": settings.relevance_threshold > 0,
                                 "score_threshold": settings.relevance_threshold}
    cross_encoder = settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0
    retrieval["reranking_enable"] = cross_encoder
    if cross_encoder:
        retrieval.update(reranking_mode="reranking_model",
                         reranking_model={"reranking_model_name": settings.reranker.split(":", 1)[1]})
    elif settings.retriever == "hybrid" and settings.fusion == "blend":
        retrieval.update(reranking_mode="weighted_score", weights={
            "vector_setting": {"vector_weight": settings.hybrid_weight, "embedding_model_name": settings.embedding_model},
            "keyword_setting": {"keyword_weight": round(1 - settings.hybrid_weight, 6)}})
    native: dict[str, Any] = {"indexing_technique": "high_quality", "embedding_model": settings.embedding_model,
                              "process_rule": {"mode": "custom", "rules": {"segmentation": {
                                  "max_tokens": settings.chunk_size, "chunk_overlap": overlap_units(settings)}}},
                              "retrieval_model": retrieval}
    if settings.active_filter:
        native["metadata_filtering_conditions"] = platform_filter(settings.active_filter)
    rows = untranslated(settings, "Dify's weighted score mixes its own keyword score (not tuner's normalized BM25) "
                         "with the vector score", cutoff=settings.retriever == "dense" and settings.rerank_strength == 0)
    if settings.chunk_unit != "tokens":
        rows.append(("chunk_unit", settings.chunk_unit, "Dify's maximum chunk length is counted in its own units, not "
                     f"{settings.chunk_unit}: check the length of a few chunks after indexing"))
    if settings.retriever == "hybrid" and settings.fusion == "rrf":
        rows.append(("fusion", "rrf", "Dify's hybrid search has no reciprocal-rank fusion: weighted score or a rerank "
                     "model; weighted score at 0.5/0.5 is the nearest"))
    rows.append(("candidate_depth", settings.candidate_depth, "Dify has no first-stage depth: it reranks what each "
                 "search returns"))
    return native, rows + [row for row in filter_untranslated(settings, "full-text search") if row[2].startswith("tuner chunk")]


DIFY = register_framework(FrameworkExport(
    "dify", lambda s, _: _dify(s), DIFY_RETRIEVERS,
    "tuner serve (POST /retrieval) registered as a Dify external knowledge base (docs/deploy.md)"))
