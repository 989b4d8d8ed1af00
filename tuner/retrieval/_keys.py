"""Candidates (chunks → indexes → **candidates** → ranking): every key retrieval caches under, on disk and in memory,
derived in one place from the settings and inputs an entry is built from.

=================  ============================================================================================
entry              key parts
=================  ============================================================================================
chunks             dataset content hash, language, the chunking stage key (``chunk_size``, ``chunk_overlap``,
                   ``chunk_unit``, the tokenizer's model: ``embedding_model``, for ``tokens`` only), the chunker's
                   version (``tuner.chunking.CHUNKER_VERSION``); computed beside the chunk table
                   (:func:`tuner.retrieval._table.chunks_key`: the chunk table sits below the first stages)
vectors            ``embedding_model``, the prompt (document or query), the inference backend when its vectors
                   differ from torch's, sha256 of the text (:func:`tuner.embedding.vector_id`; rows are
                   checksummed in the store)
BM25 index         chunks key, text layer (the BM25 rule, :data:`tuner.text.TEXT_LAYER_ID`), language, k1, b
HNSW index         content hash of the chunk vectors, HNSW parameters
candidates         chunks key, text layer, index view, for a retriever that scores BM25 the BM25 list rule
                   (:data:`BM25_LIST_RULE`), the first-stage group (``retriever``, ``candidate_depth``
                   and the settings its ``RETRIEVERS`` entry reads that act: ``dense_index``, ``fusion`` unless
                   ``blend``, ``hybrid_weight`` under blend, ``rrf_k`` under rrf; the active
                   ``metadata_filter``'s definition); for a
                   retriever that needs vectors also the content hash of the chunk and question vectors
rerank scores      candidates key, the rerank group (``reranker``), ``encoding`` (model and both prompts), the inference backend
                   when its vectors differ from torch's (``embedding.backend: onnx-int8``)
=================  ============================================================================================

In memory the pipeline keeps chunk tables, retrievers, candidate keys and reranker instances under
:func:`table_memo`, :func:`retriever_memo`, :func:`candidates_memo` and :func:`reranker_memo`. The final-ranking group
(``top_k``, ``relevance_threshold``, ``rerank_strength``) is in no key: it is array work on cached entries.
Each group enters the keys whole through :func:`stage_key`, so a new setting of a stage is in the right keys
without an edit here. Keys over content hashes mean a repaired or rebuilt
input (vectors encoded again after a damaged store) can never be served an entry built from other bytes.
"""

from __future__ import annotations


import numpy as np

from tuner.cache import array_digest, content_key
from tuner.retrieval._base import RETRIEVERS
from tuner.retrieval._table import chunking_key
from tuner.settings import RetrievalSettings, Stage
from tuner.text import TEXT_LAYER_ID

HNSW_NEIGHBORS = 32


def bm25_key(table_key: str, language: str, k1: float, b: float) -> str:
    """The BM25 index of a chunk table: its chunks, the text layer that tokenizes them under the language's rule,
    and the BM25 parameters."""
    return f"{table_key}-{TEXT_LAYER_ID}-{language}-k1{k1}-b{b}"


def hnsw_key(vectors: np.ndarray) -> str:
    """The HNSW index over ``vectors``: their content hash and the graph's parameters."""
    return f"{array_digest(vectors)}-hnsw{HNSW_NEIGHBORS}"


def stage_key(settings: RetrievalSettings, stage: Stage) -> str:
    """The part of every key below that one stage's settings decide: the whole group of ``stage``, except that
    the first stage keeps only what its retriever reads (``RETRIEVERS``: BM25 candidates do not depend on
    ``hybrid_weight``) plus the definition of the active ``metadata_filter``, and chunking adds the tokenizer's model
    when it counts tokens."""
    if stage == "chunking":
        return chunking_key(settings.chunking)
    values = settings.stage(stage)
    if stage == "first_stage":
        values = first_stage_reads(settings)
        if settings.active_filter:  # the filter's definition, not its name; with none the keys predate filters
            values["metadata_filter"] = settings.active_filter
    return content_key(stage, values)


