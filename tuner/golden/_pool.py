"""Golden set (dataset → **golden drafts**): the candidate pool of a question, TREC-style: the union of the top-``depth``
chunks of BM25, dense and hybrid retrieval, each candidate with its rank in every run, for a person to label; and the
search over the whole knowledge base a reviewer uses when the pool does not hold the answer (:class:`KnowledgeSearch`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tuner.chunking import CONFLICT
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder
from tuner.progress import Reporter, SilentReporter
from tuner.retrieval import ChunkTable, RetrievalPipeline
from tuner.settings import DEFAULT_EMBEDDING_MODEL, FIRST_STAGES, settings_from_mapping

POOL_RETRIEVERS = tuple(FIRST_STAGES)
"""Every first stage: bm25, dense and hybrid (:data:`tuner.settings.FIRST_STAGES`)."""
DEFAULT_DEPTH = 10
_ENGLISH_ONLY = re.compile(r"(^|/)(all-minilm|all-mpnet|all-distilroberta|multi-qa-|msmarco-|bge-(small|base|large)-en|e5-(small|base|large)"
                           r"|gte-(small|base|large)$|nomic-embed-text)", re.IGNORECASE)
"""Embedding models trained on English text only: their dense retrieval is close to random on other languages."""


def embedding_covers(model: str, language: str) -> bool:
    """Whether embedding ``model`` was trained on ``language``: every model covers English; the English-only families
    (:data:`_ENGLISH_ONLY`: MiniLM, MPNet, English BGE/E5/GTE, ...) cover nothing else; other models are assumed to
    (multilingual E5, BGE-M3, ...).

    >>> embedding_covers("all-MiniLM-L6-v2", "zh"), embedding_covers("intfloat/multilingual-e5-small", "zh")
    (False, True)
    """
    return language == "en" or not _ENGLISH_ONLY.search(model)


def embedding_model(kb: Dataset) -> str:
    """The embedding model retrieval uses on ``kb``: its ``dataset.yaml``'s, else the default."""
    return kb.model_defaults.get("embedding_model", DEFAULT_EMBEDDING_MODEL)


_EMBEDDING_RETRIEVERS = tuple(name for name, spec in FIRST_STAGES.items() if spec.needs_vectors)
"""Pool retrievers that embed the corpus: the language rule of :func:`default_pool` leaves them out together."""


def default_pool(kb: Dataset) -> tuple[str, ...]:
    """The pool's retrievers on ``kb``: :data:`POOL_RETRIEVERS`, without the ones that embed (``dense`` and ``hybrid``)
    when the embedding model does not cover the knowledge base's language: hybrid's dense half would rank at random
    and embedding the corpus costs most of the run, for nothing BM25 alone does not find."""
    if embedding_covers(embedding_model(kb), kb.language):
        return POOL_RETRIEVERS
    return tuple(name for name in POOL_RETRIEVERS if name not in _EMBEDDING_RETRIEVERS)


