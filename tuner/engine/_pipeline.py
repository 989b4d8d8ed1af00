"""Engine (indexes → **candidates in an engine** → ranking): a :class:`tuner.retrieval.RetrievalPipeline` whose first
stage runs in Milvus, and the registry of engines a study or a command picks its pipeline from (:data:`ENGINES`).

Chunking, the embedding of chunks (to build a collection) and of questions, reranking, version handling, dedupe,
the threshold and top_k stay tuner's, over the engine's candidates, so every figure of a trial is computed as on the
memory engine except the first stage's scores (:mod:`tuner.engine._search`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tuner.cache import DiskCache, content_key
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder, EmbeddingContext
from tuner.engine._collections import Collection, connect, ensure_collection
from tuner.engine._config import MemoryEngine, MilvusEngine
from tuner.engine._search import BM25Ceiling, MilvusFirstStage, filter_expression, index_knobs
from tuner.progress import Reporter
from tuner.retrieval import Candidates, RetrievalPipeline, first_stage_reads
from tuner.settings import RetrievalSettings


class MilvusPipeline(RetrievalPipeline):
    """Retrieval over ``dataset`` with the first stage searched in ``engine``: per chunk configuration and embedding
    model one collection (:func:`ensure_collection`), per first-stage group the candidates of every question searched
    there once per process (not kept on disk: the engine is what is measured)."""

    def __init__(self, dataset: Dataset, engine: MilvusEngine, cache: DiskCache | None = None,
                 reporter: Reporter | None = None, embeddings: EmbeddingContext | None = None,
                 encoder: CachedEncoder | None = None) -> None:
        super().__init__(dataset, cache, reporter, encoder, embeddings)
        self.engine = engine
        self.client = connect(engine)
        self._collections: dict[str, Collection] = {}
        self._stages: dict[tuple[object, ...], MilvusFirstStage] = {}

    def collection(self, settings: RetrievalSettings) -> Collection:
        """The complete, verified collection of ``settings``' chunks and embedding model (built on first use)."""
        table = self.table(settings)
        if table.key + table.encoder.vector_id not in self._collections:
            collection = ensure_collection(self.client, self.engine, table, self.dataset.language,
                                           lambda: self.chunk_vectors(settings), self._metadata,
                                           self.dataset.path.name, self.reporter)
            self._collections[table.key + table.encoder.vector_id] = collection
        return self._collections[table.key + table.encoder.vector_id]

    def engine_collection(self, settings: RetrievalSettings) -> str:
        return self.collection(settings).name

    def _metadata(self, doc_id: str) -> dict[str, Any]:
        return dict(self.dataset.metadata_of(doc_id))

    def retriever(self, settings: RetrievalSettings) -> MilvusFirstStage:
        """``settings``' first stage searched in its collection, with the search knobs of the collection's index
        (:func:`index_knobs`: ``dense_index`` does not act, the index is the engine's)."""
        collection = self.collection(settings)
        key = (collection.name, settings.retriever, settings.fusion, settings.hybrid_weight, settings.rrf_k,
               settings.query_prompt, *sorted(index_knobs(collection.index, settings).items()))
        if key not in self._stages:
            query_encoder = self.encoder(settings).with_prompt(settings.query_prompt)
            self._stages[key] = MilvusFirstStage(collection, settings, query_encoder, BM25Ceiling.of(collection, self.cache))
        return self._stages[key]

    def candidates_key(self, settings: RetrievalSettings, view: str = "clean") -> str:
        """The candidates of ``settings`` in ``view``: the collection searched, what the first stage reads and the
        knobs of the collection's index it searches with (the rerank scores cached on disk are keyed by it)."""
        collection = self.collection(settings)
        return content_key("milvus-candidates", collection.name, first_stage_reads(settings), settings.active_filter,
                           view, index_knobs(collection.index, settings))

    def candidates(self, settings: RetrievalSettings, view: str = "clean") -> Candidates:
        """Candidates of every golden question, searched in the engine within :func:`filter_expression`."""
        key = self.candidates_key(settings, view)
        if key not in self._candidates:
            hits = self.retriever(settings).search_where(self.queries, settings.candidate_depth,
                                                         filter_expression(settings, view))
            self._candidates[key] = Candidates(hits.indices, hits.scores, key)
        return self._candidates[key]


PipelineFactory = Callable[[Any, Dataset, DiskCache | None, Reporter | None, EmbeddingContext | None, CachedEncoder | None],
                           RetrievalPipeline]

ENGINES: dict[str, PipelineFactory] = {
    "memory": lambda engine, dataset, cache, reporter, embeddings, encoder: RetrievalPipeline(dataset, cache, reporter,
                                                                                               encoder, embeddings),
    "milvus": lambda engine, dataset, cache, reporter, embeddings, encoder: MilvusPipeline(dataset, engine, cache, reporter,
                                                                                            embeddings, encoder),
}
"""The pipeline of each engine ``backend``."""


def engine_pipeline(engine: MemoryEngine | MilvusEngine, dataset: Dataset, cache: DiskCache | None = None,
                    reporter: Reporter | None = None, embeddings: EmbeddingContext | None = None,
                    encoder: CachedEncoder | None = None) -> RetrievalPipeline:
    """The retrieval of ``dataset`` on ``engine``: tuner's own in this process, or a :class:`MilvusPipeline`
    (connected here: an unreachable engine is a :class:`tuner.errors.UserError` before any trial). ``encoder``: the
    encoder of its embedding model (the deployed retriever's, which batches concurrent questions), as
    :class:`tuner.retrieval.RetrievalPipeline` takes it."""
    return ENGINES[engine.backend](engine, dataset, cache, reporter, embeddings, encoder)

