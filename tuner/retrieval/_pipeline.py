"""Candidates (indexes → **candidates** → ranking): retrieval over one dataset with every expensive step cached on disk."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tuner.cache import DiskCache
from tuner.chunking import Chunk
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder, EmbeddingContext
from tuner.progress import LoggedTask, Reporter, SilentReporter
from tuner.rerank import Reranker, build_reranker
from tuner.retrieval._base import RETRIEVERS, FirstStage
from tuner.retrieval._filter import first_stage_mask
from tuner.retrieval._keys import candidates_key, candidates_memo, rerank_key, reranker_memo, retriever_memo, table_memo
from tuner.retrieval._latency import LATENCY_QUESTIONS, SearchLatency
from tuner.retrieval._ranking import ChunkVersions, chunk_versions, final_ranking, rerank_row
from tuner.retrieval._table import ChunkTable, load_chunk_table
from tuner.settings import RetrievalSettings


@dataclass(frozen=True)
class Candidates:
    """First-stage candidates of every golden question at the full candidate depth (−1 = empty slot)."""

    indices: np.ndarray
    scores: np.ndarray
    key: str


@dataclass(frozen=True)
class RetrievedContext:
    """The final context of one golden case: chunks in rank order with their final scores."""

    case_id: str
    chunks: tuple[Chunk, ...]
    scores: tuple[float, ...]

    @property
    def doc_ids(self) -> list[str]:
        return [c.doc_id for c in self.chunks]

    @property
    def passages(self) -> list[str]:
        return [c.passage for c in self.chunks]


def _save_arrays(folder: Path, **arrays: np.ndarray) -> None:
    # numeric arrays only: _load_arrays refuses pickled objects, so refuse them on the way in too
    np.savez(folder / "arrays.npz", allow_pickle=False, **arrays)


def _load_arrays(folder: Path) -> dict[str, np.ndarray]:
    with np.load(folder / "arrays.npz") as data:
        return {name: data[name] for name in data.files}


class RetrievalPipeline:
    """Retrieval over one dataset for any :class:`RetrievalSettings`, with every expensive step cached.

    Per chunk configuration the chunks (and their embeddings, per text) are computed once; per
    (chunk configuration, retriever, index view) the candidates of every golden question are computed
    once at ``candidate_depth``; per reranker their rerank scores once. A settings change that only
    touches ``top_k``, ``relevance_threshold`` or ``rerank_strength`` is then pure array work. Every key is
    derived in :mod:`tuner.retrieval._keys`. ``embeddings`` runs and stores the vectors of every model the settings
    name (default: a context of its own); ``encoder``, when given, is used for its model instead.

    >>> pipeline = RetrievalPipeline(load_dataset("data/demo"))  # doctest: +SKIP
    >>> contexts = pipeline.retrieve(RetrievalSettings(top_k=4))  # doctest: +SKIP
    """

    searches_conflicts = True
    """Whether the ``all`` view searches the dataset's conflicting documents beside the corpus (what conflict exposure
    and v3 ``in_index`` read); a retrieval service has only its own index."""

    def __init__(
        self,
        dataset: Dataset,
        cache: DiskCache | None = None,
        reporter: Reporter | None = None,
        encoder: CachedEncoder | None = None,
        embeddings: EmbeddingContext | None = None,
    ) -> None:
        self.dataset = dataset
        self.embeddings = embeddings or EmbeddingContext()
        self.cache = cache or DiskCache()
        self.reporter = reporter or SilentReporter()
        self.queries = [case.question for case in dataset.golden]
        self._encoder = encoder
        self._tables: dict[tuple[object, ...], ChunkTable] = {}
        self._retrievers: dict[tuple[object, ...], FirstStage] = {}
        self._candidate_keys: dict[tuple[object, ...], str] = {}
        self._candidates: dict[str, Candidates] = {}
        self._rerank: dict[str, np.ndarray] = {}
        self._rerankers: dict[tuple[str, str], Reranker] = {}
        self._versions: dict[tuple[object, ...], ChunkVersions] = {}
        self._latency: dict[tuple[object, ...], SearchLatency] = {}

    def encoder(self, settings: RetrievalSettings) -> CachedEncoder:
        """The encoder of chunks and sentences: ``settings``' embedding model with its document prompt."""
        if self._encoder is None or self._encoder.model_id != settings.embedding_model:
            self._encoder = self.embeddings.encoder(settings.embedding_model, self.cache.root)
        return self._encoder.with_prompt(settings.document_prompt)

    def query_vectors(self, settings: RetrievalSettings) -> np.ndarray:
        """The golden questions' vectors: ``settings``' embedding model with its query prompt, in dataset order."""
        return self.encoder(settings).with_prompt(settings.query_prompt).encode(self.queries)

    def table(self, settings: RetrievalSettings) -> ChunkTable:
        """The chunk table of ``settings``' chunking, with the embeddings of its model and document prompt."""
        key = table_memo(settings)
        if key not in self._tables:
            self._tables[key] = load_chunk_table(self.dataset, settings.chunking, self.cache, self.encoder(settings))
        return self._tables[key]

    def _embed_table(self, table: ChunkTable) -> None:
        todo = table.encoder.missing(table.passages)
        if todo:
            with self.reporter.task(f"embedding {len(todo)} new chunks", len(todo)) as task:
                # a line every few seconds too, for logs and pipes where the bar is hidden
                table.encoder.encode(todo, task=LoggedTask(task, self.reporter, lambda done: f"embedding: {done} of {len(todo)} chunks"))

    def retriever(self, settings: RetrievalSettings) -> FirstStage:
        key = retriever_memo(settings)
        if key not in self._retrievers:
            table = self.table(settings)
            entry = RETRIEVERS[settings.retriever]
            if entry.needs_vectors:
                self._embed_table(table)
            self._retrievers[key] = entry.build(table, settings, self.cache)
        return self._retrievers[key]

    def candidates_key(self, settings: RetrievalSettings, view: str = "clean") -> str:
        """The cache key of :meth:`candidates`; for a retriever that needs vectors it hashes the chunk and question
        vectors, which are encoded (or read from the embedding store) here, once per process."""
        memo = candidates_memo(settings, view)
        if memo not in self._candidate_keys:
            table = self.table(settings)
            vectors = None
            if RETRIEVERS[settings.retriever].needs_vectors:
                self._embed_table(table)
                vectors = (table.embeddings(), self.query_vectors(settings))
            self._candidate_keys[memo] = candidates_key(settings, table.key, view, vectors)
        return self._candidate_keys[memo]

    def candidates(self, settings: RetrievalSettings, view: str = "clean") -> Candidates:
        """Candidates of every golden question for ``settings`` in index ``view`` (see ``ChunkTable.mask``)."""
        key = self.candidates_key(settings, view)
        if key not in self._candidates:

            def build(folder: Path) -> None:
                hits = self.retriever(settings).search(self.queries, settings.candidate_depth, self.searched(settings, view))
                _save_arrays(folder, indices=hits.indices, scores=hits.scores)

            arrays = self.cache.get_or_build("candidates", key, build, _load_arrays)
            self._candidates[key] = Candidates(arrays["indices"], arrays["scores"], key)
        return self._candidates[key]

    def search_latency(self, settings: RetrievalSettings, view: str = "clean") -> SearchLatency | None:
        """How long ``settings``' first stage takes to search one question (:class:`SearchLatency`), timed once per
        first-stage configuration in this process over the first :data:`LATENCY_QUESTIONS` golden questions, each
        searched alone after one untimed pass over them all (which encodes their vectors and warms the index). Not
        cached on disk: a time belongs to the machine and the moment it was taken."""
        memo = candidates_memo(settings, view)
        if memo not in self._latency:
            retriever, allowed = self.retriever(settings), self.searched(settings, view)
            questions = self.queries[:LATENCY_QUESTIONS]
            retriever.search(questions, settings.candidate_depth, allowed)
            seconds = []
            for question in questions:
                start = time.perf_counter()
                retriever.search([question], settings.candidate_depth, allowed)
                seconds.append(time.perf_counter() - start)
            self._latency[memo] = SearchLatency.of(seconds)
        return self._latency[memo]

    def metadata_of(self, doc_id: str) -> Mapping[str, Any]:
        """The metadata of document ``doc_id`` that filters and version knobs read (the dataset's)."""
        return self.dataset.metadata_of(doc_id)

    def searched(self, settings: RetrievalSettings, view: str = "clean") -> np.ndarray | None:
        """The chunks the first stage searches in index ``view`` (:func:`first_stage_mask` over the corpus and
        conflicting documents' metadata)."""
        return first_stage_mask(self.table(settings), self.metadata_of, settings, view)

    def engine_collection(self, settings: RetrievalSettings) -> str | None:
        """The engine collection ``settings``' first stage searches: None here, where it searches this process's own
        index (an engine's pipeline names its collection, what a trial records and an export names)."""
        return None

    def retrieval_warning(self) -> str | None:
        """What a trial warns of its last retrieval (None here: tuner's own retrieval of the golden set's corpus; a
        service's records that matched no golden document, :class:`tuner.external.ExternalPipeline`)."""
        return None

    def rerank_scores(self, settings: RetrievalSettings, view: str = "clean") -> np.ndarray:
        candidates = self.candidates(settings, view)
        key = rerank_key(settings, candidates.key, self.encoder(settings).inner.vector_backend)
        if key not in self._rerank:

            def build(folder: Path) -> None:
                table = self.table(settings)
                reranker = self.reranker(settings)
                scores = np.zeros(candidates.indices.shape, dtype=np.float32)
                reached = [table.passages[i] for i in np.unique(candidates.indices[candidates.indices >= 0])]
                with self.reporter.task(f"preparing {reranker.model_id} for {len(reached)} candidates", len(reached)) as task:
                    reranker.prepare(reached, task)
                with self.reporter.task(f"reranking with {reranker.model_id}", len(self.queries)) as task:
                    for row, query in enumerate(self.queries):
                        scores[row] = rerank_row(reranker, query, candidates.indices[row], table.passages)
                        task.advance()
                _save_arrays(folder, scores=scores)

            self._rerank[key] = self.cache.get_or_build("rerank", key, build, _load_arrays)["scores"]
        return self._rerank[key]

    def reranker(self, settings: RetrievalSettings) -> Reranker:
        key = reranker_memo(settings)
        if key not in self._rerankers:
            self._rerankers[key] = build_reranker(settings.reranker, self.encoder(settings), settings.query_prompt)
        return self._rerankers[key]

    def versions(self, settings: RetrievalSettings, view: str = "clean") -> ChunkVersions:
        """Which chunks of ``settings``' table are stale in index ``view``, and how old (from the documents' metadata)."""
        key = (table_memo(settings), view)
        if key not in self._versions:
            table = self.table(settings)
            self._versions[key] = chunk_versions([c.doc_id for c in table.chunks], self.metadata_of, table.mask(view))
        return self._versions[key]

    def chunk_vectors(self, settings: RetrievalSettings) -> np.ndarray:
        """The normalized vectors of ``settings``' chunks (embedded on first use, also for BM25): what dedupe compares."""
        table = self.table(settings)
        self._embed_table(table)
        return table.embeddings()

    def retrieve(
        self, settings: RetrievalSettings, view: str = "clean", ahead: np.ndarray | None = None
    ) -> list[RetrievedContext]:
        """The final context of every golden case, in dataset order (``ahead``: chunks of the table put first among
        exactly tied scores, :func:`final_ranking`; None keeps first-stage order, what every figure uses)."""
        candidates = self.candidates(settings, view)
        ranking = settings.ranking
        rerank = self.rerank_scores(settings, view) if ranking.reranks else None
        table = self.table(settings)
        versions = self.versions(settings, view) if ranking.reads_versions else None
        vectors = self.chunk_vectors(settings) if ranking.reads_vectors else None
        contexts = []
        for row, case in enumerate(self.dataset.golden):
            chosen, scores = final_ranking(
                candidates.indices[row], candidates.scores[row], None if rerank is None else rerank[row], ranking,
                versions, vectors, ahead,
            )
            chunks = tuple(table.chunks[i] for i in chosen)
            contexts.append(RetrievedContext(case.id, chunks, tuple(float(s) for s in scores)))
        return contexts
