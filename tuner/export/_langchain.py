"""Export (framework exports): ``--format langchain``, the LangChain components nearest a configuration (text
splitter, embeddings, retriever, cross-encoder reranker); :class:`tuner.deploy.langchain.TunerLangChainRetriever`
reproduces the measured retrieval instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tuner.export._framework import (
    FrameworkExport, Untranslated, filter_untranslated, overlap_units, register_framework, retriever_entry, untranslated,
)
from tuner.settings import RetrievalSettings


def _langchain_dense(k: int, wanted: Mapping[str, Any]) -> dict[str, Any]:
    # no score_threshold: LangChain's FAISS turns an inner product p into the relevance score 1 − p, not tuner's cosine.
    # FAISS's dict filter keeps a document whose metadata equals each value, or is in each list: tuner's rule
    search: dict[str, Any] = {"k": k, **({"filter": dict(wanted)} if wanted else {})}
    return {"class": "langchain_community.vectorstores.FAISS", "distance_strategy": "MAX_INNER_PRODUCT",
            "as_retriever": {"search_type": "similarity", "search_kwargs": search}}


def _langchain_bm25(k: int) -> dict[str, Any]:
    return {"class": "langchain_community.retrievers.BM25Retriever", "k": k}


LANGCHAIN_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: _langchain_bm25(s.top_k),
    "dense": lambda s: _langchain_dense(s.top_k, s.active_filter),
    # EnsembleRetriever is weighted reciprocal-rank fusion with constant c: equal weights and c = rrf_k are tuner's rrf
    "hybrid": lambda s: {
        "class": "langchain.retrievers.EnsembleRetriever",
        **({"weights": [0.5, 0.5], "c": s.rrf_k} if s.fusion == "rrf" else {
            "weights": [round(1 - s.hybrid_weight, 6), s.hybrid_weight]}),
        "retrievers": [_langchain_bm25(s.candidate_depth), _langchain_dense(s.candidate_depth, s.active_filter)]},
}


def _langchain(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    size, overlap, unit = settings.chunk_size, overlap_units(settings), settings.chunk_unit
    splitter: dict[str, Any] = (
        {"class": "langchain_text_splitters.SentenceTransformersTokenTextSplitter", "model_name": settings.embedding_model,
         "tokens_per_chunk": size, "chunk_overlap": overlap}
        if unit == "tokens" else
        {"class": "langchain_text_splitters.RecursiveCharacterTextSplitter", "chunk_size": size, "chunk_overlap": overlap}
    )
    embeddings = {"class": "langchain_huggingface.HuggingFaceEmbeddings", "model_name": settings.embedding_model,
                  "encode_kwargs": {"normalize_embeddings": True, "prompt": settings.document_prompt},
                  "query_encode_kwargs": {"normalize_embeddings": True, "prompt": settings.query_prompt}}
    retriever = retriever_entry(LANGCHAIN_RETRIEVERS, settings, "langchain")(settings)
    native = {"text_splitter": splitter, "embeddings": embeddings, "retriever": retriever}
    if settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0:
        native["reranker"] = {"class": "langchain.retrievers.document_compressors.CrossEncoderReranker",
                              "model": settings.reranker.split(":", 1)[1], "top_n": settings.top_k}
    return native, (untranslated(settings, "EnsembleRetriever fuses ranks (weighted reciprocal rank fusion)", cutoff=False)
                    + filter_untranslated(settings, "BM25Retriever"))


LANGCHAIN = register_framework(FrameworkExport(
    "langchain", lambda s, _: _langchain(s), LANGCHAIN_RETRIEVERS, "tuner.deploy.langchain.TunerLangChainRetriever",
    from_config=True))