def first_stage_reads(settings: RetrievalSettings) -> dict[str, object]:
    """The first-stage settings ``settings``' retriever reads (``RETRIEVERS``) and that can act under its other
    settings (:data:`tuner.settings.ACTS_WHEN`: no ``rrf_k`` under ``fusion: blend``, no ``hybrid_weight`` under
    ``rrf``), with ``retriever`` and ``candidate_depth``. ``fusion: blend`` is left out: the keys predate fusion."""
    reads = {"retriever", "candidate_depth", *RETRIEVERS[settings.retriever].reads}
    return {name: value for name, value in settings.stage("first_stage").items()
            if name in reads and settings.acts(name) and not (name == "fusion" and value == "blend")}


def _needs_vectors(settings: RetrievalSettings) -> bool:
    return RETRIEVERS[settings.retriever].needs_vectors


BM25_LIST_RULE = "bm25-list-scored-only"
"""How a BM25 list is made, in the candidates key of every retriever that scores BM25: only chunks sharing a term with
the query, empty slots after them (issue 52 §1: Milvus's rule; the lists of the keys before it were filled with
zero-score chunks in corpus order)."""
TEXT_RULES = {"text_layer": TEXT_LAYER_ID, "bm25_list": BM25_LIST_RULE}
"""How this tuner turns text into scores, which a study records when it is created (:class:`tuner.front.StudyRecord`
``text_rules``) and a resumed one must find unchanged: the text layer (the tokens of every BM25 index, and of the
extractive reader's word match) and the BM25 list rule (the lists of a retriever that scores BM25)."""


def candidates_key(
    settings: RetrievalSettings, table_key: str, view: str, vectors: tuple[np.ndarray, np.ndarray] | None
) -> str:
    """The first-stage candidates of every question in index ``view``: ``vectors`` are the chunk and question
    vectors a retriever that needs vectors searches with (None for one that needs none, such as BM25)."""
    if _needs_vectors(settings) and vectors is None:
        raise ValueError(f"candidates of '{settings.retriever}' are keyed by the vectors they search")
    return content_key(
        "candidates",
        table_key,
        TEXT_LAYER_ID,
        stage_key(settings, "first_stage"),
        array_digest(*vectors) if vectors is not None and _needs_vectors(settings) else None,
        view,
        *([BM25_LIST_RULE] if RETRIEVERS[settings.retriever].spec.bm25 else []),
    )


def rerank_key(settings: RetrievalSettings, candidates: str, vector_backend: str = "") -> str:
    """The rerank scores of the candidates under key ``candidates``: the reranker and the encoder it may use, with
    the encoder's inference backend when its vectors differ from torch's (``vector_backend``, see
    :func:`tuner.embedding.vector_id`): BM25 candidates hash no vectors, and ``embedding-maxsim`` scores from them."""
    return content_key("rerank", candidates, *reranker_memo(settings), *([vector_backend] if vector_backend else []))


def table_memo(settings: RetrievalSettings) -> tuple[object, ...]:
    """A chunk table in memory: its chunking and the encoder of its passages (model and document prompt)."""
    return (stage_key(settings, "chunking"), settings.embedding_model, settings.document_prompt)


def retriever_memo(settings: RetrievalSettings) -> tuple[object, ...]:
    """A first-stage retriever in memory: its table, what the retriever reads and, when it searches vectors, the
    encoder (the depth is a search argument, not part of the retriever)."""
    reads = tuple(value for name, value in first_stage_reads(settings).items() if name != "candidate_depth")
    return (stage_key(settings, "chunking"), reads, settings.encoding if _needs_vectors(settings) else None)


def candidates_memo(settings: RetrievalSettings, view: str) -> tuple[object, ...]:
    """The disk key of candidates in memory (its vectors do not change within a process): the first stage
    (retriever, what it reads, depth), its encoder and the index view."""
    return (*retriever_memo(settings), stage_key(settings, "first_stage"), view)


def reranker_memo(settings: RetrievalSettings) -> tuple[str, str]:
    """A reranker instance: its name and the encoder it is built with (``embedding-maxsim`` uses the study's
    embedding model and prompts, so a name alone would keep the old encoder after a model change)."""
    return (stage_key(settings, "rerank"), settings.encoding)
