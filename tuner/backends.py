"""Answers (variants → **answers**, verdicts): what every generator and judge backend shares: the registry type
(a config model and a builder per ``backend`` name used in YAML, validated as one tagged union on ``backend``) and
the resources each builder is given (usage counters, the call cache, the embedding context).

It sits above both :mod:`tuner.llm` (endpoint plumbing) and :mod:`tuner.embedding` (encoders), which do not import
each other's way back: the embedding package uses the LLM package's endpoint client, and this module hands
generators the embedding context.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from tuner.embedding import EmbeddingContext, Encoder
from tuner.errors import UserError, describe_validation_error
from tuner.llm import CallCache, CallStore, ChatClient, LLMConfig, PostgresCallCache, Usage


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


B = TypeVar("B")
C = TypeVar("C")


def backend_of(value: Any, default: str) -> str:
    """The ``backend`` named by a mapping or config object, ``default`` when it names none."""
    if isinstance(value, Mapping):
        return str(value.get("backend", default))
    return str(getattr(value, "backend", default))


class BackendRegistry(Generic[B, C]):
    """Backends of one ``kind`` ("generator", "judge"): ``configs`` is the tagged union of their config models
    (``C``), ``builders`` maps each ``backend`` name to the function that builds it, ``checks`` a backend's name to
    the function that checks what its config names outside itself (a model file, a module: :meth:`check`).

    >>> config = GENERATORS.parse({"backend": "extractive", "max_sentences": 2}, "study.yaml")  # doctest: +SKIP
    >>> generator = GENERATORS.build(config, resources)  # doctest: +SKIP
    """

    def __init__(
        self, kind: str, default: str, configs: Any, builders: Mapping[str, Callable[[Any, BackendResources], B]],
        checks: Mapping[str, Callable[[Any], None]] | None = None,
    ) -> None:
        self.kind = kind
        self.default = default
        self.builders = dict(builders)
        self.checks = dict(checks or {})
        self._adapter: TypeAdapter[C] = TypeAdapter(configs)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.builders)

    def parse(self, values: Mapping[str, Any] | None, source: str) -> C:
        """Validate a ``generator:`` / ``judge:`` mapping; errors are one line naming ``source`` and the key."""
        try:
            return self._adapter.validate_python(dict(values or {}))
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "union_tag_invalid":
                raise UserError(
                    f"{source}: {self.kind}.backend: unknown backend {backend_of(values, self.default)!r}; "
                    f"choose one of {', '.join(self.names)}"
                ) from None
            raise UserError(f"{source}: {self.kind}.{describe_validation_error(exc, skip=1)}") from None

    def check(self, config: C, source: str) -> None:
        """What ``config`` names outside itself (a model file, a module to import), checked before any work, so a
        study that names a missing one stops at load, not after its first stages ran (issue 54 §2.13); the fault is
        one line naming ``source``."""
        check = self.checks.get(backend_of(config, self.default))
        if check is None:
            return
        try:
            check(config)
        except UserError as exc:
            raise UserError(f"{source}: {exc}") from None

    def build(self, config: C, resources: BackendResources | None = None) -> B:
        """The backend for ``config``, sharing ``resources`` (usage counters, call cache, encoder)."""
        builder = self.builders[backend_of(config, self.default)]
        return builder(config, resources if resources is not None else BackendResources())