def parse_pool(text: str) -> tuple[str, ...]:
    """``--pool bm25,dense,hybrid`` as retriever names (each one of :data:`POOL_RETRIEVERS`, in that order)."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in POOL_RETRIEVERS]
    if unknown or not names:
        raise ValueError(f"--pool: unknown retriever {unknown[0]!r} (pool retrievers: {', '.join(POOL_RETRIEVERS)})" if unknown
                         else f"--pool: name at least one of {', '.join(POOL_RETRIEVERS)}")
    return tuple(name for name in POOL_RETRIEVERS if name in names)


def choose_pool(kb: Dataset, names: str | None) -> tuple[tuple[str, ...], str | None]:
    """The pool retrievers of the drafts ``tuner golden from-log`` and ``synth`` write on ``kb``: ``names`` (``--pool``,
    :func:`parse_pool`: ``ValueError`` on a bad name) when given, else :func:`default_pool`; and, when the default left
    retrievers out, the one line that says so (else ``None``)."""
    if names is not None:
        return parse_pool(names), None
    pool = default_pool(kb)
    if pool == POOL_RETRIEVERS:
        return pool, None
    left_out = " and ".join(name for name in POOL_RETRIEVERS if name not in pool)
    return pool, (f"pool: {', '.join(pool)}; {left_out} left out: {embedding_model(kb)} does not cover this knowledge base's "
                  f"language ({kb.language}); --pool bm25,dense,hybrid puts them back")


def pool_order(ranks: dict[str, int | None]) -> tuple[int, int]:
    """Sort key of a candidate: its best rank in any run, then the sum of its ranks (a missing rank counts as one
    past the pool depth, 10 000 here), so what every retriever agrees on comes first."""
    present = [r for r in ranks.values() if r is not None]
    return min(present, default=10_000), sum(r if r is not None else 10_000 for r in ranks.values())


def build_pools(
    kb: Dataset,
    questions: Sequence[str],
    depth: int = DEFAULT_DEPTH,
    *,
    encoder: CachedEncoder | None = None,
    reporter: Reporter | None = None,
    retrievers: Sequence[str] = POOL_RETRIEVERS,
) -> list[list[dict[str, Any]]]:
    """Per question, its pool: ``{doc_id, chunk_id, title, text, ranks: {bm25, dense, hybrid}}`` (rank 1 = best,
    ``None`` when that run did not return the chunk in its top ``depth``; one key per name of ``retrievers``), in
    :func:`pool_order`.

    Retrieval is tuner's own, over the knowledge base's corpus (conflicting documents left out) with the default
    chunking and the models its ``dataset.yaml`` names, so the chunks a reviewer labels are the chunks a study
    retrieves."""
    if not questions:
        return []
    # searched directly rather than through the candidate cache, whose keys cover the dataset's golden questions only
    pipeline = RetrievalPipeline(kb, reporter=reporter or SilentReporter(), encoder=encoder)
    return _pools(pipeline, questions, depth, retrievers, pipeline.reporter)


def _pools(pipeline: RetrievalPipeline, questions: Sequence[str], depth: int, retrievers: Sequence[str],
           reporter: Reporter | None = None, scored_only: bool = False) -> list[list[dict[str, Any]]]:
    pools: list[dict[int, dict[str, int | None]]] = [{} for _ in questions]
    table = None
    for name in retrievers:
        settings = settings_from_mapping({"retriever": name, "candidate_depth": depth, "top_k": depth}, "pool settings",
                                         pipeline.dataset.model_defaults)
        table = pipeline.table(settings)
        hits = pipeline.retriever(settings).search(list(questions), depth, table.mask("clean"))
        if reporter is not None:
            reporter.stage(f"pool: {name} top {depth} of {len(questions)} questions over {len(table.chunks)} chunks")
        for row, pool in enumerate(pools):
            for rank, (index, score) in enumerate(zip(hits.indices[row][:depth], hits.scores[row][:depth]), start=1):
                # scored_only: BM25 pads its top depth with chunks sharing no term (score 0), which a search box must not show
                if index >= 0 and (score > 0 or not scored_only):
                    pool.setdefault(int(index), dict.fromkeys(retrievers))[name] = rank
    assert table is not None, "name at least one pool retriever"  # the runs share one chunk table
    result = []
    for pool in pools:
        entries = []
        for index, ranks in sorted(pool.items(), key=lambda item: pool_order(item[1])):
            chunk = table.chunks[index]
            entries.append({"doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id, "title": chunk.title, "text": chunk.text,
                            "ranks": ranks})
        result.append(entries)
    return result


SEARCH_DEPTH = 50
"""The most results one search of the review app returns."""


class KnowledgeSearch:
    """Search over every chunk of a knowledge base, as the review app's search box does: BM25 in the knowledge base's
    language, and dense too when the embedding model covers that language (:func:`embedding_covers`); results merge
    like a pool (:func:`pool_order`). The chunks are the ones a study retrieves (default chunking), so a chunk found
    here labels the same chunk ids as the pool's."""

    def __init__(self, kb: Dataset, encoder: CachedEncoder | None = None, reporter: Reporter | None = None) -> None:
        self.kb = kb
        self.retrievers = tuple(name for name in ("bm25", "dense") if name in default_pool(kb))
        self._pipeline = RetrievalPipeline(kb, reporter=reporter or SilentReporter(), encoder=encoder)
        self._table: ChunkTable | None = None

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        """The top ``k`` chunks for ``query`` (``{doc_id, chunk_id, title, text, ranks}``, best first); only chunks the
        query scores above 0 (BM25: sharing a term with it), so a query nothing matches finds nothing."""
        if not 1 <= k <= SEARCH_DEPTH:
            raise ValueError(f"k must be from 1 to {SEARCH_DEPTH}, got {k}")
        if not query.strip():
            raise ValueError("the search text is empty")
        return _pools(self._pipeline, [query], k, self.retrievers, scored_only=True)[0][:k]

    def chunk(self, chunk_id: str) -> dict[str, Any] | None:
        """The chunk ``chunk_id`` of the knowledge base (``{doc_id, chunk_id, title, text}``), ``None`` when there is none."""
        if self._table is None:
            settings = settings_from_mapping({"retriever": "bm25"}, "search settings", self.kb.model_defaults)
            self._table = self._pipeline.table(settings)
        found = next((c for c in self._table.chunks if c.chunk_id == chunk_id and c.source != CONFLICT), None)
        if found is None:
            return None
        return {"doc_id": found.doc_id, "chunk_id": found.chunk_id, "title": found.title, "text": found.text}
