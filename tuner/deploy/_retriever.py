"""Deploy (front → export → **serve**): the retrieval a trial measured, as a library object over a live corpus.

Every step is the study's own code: chunks from :func:`tuner.chunking.chunk_dataset`, the chunk table and its
indexes from :class:`tuner.retrieval.RetrievalPipeline` and the ``RETRIEVERS`` registry (or, on a Milvus engine, the
first stage searched in the collection :class:`tuner.engine.MilvusPipeline` builds), second-stage scores
from the pipeline's reranker, and the blend, threshold and ``top_k`` from :func:`tuner.retrieval.final_ranking`.
Only the questions differ: a trial ranks its golden questions, a :class:`Retriever` any question it is asked.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tuner.cache import DiskCache
from tuner.chunking import CONFLICT, Chunk, chunk_dataset
from tuner.dataset import Dataset, Document, load_dataset, resolve_dataset
from tuner.deploy._engine import serving_engine
from tuner.embedding import BatchingEncoder, CachedEncoder, EmbeddingContext, ServingStore
from tuner.errors import EngineCorpus as EngineCorpus  # its home before issue 53; tuner.deploy exports it
from tuner.engine import Engine, MemoryEngine, MilvusFirstStage, filter_expression, mask_expression
from tuner.text import Language, detect_language
from tuner.export import ExportedConfig, read_export
from tuner.rerank import Reranker
from tuner.retrieval import (
    RETRIEVERS,
    ChunkTable,
    ChunkVersions,
    Condition,
    FirstStage,
    Hits,
    chunk_versions,
    condition_mask,
    filter_mask,
    final_ranking,
    first_stage_mask,
    rerank_row,
)
from tuner.settings import RetrievalSettings

Corpus = str | Path | Dataset | Sequence[Document]
"""A dataset folder (or ``demo``), a loaded :class:`Dataset`, or documents."""


@dataclass(frozen=True)
class RetrievedChunk:
    """One retrieved chunk: its text, the document it comes from, its character ``span`` in that document's
    text, its final score in [0, 1] (the blend the trial measured) and metadata (chunk id, title, source,
    and the document's own metadata)."""

    text: str
    doc_id: str
    span: tuple[int, int]
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "doc_id": self.doc_id, "span": list(self.span), "score": self.score, "metadata": self.metadata}


@dataclass(frozen=True)
class _Index:
    """One immutable version of the corpus: its chunk table and first stage. Queries read whichever version
    is current; an update builds the next one beside it and swaps it in whole."""

    table: ChunkTable
    first_stage: FirstStage
    documents: Mapping[str, Document]
    versions: ChunkVersions | None = None

    def metadata_of(self, doc_id: str) -> Mapping[str, Any]:
        """A document's metadata (none for one not in this version), what filters and versions read."""
        document = self.documents.get(doc_id)
        return document.metadata if document is not None else {}


def _in_memory_dataset(documents: Sequence[Document], language: Language) -> Dataset:
    """Documents as a corpus-only :class:`Dataset` (what the chunker reads), keyed by their content."""
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(json.dumps([doc.doc_id, doc.title, doc.text], ensure_ascii=False).encode("utf-8"))
    return Dataset(Path("<documents>"), tuple(documents), (), content_hash=digest.hexdigest(), language=language)


def _embeds(settings: RetrievalSettings) -> bool:
    """Whether retrieving with ``settings`` runs the embedding model: a first stage that searches vectors, a rerank
    (its reranker may embed sentences) or ``dedupe`` (it compares chunk vectors). BM25 alone never does.

    >>> _embeds(RetrievalSettings(retriever="bm25")), _embeds(RetrievalSettings(retriever="hybrid"))
    (False, True)
    >>> _embeds(RetrievalSettings(retriever="bm25", dedupe=0.9)), _embeds(RetrievalSettings(retriever="bm25", rerank_strength=0.3))
    (True, True)
    """
    return RETRIEVERS[settings.retriever].needs_vectors or settings.ranking.reranks or settings.ranking.reads_vectors


