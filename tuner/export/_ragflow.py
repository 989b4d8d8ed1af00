"""Export (framework exports): ``--format ragflow``, the retrieval settings of a RAGFlow chat assistant or retrieval
component nearest a configuration (with the dataset's chunking)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tuner.export._dify import platform_filter
from tuner.export._framework import (
    FrameworkExport, Untranslated, filter_untranslated, register_framework, retriever_entry, untranslated,
)
from tuner.settings import RetrievalSettings


RAGFLOW_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: {"vector_similarity_weight": 0.0},
    "dense": lambda s: {"vector_similarity_weight": 1.0},
    "hybrid": lambda s: {"vector_similarity_weight": s.hybrid_weight if s.fusion == "blend" else 0.5},
}
"""RAGFlow always blends keyword and vector similarity: the vector weight nearest each tuner retriever."""


def _ragflow(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    """The retrieval settings of a RAGFlow chat assistant or retrieval component (and the dataset's chunking) nearest
    the measured configuration. RAGFlow always blends keyword and vector similarity, weighted ``vector_similarity_weight``."""
    weight = float(retriever_entry(RAGFLOW_RETRIEVERS, settings, "ragflow")(settings)["vector_similarity_weight"])
    cross_encoder = settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0
    native: dict[str, Any] = {
        "dataset": {"embedding_model": settings.embedding_model, "parser_config": {"chunk_token_num": settings.chunk_size}},
        "retrieval": {"similarity_threshold": settings.relevance_threshold, "vector_similarity_weight": weight,
                      "keywords_similarity_weight": round(1 - weight, 6), "top_n": settings.top_k,
                      "top_k": settings.candidate_depth, "rerank_id": settings.reranker.split(":", 1)[1] if cross_encoder else ""},
    }
    if settings.active_filter:
        native["retrieval"]["meta_data_filter"] = {"method": "manual", "manual": platform_filter(settings.active_filter)["conditions"]}
    rows = untranslated(settings, "RAGFlow blends its own keyword similarity (not tuner's normalized BM25) with the "
                         "vector cosine", cutoff=False)
    if settings.retriever != "hybrid":
        rows.append(("retriever", settings.retriever, f"RAGFlow always searches both ways: vector_similarity_weight {weight:g} "
                     "is the nearest to one alone"))
    elif settings.fusion == "rrf":
        rows.append(("fusion", "rrf", "RAGFlow has no reciprocal-rank fusion: its weighted blend at 0.5 is the nearest"))
    if settings.chunk_unit != "tokens" or settings.chunk_overlap > 0:
        rows.append(("chunking", f"{settings.chunk_size} {settings.chunk_unit}, overlap {settings.chunk_overlap:g}",
                     "RAGFlow's chunk_token_num counts its own tokenizer's tokens and its general parser has no overlap"))
    return native, rows + [row for row in filter_untranslated(settings, "keyword search") if row[2].startswith("tuner chunk")]


RAGFLOW = register_framework(FrameworkExport(
    "ragflow", lambda s, _: _ragflow(s), RAGFLOW_RETRIEVERS,
    "tuner serve (POST /retrieval) registered as a Dify external knowledge base (docs/deploy.md); "
    "measure RAGFlow's own knowledge base with tuner eval --external"))
