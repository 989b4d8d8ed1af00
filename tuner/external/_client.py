"""External knowledge (retrieval ⇄ **a retrieval service**): the client of a service that speaks Dify's External
Knowledge API (a RAGFlow knowledge base, another ``tuner serve``, a team's own): concurrent within a limit, retried
like the OpenAI-compatible backends, every reply kept in the call cache under (url, knowledge id, query, settings) so a
rerun sends nothing."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tuner.cache import content_key
from tuner.errors import ErrorKind, backend_error
from tuner.external._contract import Record, parse_records
from tuner.llm import CachedReply, CallStore, Usage, map_concurrent, read_key, retry_after_seconds, send_with_retries
from tuner.redaction import MASK, redact

API_KEY_VARIABLE = "TUNER_EXTERNAL_API_KEY"
"""Where ``tuner eval --external`` and a study's ``retriever: {backend: external}`` read the service's key by default."""
_FORMAT = "external-retrieval-v1"


class ExternalConfig(BaseModel):
    """A retrieval service that speaks the contract (a study file's ``retriever:``): ``url`` is the endpoint Dify would
    be given (``/retrieval`` is appended: RAGFlow's is ``http://HOST/api/v1/dify``), ``knowledge_id`` the knowledge
    base there, the key in the environment variable ``api_key_env`` (never in a file). ``match`` says how a record
    is matched to a golden document: ``metadata.<key>`` (default ``metadata.doc_id``, what RAGFlow and ``tuner serve``
    send), ``title``, or ``content`` (the document whose text contains the record's content). At most ``concurrency``
    requests are in flight; a failed one is retried ``max_retries`` times (429, 5xx, timeouts, lost connections)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    backend: Literal["external"] = "external"
    url: str = Field(min_length=1)
    knowledge_id: str = Field(min_length=1)
    api_key_env: str | None = Field(API_KEY_VARIABLE, min_length=1)
    match: str = "metadata.doc_id"
    timeout: float = Field(30.0, gt=0.0)
    concurrency: int = Field(8, ge=1, le=256)
    max_retries: int = Field(3, ge=0, le=20)
    backoff_base: float = Field(0.5, ge=0.0)
    cache: bool = True

    def described(self) -> dict[str, Any]:
        """What a study records and its report shows of the service: no key, credentials in the URL redacted."""
        return {"backend": self.backend, "url": redact(self.url), "knowledge_id": self.knowledge_id, "match": self.match,
                "searched": "top_k, score_threshold",
                "v3": "conflicts injected into the context the service returned (hard_mode: inject)"}

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {redact(url)!r}")
        return url.rstrip("/")

    @field_validator("match")
    @classmethod
    def _known_match(cls, match: str) -> str:
        if match not in ("title", "content") and not (match.startswith("metadata.") and len(match) > len("metadata.")):
            raise ValueError(f"must be metadata.<key>, title or content, got {match!r}")
        return match


def _kind(status: int) -> ErrorKind:
    if status == 429:
        return "rate_limit"
    if status >= 500:
        return "server"
    if status in (401, 403):
        return "auth"
    return "not_found" if status == 404 else "request"


class ExternalClient:
    """Sends the contract's requests to one knowledge base of one service. ``records`` is thread-safe."""

    def __init__(self, config: ExternalConfig, cache: CallStore | None = None, usage: Usage | None = None) -> None:
        import httpx

        self.config = config
        self.usage = usage if usage is not None else Usage()
        self.cache = cache if config.cache else None
        self._key = read_key(config.api_key_env)
        self._http = httpx.Client(timeout=config.timeout, headers={"Authorization": f"Bearer {self._key}"})
        self._slots = threading.BoundedSemaphore(config.concurrency)

    def __repr__(self) -> str:
        return f"ExternalClient(url={redact(self.config.url)!r}, knowledge_id={self.config.knowledge_id!r})"

    def body(self, query: str, top_k: int, score_threshold: float) -> dict[str, Any]:
        return {"knowledge_id": self.config.knowledge_id, "query": query,
                "retrieval_setting": {"top_k": top_k, "score_threshold": score_threshold}}

    def request(self, query: str, top_k: int, score_threshold: float) -> dict[str, Any]:
        """Everything the reply depends on, the cache key, and no secret (credentials in the URL redacted)."""
        return {"url": redact(self.config.url), **self.body(query, top_k, score_threshold)}

    def records(self, query: str, top_k: int, score_threshold: float) -> list[Record]:
        """The service's records for one query, from the cache when it has them."""
        request = self.request(query, top_k, score_threshold)
        if self.cache is None:
            return parse_records(json.loads(self._sent(query, top_k, score_threshold)))
        key = content_key(_FORMAT, request)
        with self.cache.claim(key):
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.add(cache_hits=1)
                return parse_records(json.loads(hit.text))
            text = self._sent(query, top_k, score_threshold)
            records = parse_records(json.loads(text))  # a reply that is not the contract's is never cached
            self.cache.put(key, request, CachedReply(text, 0, 0))
            return records

    def many(self, queries: Sequence[str], top_k: int, score_threshold: float) -> list[list[Record]]:
        """:meth:`records` of every query, in order, ``concurrency`` at a time."""
        return map_concurrent(lambda q: self.records(q, top_k, score_threshold), queries, self.config.concurrency)

    def _sent(self, query: str, top_k: int, score_threshold: float) -> str:
        text = send_with_retries(lambda: self._send_once(query, top_k, score_threshold), self.config.max_retries,
                                 self.config.backoff_base, self.usage)
        self.usage.add(calls=1)
        return text

    def _send_once(self, query: str, top_k: int, score_threshold: float) -> str:
        """One POST; a failure is the :class:`tuner.errors.BackendError` of its kind, never holding the key."""
        import httpx

        where = f"{self.config.url}/retrieval (knowledge {self.config.knowledge_id})"
        try:
            with self._slots:
                reply = self._http.post(f"{self.config.url}/retrieval", json=self.body(query, top_k, score_threshold))
        except httpx.TimeoutException:
            raise backend_error("timeout", self._redact(f"{where}: request timed out")) from None
        except httpx.TransportError as exc:
            raise backend_error("connection", self._redact(f"{where}: connection failed ({exc})")) from None
        if reply.status_code != 200:
            detail = " ".join(reply.text.split())[:200]
            wait = retry_after_seconds({k.lower(): v for k, v in reply.headers.items()})
            raise backend_error(_kind(reply.status_code), self._redact(f"{where}: HTTP {reply.status_code}: {detail}"), wait)
        try:
            parse_records(reply.json())
        except ValueError as exc:  # json's errors are ValueErrors too
            raise backend_error("bad_response", self._redact(f"{where}: {exc}")) from None
        return reply.text

    def _redact(self, text: str) -> str:
        return redact(text.replace(self._key, MASK) if self._key else text)