def _table_key(chunks: Sequence[Chunk], model: str) -> str:
    digest = hashlib.sha256(model.encode("utf-8"))
    for chunk in chunks:
        digest.update(json.dumps(chunk.__dict__, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    return f"deploy-{digest.hexdigest()}"


class Retriever:
    """The retrieval of one configuration over a corpus, as a trial of the study measured it.

    >>> retriever = Retriever.from_config("deploy.yaml", corpus="data/shop")  # doctest: +SKIP
    >>> [(c.doc_id, round(c.score, 2)) for c in retriever.retrieve("How long is the warranty?")]  # doctest: +SKIP
    [('warranty', 0.71)]

    A dataset folder's conflicting documents are chunked and indexed as in the study (so BM25 statistics, and
    with them every score, are the trial's) but are never returned: they are the noise the study measured
    against, not content. ``add_documents`` and ``delete_documents`` are safe while other threads retrieve.

    The questions of concurrent ``retrieve`` calls are embedded together, one forward pass for the questions that
    arrive within ``batch_wait`` seconds of each other (up to ``batch_texts``; see :class:`BatchingEncoder`;
    ``batch_wait`` 0: each alone). ``embeddings`` runs the model (default: a context of its own, torch on the
    best device); give several retrievers of one process the same context and they load the model once.

    ``engine`` is where the first stage runs: in this process (the default), or in Milvus, over the collection of
    the dataset's chunks that a study on that engine built (built here when it is missing), within the trial's own
    filter expression and the request's filters as chunk ids (:meth:`_first_stage`); the corpus is then the
    collection's, and ``add_documents`` / ``delete_documents`` raise :class:`EngineCorpus`.
    """

    def __init__(self, settings: RetrievalSettings, dataset: Dataset, cache: DiskCache | None = None,
                 provenance: Mapping[str, Any] | None = None, batch_wait: float = 0.003, batch_texts: int = 32,
                 embeddings: EmbeddingContext | None = None, engine: Engine = MemoryEngine()) -> None:
        self.settings = settings
        self.provenance = dict(provenance or {})
        self.engine = engine
        cache = cache or DiskCache()
        stored = (embeddings or EmbeddingContext()).encoder(settings.embedding_model, cache.root)
        self._store = ServingStore(stored.store)
        self.batcher = BatchingEncoder(stored.inner, batch_wait, batch_texts)
        self._pipeline = engine.pipeline(dataset, cache, encoder=CachedEncoder(self.batcher, self._store))
        self._language = dataset.language
        self._write_lock = threading.Lock()
        table = self._pipeline.table(settings)
        documents = {doc.doc_id: doc for doc in dataset.corpus}
        self._index = self._index_of(table, self._pipeline.retriever(settings), documents)
        self._reranker: Reranker | None = self._pipeline.reranker(settings) if settings.ranking.reranks else None
        self._prepare(table.chunks)
        # on a warm cache every vector above came from the store and the model is not loaded yet: load it now, or
        # the first request waits for it (98 s under load 20 in bench/serve.py); a configuration that never embeds
        # leaves it unloaded (torch and sentence-transformers are ~8 s of CPU to import)
        if _embeds(settings):
            _ = self.batcher.dim
        self._store.serve()  # built: from here on a request embeds its question and writes nothing to the store

    def _prepare(self, chunks: Iterable[Chunk]) -> None:
        """The reranker's work over ``chunks`` that can be returned (sentence vectors for maxsim), done before any
        request needs it."""
        if self._reranker is not None:
            self._reranker.prepare([chunk.passage for chunk in chunks if chunk.source != CONFLICT])

    @classmethod
    def from_config(cls, path: str | Path, corpus: Corpus, cache: DiskCache | None = None,
                    embeddings: EmbeddingContext | None = None, engine: Engine = MemoryEngine()) -> Retriever:
        """The retriever an export of ``tuner export`` (``.yaml``, ``.json`` or ``.env``) describes, over ``corpus``:
        a dataset folder (or ``demo``), a loaded :class:`Dataset`, or a sequence of :class:`Document`; on ``engine``."""
        exported = read_export(path)
        return cls.from_export(exported, corpus, cache, embeddings=embeddings, engine=engine)

    @classmethod
    def from_export(cls, exported: ExportedConfig, corpus: Corpus, cache: DiskCache | None = None,
                    batch_wait: float = 0.003, batch_texts: int = 32, embeddings: EmbeddingContext | None = None,
                    engine: Engine = MemoryEngine()) -> Retriever:
        """As :meth:`from_config`, from an export already read; a Milvus ``engine`` serves with the dense index the
        export was measured with (:func:`tuner.deploy.serving_engine`)."""
        if isinstance(corpus, Dataset):
            dataset = corpus
        elif isinstance(corpus, (str, Path)):
            dataset = load_dataset(resolve_dataset(str(corpus)))
        else:
            documents = list(corpus)
            dataset = _in_memory_dataset(documents, detect_language(t for doc in documents for t in (doc.title, doc.text)))
        return cls(exported.settings, dataset, cache, exported.provenance, batch_wait, batch_texts, embeddings,
                   serving_engine(engine, exported.provenance))

    @property
    def document_count(self) -> int:
        return len(self._index.documents)

    @property
    def chunk_count(self) -> int:
        """Chunks that can be returned (conflicting documents of a dataset folder left out)."""
        return int((~self._index.table.is_conflict).sum())

    def served_engine(self) -> dict[str, Any]:
        """Where the first stage runs (:meth:`tuner.engine.MilvusEngine.described`: never a token) and, on an
        engine, the collection it searches."""
        collection = self._pipeline.engine_collection(self.settings)
        return {**self.engine.described(), **({} if collection is None else {"collection": collection})}

    def retrieve(self, query: str, top_k: int | None = None, filters: Mapping[str, Any] | None = None,
                 conditions: Sequence[Condition] = (), logical: Literal["and", "or"] = "and") -> list[RetrievedChunk]:
        """The chunks the configuration returns for ``query``, best first.

        ``top_k`` (at most ``candidate_depth``) overrides the configured one; ``filters`` keeps chunks whose
        field (``doc_id``, ``title``, ``source``, ``kind``, ``severity``) or document metadata equals the
        value, or one of the values of a list; every key must match (:func:`tuner.retrieval.filter_mask`), on top of
        the configured ``metadata_filter``; ``conditions`` (a Dify ``metadata_condition``, joined by ``logical``,
        :func:`tuner.retrieval.condition_mask`) narrow it further. Filtering happens before the first stage, so a
        filtered query still gets up to ``top_k`` chunks."""
        k = self.settings.top_k if top_k is None else top_k
        if not 1 <= k <= self.settings.candidate_depth:
            raise ValueError(f"top_k must be between 1 and candidate_depth ({self.settings.candidate_depth}), got {k}")
        index = self._index
        where = condition_mask(index.table.chunks, index.metadata_of, conditions, logical) if conditions else None
        hits = self._first_stage(index, query, filters, where)
        indices, first = hits.indices[0], hits.scores[0]
        table, versions = index.table, index.versions
        if self.engine.attached:  # the rows the search returned are read by then: the table as read so far
            table = self._pipeline.table(self.settings)
            versions = self._pipeline.versions(self.settings) if versions is not None else None
        rerank = None if self._reranker is None else rerank_row(self._reranker, query, indices, table.passages)
        ranking = replace(self.settings.ranking, top_k=k)
        vectors = table.embeddings() if ranking.reads_vectors else None
        chosen, scores = final_ranking(indices, first, rerank, ranking, versions, vectors)
        return [self._result(index, table.chunks[i], float(s)) for i, s in zip(chosen, scores)]

    def _first_stage(self, index: _Index, query: str, filters: Mapping[str, Any] | None, where: np.ndarray | None) -> Hits:
        """The first stage's candidates of ``query`` among the chunks the trial searched (the corpus, the "clean" view,
        under the configured ``metadata_filter``) that pass the request's ``filters`` and ``where``: here, as one mask
        (:func:`first_stage_mask`); in an engine, as the trial's own filter expression
        (:func:`tuner.engine.filter_expression`) and the request's mask as chunk ids, so that a configured filter over
        a large collection is never sent as a list of ids. An attached collection (attach mode) has none of the fields
        that expression reads: its whole mask goes as primary keys, as a study on it searches."""
        depth, stage = self.settings.candidate_depth, index.first_stage
        if not isinstance(stage, MilvusFirstStage) or self.engine.attached:
            allowed = first_stage_mask(index.table, index.metadata_of, self.settings, "clean", filters, where)
            return stage.search([query], depth, allowed)
        request = filter_mask(index.table.chunks, index.metadata_of, filters) if filters else None
        if where is not None:
            request = where if request is None else request & where
        requested = mask_expression(request, stage.collection)
        if requested is None:  # no chunk passes the request's filters
            return stage.search_where([query], depth, None)
        configured = filter_expression(self.settings, "clean")
        both = f"({configured}) and ({requested})" if configured and requested else configured or requested
        return stage.search_where([query], depth, both)

    def _index_of(self, table: ChunkTable, first_stage: FirstStage, documents: Mapping[str, Document]) -> _Index:
        """An index version; when the ranking reads versions, with the stale flag and age of every chunk among the
        documents that can be returned (conflicting ones are never a newer version), the rule a trial applied."""
        index = _Index(table, first_stage, documents)
        if not self.settings.ranking.reads_versions:
            return index
        return replace(index, versions=chunk_versions([c.doc_id for c in table.chunks], index.metadata_of, ~table.is_conflict))

    @staticmethod
    def _result(index: _Index, chunk: Chunk, score: float) -> RetrievedChunk:
        document = index.documents.get(chunk.doc_id)
        metadata = {"chunk_id": chunk.chunk_id, "title": chunk.title, "source": chunk.source,
                    **(document.metadata if document is not None else {})}
        return RetrievedChunk(chunk.text, chunk.doc_id, (chunk.start, chunk.end), score, metadata)

    def add_documents(self, documents: Iterable[Document]) -> int:
        """Add ``documents``; one with the id of a document already there replaces it (the old version is never
        returned again). Only the new documents are chunked and embedded; the indexes are rebuilt from the
        stored vectors. Returns the number of chunks added."""
        self._writable()
        new = list({doc.doc_id: doc for doc in documents}.values())
        if not new:
            return 0
        fresh = chunk_dataset(_in_memory_dataset(new, self._language), self.settings.chunking)
        with self._write_lock:
            self._prepare(fresh)
            replaced = {doc.doc_id for doc in new}
            self._swap([doc for doc in self._index.documents.values() if doc.doc_id not in replaced] + new,
                       replaced, fresh)
        return len(fresh)

    def delete_documents(self, doc_ids: Iterable[str]) -> int:
        """Remove the documents with these ids (unknown ids are ignored); returns how many were removed."""
        self._writable()
        gone = set(doc_ids) & set(self._index.documents)
        if gone:
            with self._write_lock:
                gone &= set(self._index.documents)
                self._swap([doc for doc in self._index.documents.values() if doc.doc_id not in gone], gone, [])
        return len(gone)

    def _writable(self) -> None:
        """Refuse a write (:class:`EngineCorpus`) when the corpus is an engine collection's."""
        collection = self._pipeline.engine_collection(self.settings)
        if collection is not None and self.engine.attached:
            raise EngineCorpus(f"documents live in the {self.engine.backend} collection {collection}, attached and never "
                               "written by tuner: write them there with your own ingestion")
        if collection is not None:
            raise EngineCorpus(
                f"documents live in the {self.engine.backend} collection {collection}, built from the served dataset and "
                "named by its content: add or remove them in the dataset and restart tuner serve, which builds the "
                "collection of the new content (tuner engine gc removes the old one)")

    def _swap(self, documents: list[Document], removed: set[str], added: list[Chunk]) -> None:
        """Build the index of the corpus without ``removed`` documents and with ``added`` chunks (corpus chunks
        stay before conflicting ones, in document order, as in a fresh build) and make it current."""
        old = self._index.table.chunks
        kept = [c for c in old if c.source != CONFLICT and c.doc_id not in removed]
        conflicts = [c for c in old if c.source == CONFLICT]
        chunks = kept + added + conflicts
        table = ChunkTable(chunks, _table_key(chunks, self.settings.embedding_model), self._pipeline.encoder(self.settings),
                           self._index.table.language)
        first_stage = RETRIEVERS[self.settings.retriever].build(table, self.settings, self._pipeline.cache)
        self._index = self._index_of(table, first_stage, {doc.doc_id: doc for doc in documents})
