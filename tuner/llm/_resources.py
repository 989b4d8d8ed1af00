"""LLM plumbing (answers, verdicts → **chat endpoint**): what backends share within one study: usage counters, the call
cache and the embedding context."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.embedding import EmbeddingContext
from tuner.llm._cache import CallCache, CallStore, PostgresCallCache
from tuner.llm._client import ChatClient
from tuner.llm._config import LLMConfig
from tuner.llm._usage import Usage

if TYPE_CHECKING:
    from tuner.embedding import Encoder


@dataclass
class BackendResources:
    """Passed to every generator and judge factory so that one study counts and caches in one place.

    ``cache_path`` defaults to ``llm_calls.sqlite`` under the tuner cache root; ``cache_url``, a PostgreSQL URL
    (a study's storage), keeps the calls in that database instead, shared by every worker of the study;
    ``embeddings`` is what a backend that embeds loads its model from (share the study's, so that the model the
    retrieval loaded is the one a generator uses); ``encoder``, when given, is used instead (tests inject the
    session encoder).
    """

    usage: Usage = field(default_factory=Usage)
    cache_path: Path | None = None
    cache_url: str | None = None
    encoder: Encoder | None = None
    embeddings: EmbeddingContext = field(default_factory=EmbeddingContext)
    _cache: CallStore | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def call_cache(self) -> CallStore:
        with self._lock:
            if self._cache is None:
                self._cache = PostgresCallCache(self.cache_url) if self.cache_url else CallCache(self.cache_path)
            return self._cache

    def chat_client(self, config: LLMConfig) -> ChatClient:
        return ChatClient(config, self.call_cache() if config.cache else None, self.usage)
