"""Engine (indexes → candidates **in a retrieval service**): the ``external`` engine, a service that speaks Dify's
External Knowledge API (:mod:`tuner.external`) measured and tuned as tuner's own retrieval is: its configuration
(:class:`tuner.external.ExternalConfig`, a study file's ``engine: {backend: external, url, knowledge_id,
api_key_env}``, or ``retriever:`` as study files wrote it before issue 53) with the pipeline that asks it
(:class:`tuner.external.ExternalPipeline`). The service searches its own index with its own settings: it is asked
only ``top_k`` and ``score_threshold`` (:data:`tuner.external.EXTERNAL_KNOBS`), its search time is not tuner's, and
v3 injects the conflicts into the contexts it returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from tuner.engine._base import Engine, register_engine
from tuner.external import ExternalConfig

if TYPE_CHECKING:
    from collections.abc import Callable

    from tuner.cache import DiskCache
    from tuner.dataset import Dataset
    from tuner.embedding import CachedEncoder, EmbeddingContext
    from tuner.llm import CallStore
    from tuner.progress import Reporter
    from tuner.retrieval import RetrievalPipeline


@register_engine
class ExternalEngine(ExternalConfig, Engine):
    """A retrieval service as an engine (the fields of :class:`tuner.external.ExternalConfig`)."""

    label: ClassVar[str] = "a retrieval service speaking Dify's External Knowledge API"
    on_command_line: ClassVar[bool] = False
    """``tuner eval --external URL --knowledge-id ID`` is its command line; it serves nothing (``tuner serve``)."""
    measures_latency: ClassVar[bool] = False

    def pipeline(self, dataset: Dataset, cache: DiskCache | None = None, reporter: Reporter | None = None,
                 embeddings: EmbeddingContext | None = None, encoder: CachedEncoder | None = None,
                 calls: Callable[[], CallStore] | None = None) -> RetrievalPipeline:
        """The service's records as contexts; its replies kept in the call cache ``calls`` opens."""
        from tuner.external import ExternalClient, ExternalPipeline

        return ExternalPipeline(dataset, ExternalClient(self, None if calls is None else calls()), cache, reporter,
                                embeddings)

    def recorded(self, pipeline: RetrievalPipeline) -> dict[str, Any]:
        """The service as ``retrieval`` (no first stage of tuner's ran: ``engine`` None, as before issue 53)."""
        return {"retrieval": self.described(), "engine": None}

    def announced(self) -> str | None:
        service = self.described()
        return (f"retrieval: {service['url']} knowledge {service['knowledge_id']} (Dify External Knowledge API): "
                f"only {service['searched']} searched; v3: {service['v3']}")

    @property
    def attached(self) -> bool:
        return True

    @property
    def asked_only(self) -> tuple[tuple[str, ...], str] | None:
        from tuner.external import EXTERNAL_KNOBS

        return EXTERNAL_KNOBS, "a retrieval service is asked only top_k and score_threshold"
