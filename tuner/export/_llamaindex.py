"""Export (framework exports): ``--format llamaindex``, the LlamaIndex components nearest a configuration (node
parser, embedding, retriever, postprocessors); :class:`tuner.deploy.llamaindex.TunerLlamaIndexRetriever` reproduces
the measured retrieval instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tuner.export._framework import (
    FrameworkExport, Untranslated, filter_untranslated, overlap_units, register_framework, retriever_entry, untranslated,
)
from tuner.settings import RetrievalSettings


def _llamaindex_filters(wanted: Mapping[str, Any]) -> dict[str, Any]:
    """``MetadataFilters`` all of whose filters must hold (``condition: and``): ``ExactMatchFilter`` for one value,
    ``MetadataFilter`` with ``operator: in`` for a list."""
    filters = [{"class": "llama_index.core.vector_stores.MetadataFilter", "key": key, "value": value, "operator": "in"}
               if isinstance(value, list) else
               {"class": "llama_index.core.vector_stores.ExactMatchFilter", "key": key, "value": value}
               for key, value in wanted.items()]
    return {"class": "llama_index.core.vector_stores.MetadataFilters", "filters": filters, "condition": "and"}


def _llamaindex_dense(k: int, wanted: Mapping[str, Any]) -> dict[str, Any]:
    return {"class": "llama_index.core.VectorStoreIndex.as_retriever", "similarity_top_k": k,
            **({"filters": _llamaindex_filters(wanted)} if wanted else {})}


def _llamaindex_bm25(k: int) -> dict[str, Any]:
    return {"class": "llama_index.retrievers.bm25.BM25Retriever", "similarity_top_k": k}


LLAMAINDEX_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: _llamaindex_bm25(s.top_k),
    "dense": lambda s: _llamaindex_dense(s.top_k, s.active_filter),
    # mode reciprocal_rerank is reciprocal-rank fusion with k fixed at 60 (see LLAMAINDEX_RRF_K)
    "hybrid": lambda s: {
        "class": "llama_index.core.retrievers.QueryFusionRetriever", "num_queries": 1, "similarity_top_k": s.top_k,
        **({"mode": "reciprocal_rerank"} if s.fusion == "rrf" else {
            "mode": "relative_score", "retriever_weights": [round(1 - s.hybrid_weight, 6), s.hybrid_weight]}),
        "retrievers": [_llamaindex_bm25(s.candidate_depth), _llamaindex_dense(s.candidate_depth, s.active_filter)]},
}
LLAMAINDEX_RRF_K = 60
"""The k of LlamaIndex's ``reciprocal_rerank`` fusion, a constant there: another ``rrf_k`` is not expressible."""


def _llamaindex(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    size, overlap, unit = settings.chunk_size, overlap_units(settings), settings.chunk_unit
    splitter: dict[str, Any] = {"class": "llama_index.core.node_parser.SentenceSplitter", "chunk_size": size, "chunk_overlap": overlap,
                                "tokenizer": (f"transformers.AutoTokenizer.from_pretrained({settings.embedding_model!r}).tokenize"
                                              if unit == "tokens" else "list  # one unit per character")}
    embed = {"class": "llama_index.embeddings.huggingface.HuggingFaceEmbedding", "model_name": settings.embedding_model,
             "query_instruction": settings.query_prompt, "text_instruction": settings.document_prompt, "normalize": True}
    retriever = retriever_entry(LLAMAINDEX_RETRIEVERS, settings, "llamaindex")(settings)
    native: dict[str, Any] = {"node_parser": splitter, "embed_model": embed, "retriever": retriever}
    cutoff = settings.retriever == "dense" and settings.rerank_strength == 0  # the node score is then tuner's cosine
    if settings.relevance_threshold > 0 and cutoff:
        native["node_postprocessors"] = [{"class": "llama_index.core.postprocessor.SimilarityPostprocessor",
                                          "similarity_cutoff": settings.relevance_threshold}]
    if settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0:
        native.setdefault("node_postprocessors", []).append({
            "class": "llama_index.core.postprocessor.SentenceTransformerRerank",
            "model": settings.reranker.split(":", 1)[1], "top_n": settings.top_k})
    rows = untranslated(settings, "QueryFusionRetriever(mode='relative_score') min-max scales each list first", cutoff)
    if settings.retriever == "hybrid" and settings.fusion == "rrf" and settings.rrf_k != LLAMAINDEX_RRF_K:
        rows.append(("rrf_k", settings.rrf_k, f"QueryFusionRetriever's reciprocal_rerank fixes k at {LLAMAINDEX_RRF_K}"))
    return native, rows + filter_untranslated(settings, "BM25Retriever")


LLAMAINDEX = register_framework(FrameworkExport(
    "llamaindex", lambda s, _: _llamaindex(s), LLAMAINDEX_RETRIEVERS, "tuner.deploy.llamaindex.TunerLlamaIndexRetriever",
    from_config=True))
