"""Engine (indexes → **candidates in Milvus**): the ``milvus`` engine as registered, its configuration
(:class:`tuner.engine._config.MilvusConfig`) with the pipeline its first stage runs in (:class:`MilvusPipeline`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tuner.engine._base import register_engine
from tuner.engine._config import MilvusConfig
from tuner.settings import RetrievalSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from tuner.cache import DiskCache
    from tuner.dataset import Dataset
    from tuner.embedding import CachedEncoder, EmbeddingContext
    from tuner.llm import CallStore
    from tuner.progress import Reporter
    from tuner.retrieval import RetrievalPipeline


@register_engine
class MilvusEngine(MilvusConfig):
    """A Milvus engine (the fields of :class:`tuner.engine._config.MilvusConfig`), searched through
    :class:`MilvusPipeline`. Its search code (pymilvus, tuner's indexes) is imported when a pipeline is made or the
    engine connected, not when the engine is parsed (every command line builds the ``--engine`` flags)."""

    def pipeline(self, dataset: Dataset, cache: DiskCache | None = None, reporter: Reporter | None = None,
                 embeddings: EmbeddingContext | None = None, encoder: CachedEncoder | None = None,
                 calls: Callable[[], CallStore] | None = None) -> RetrievalPipeline:
        from tuner.engine._pipeline import MilvusPipeline

        return MilvusPipeline(dataset, self, cache, reporter, embeddings, encoder)

    def recorded(self, pipeline: RetrievalPipeline) -> dict[str, Any]:
        """:meth:`MilvusPipeline.described`: for an attached collection with its key, metric and content."""
        from tuner.engine._pipeline import MilvusPipeline

        return {"engine": pipeline.described() if isinstance(pipeline, MilvusPipeline) else self.described()}

    def ready(self, pipeline: RetrievalPipeline, settings: RetrievalSettings) -> None:
        """An attached collection: its vectors' dimension against the study's model and its doc ids against the
        golden set, before any trial."""
        if self.attached:
            pipeline.table(settings)

    def reachable(self) -> None:
        from tuner.engine._collections import connect

        connect(self)
