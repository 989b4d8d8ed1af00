"""Engine (indexes → **candidates in an engine** → ranking): a :class:`tuner.retrieval.RetrievalPipeline` whose first
stage runs in Milvus (the ``milvus`` engine's, :class:`tuner.engine.MilvusEngine`).

Chunking, the embedding of chunks (to build a collection) and of questions, reranking, version handling, dedupe,
the threshold and top_k stay tuner's, over the engine's candidates, so every figure of a trial is computed as on the
memory engine except the first stage's scores (:mod:`tuner.engine._search`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tuner.cache import DiskCache, content_key
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder, EmbeddingContext
from tuner.engine._attach import (
    NOISE_ROWS, AttachedStore, AttachedTable, KeyScan, attach, attached_collection, attached_content, check_dimension,
    check_doc_ids, check_model, doc_values, key_scan, named_documents,
)
from tuner.engine._collections import Collection, connect, ensure_collection
from tuner.engine._config import MilvusConfig
from tuner.engine._search import (
    BM25Ceiling, MilvusFirstStage, filter_expression, index_knobs, mask_expression, unread_expression,
)
from tuner.errors import UserError
from tuner.progress import Reporter
from tuner.retrieval import (
    Candidates, ChunkTable, ChunkVersions, Hits, RetrievalPipeline, chunk_versions, first_stage_reads,
)
from tuner.settings import RetrievalSettings


class MilvusPipeline(RetrievalPipeline):
    """Retrieval over ``dataset`` with the first stage searched in ``engine``: per chunk configuration and embedding
    model one collection (:func:`ensure_collection`), per first-stage group the candidates of every question searched
    there once per process (not kept on disk: the engine is what is measured).

    In attach mode (``engine.collection``) the collection is the team's: its schema is checked here (:func:`attach`),
    its rows are read back on first use and are the chunk table whatever the chunking settings say, its vectors
    must be of the settings' embedding model (:func:`check_dimension`, and :func:`check_model` on a sample of its
    texts), filters go to the engine as primary keys, and nothing is written to it."""

    def __init__(self, dataset: Dataset, engine: MilvusConfig, cache: DiskCache | None = None,
                 reporter: Reporter | None = None, embeddings: EmbeddingContext | None = None,
                 encoder: CachedEncoder | None = None) -> None:
        super().__init__(dataset, cache, reporter, encoder, embeddings)
        self.engine = engine
        self.client = connect(engine, create=engine.collection is None)  # attach mode only reads
        self._collections: dict[str, Collection] = {}
        self._stages: dict[str, MilvusFirstStage] = {}
        self._schema = attach(self.client, engine) if engine.collection is not None else None
        self._store: AttachedStore | None = None
        self._scan: KeyScan | None = None
        self._content: dict[str, Any] | None = None
        self._attached_tables: dict[str, AttachedTable] = {}
        self._attached_versions: dict[tuple[object, ...], ChunkVersions] = {}
        # an attached collection holds the team's chunks: its own conflicting rows, once read, are the only ones the
        # all view searches (the dataset's conflicts are never put into it)
        self.searches_conflicts = self._schema is None

    @property
    def rows_read(self) -> int | None:
        """The rows of the attached collection read so far (:attr:`AttachedStore.fetched`; None before any, or without
        one)."""
        return None if self._store is None else self._store.fetched

    def described(self) -> dict[str, Any]:
        """The engine as a study records it (:meth:`tuner.engine.MilvusEngine.described`), for an attached collection with its
        primary ``key`` field and vector ``metric`` (what the export's search names and sends) and what its content is (:func:`attached_content`: ``rows``
        and a ``content`` digest, read once), so that a study resumed on other rows is refused."""
        described = self.engine.described()
        if self._schema is None or self.engine.fields is None:
            return described
        return {**described, "key": self._schema.key, "metric": self._schema.metric, **self._attached_content()}

    def _attached_content(self) -> dict[str, Any]:
        """:func:`attached_content` of the attached collection, from one :func:`key_scan` of its keys (which also
        picks the sample :class:`AttachedStore` reads), once per process."""
        assert self._schema is not None and self.engine.fields is not None, "attach mode"
        if self._content is None:
            fields = self.engine.fields
            self._scan = key_scan(self.client, self._schema.name, self._schema.key, self.reporter, NOISE_ROWS,
                                  fields.doc_id, doc_values(named_documents(self.dataset), self._schema.doc_type))
            self._content = attached_content(self.client, self._schema.name, self._schema.key,
                                             [fields.text, fields.doc_id, *fields.metadata_fields], fields.vector,
                                             self.reporter, self._scan)
        return self._content

    def collection(self, settings: RetrievalSettings) -> Collection:
        """The complete, verified collection of ``settings``' chunks and embedding model (built on first use), or the
        attached collection, its questions embedded by ``settings``' model."""
        if self._schema is not None:
            return self._attached(settings)
        table = self.table(settings)
        if table.key + table.encoder.vector_id not in self._collections:
            collection = ensure_collection(self.client, self.engine, table, self.dataset.language,
                                           lambda: self.chunk_vectors(settings), self._metadata,
                                           self.dataset.path.name, self.reporter)
            self._collections[table.key + table.encoder.vector_id] = collection
        return self._collections[table.key + table.encoder.vector_id]

    def engine_collection(self, settings: RetrievalSettings) -> str:
        return self.collection(settings).name

    def _attached(self, settings: RetrievalSettings) -> Collection:
        assert self._schema is not None and self.engine.fields is not None, "attach mode"
        fields = self.engine.fields
        key = f"{settings.embedding_model} {settings.chunking}"  # the model embeds questions; chunking cuts v3's conflicts
        if key not in self._collections:
            encoder = self.encoder(settings)
            check_dimension(self._schema, fields.vector, settings.embedding_model, encoder.inner.dim)
            if self._store is None:
                content = self._attached_content()
                assert self._scan is not None
                self._store = AttachedStore(self.client, self.engine, self._schema, self.dataset, self._scan,
                                            content_key("attached-chunks", self._schema.name, content), self.reporter)
                check_doc_ids(self._store.view(), self.dataset, self._schema, fields.doc_id, self.reporter)
                self.searches_conflicts = bool(self._store.conflicting)
            check_model(self._store.view(), encoder, self._schema, fields.vector, settings.embedding_model)
            self._attached_tables[key] = AttachedTable(self._store, super().table(settings), self.dataset.language)
            self._collections[key] = attached_collection(self.client, self._schema, self._attached_tables[key],
                                                         fields.sparse, fields.vector)
        return self._collections[key]

    def table(self, settings: RetrievalSettings) -> ChunkTable:
        """``settings``' chunk table; in attach mode the collection's rows read so far (chunking settings do not
        act), then the dataset's conflicting chunks (:class:`AttachedTable`)."""
        if self._schema is None:
            return super().table(settings)
        self._attached(settings)
        return self._attached_tables[f"{settings.embedding_model} {settings.chunking}"].now()

    def chunk_vectors(self, settings: RetrievalSettings) -> np.ndarray:
        """The chunks' unit vectors; in attach mode the collection's own (not embedded again)."""
        return super().chunk_vectors(settings) if self._schema is None else self.table(settings).embeddings()

    def versions(self, settings: RetrievalSettings, view: str = "clean") -> ChunkVersions:
        """:meth:`RetrievalPipeline.versions`; in attach mode over the rows read so far (the documents of the rows
        read, whose families are read whole with them: a row's staleness is the collection's, the newest date the
        recency knob counts from is the newest among them)."""
        if self._schema is None:
            return super().versions(settings, view)
        table = self.table(settings)
        key = (table.key, len(table), view)
        if key not in self._attached_versions:
            self._attached_versions[key] = chunk_versions([c.doc_id for c in table.chunks], self.metadata_of,
                                                          table.mask(view))
        return self._attached_versions[key]

    def metadata_of(self, doc_id: str) -> Mapping[str, Any]:
        """A document's metadata: the dataset's, or in attach mode the collection's (``fields.metadata``) for a
        document of the collection (the dataset's for its conflicting documents)."""
        if self._store is None or doc_id not in self._store.metadata:
            return super().metadata_of(doc_id)
        return self._store.metadata[doc_id]

    def _metadata(self, doc_id: str) -> dict[str, Any]:
        return dict(self.dataset.metadata_of(doc_id))

    def retriever(self, settings: RetrievalSettings) -> MilvusFirstStage:
        """``settings``' first stage searched in its collection, with the search knobs of the collection's index
        (:func:`index_knobs`: ``dense_index`` does not act, the index is the engine's)."""
        collection = self.collection(settings)
        if settings.retriever != "dense" and not collection.sparse:
            raise UserError(f"engine: retriever {settings.retriever} needs BM25, and collection {collection.name} has "
                            "none (fields.sparse: the output field of its BM25 function): retriever dense searches it")
        # what the first stage reads (its registry entry's settings that act, but the depth: each search is given its
        # own, so one stage serves every candidate_depth), its query prompt and the index's knobs
        reads = {name: value for name, value in first_stage_reads(settings).items() if name != "candidate_depth"}
        key = content_key(collection.name, collection.table.key, reads, settings.query_prompt,
                          index_knobs(collection.index, settings))
        if key not in self._stages:
            query_encoder = self.encoder(settings).with_prompt(settings.query_prompt)
            self._stages[key] = MilvusFirstStage(collection, settings, query_encoder, BM25Ceiling.of(collection, self.cache))
        return self._stages[key]

    def candidates_key(self, settings: RetrievalSettings, view: str = "clean") -> str:
        """The candidates of ``settings`` in ``view``: the collection searched (with its content), what the first stage
        reads and the knobs of the collection's index it searches with (the rerank scores cached on disk are keyed by
        it)."""
        collection = self.collection(settings)
        return content_key("milvus-candidates", collection.name, collection.table.key, first_stage_reads(settings),
                           settings.active_filter, view, index_knobs(collection.index, settings))

    def candidates(self, settings: RetrievalSettings, view: str = "clean") -> Candidates:
        """Candidates of every golden question, searched in the engine within :func:`filter_expression` (in attach
        mode: the rows read of :meth:`searched` by primary key, the others by :func:`unread_expression`; searched
        again while a search returned a row that reading it showed to be outside the view, a stale version read for
        the first time, until none does)."""
        key = self.candidates_key(settings, view)
        if key not in self._candidates:
            retriever = self.retriever(settings)
            if self._schema is None:
                hits = retriever.search_where(self.queries, settings.candidate_depth, filter_expression(settings, view))
            else:
                hits = self._attached_search(retriever, settings, view)
            self._candidates[key] = Candidates(hits.indices, hits.scores, key)
        return self._candidates[key]

    def _attached_search(self, retriever: MilvusFirstStage, settings: RetrievalSettings, view: str) -> Hits:
        assert self._store is not None and self.engine.fields is not None, "attach mode"
        unread = unread_expression(settings, view, self.engine.fields)
        while True:
            allowed = self.searched(settings, view)
            hits = retriever.search_where(self.queries, settings.candidate_depth,
                                          mask_expression(allowed, retriever.collection, unread))
            self.searches_conflicts = bool(self._store.conflicting)
            allowed = self.searched(settings, view)  # the rows just read, judged
            if allowed is None or allowed[hits.indices[hits.indices >= 0]].all():
                return hits

    def searched(self, settings: RetrievalSettings, view: str = "clean") -> np.ndarray | None:
        """The chunks the first stage searches in ``view``; an attached collection has views other than ``clean``
        only where some of its own rows are known to conflict (:func:`conflicting_documents`): the dataset's
        conflicting documents cannot be put into it."""
        if self._schema is not None and view != "clean":
            self._attached(settings)
            if not self.searches_conflicts:
                raise UserError(f"engine: no row of the attached collection {self._schema.name} is known to conflict "
                                "(conflicts.jsonl names none of its doc ids, and no document's metadata shows an older "
                                "version of a family): v3 in_index has nothing to search; use variants.hard_mode: "
                                "inject (--hard-mode inject)")
        return super().searched(settings, view)

