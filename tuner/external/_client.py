"""External knowledge (retrieval ⇄ **a retrieval service**): the client of a service that speaks Dify's External
Knowledge API (a RAGFlow knowledge base, another ``tuner serve``, a team's own): concurrent within a limit, retried
like the OpenAI-compatible backends, every reply kept in the call cache under (url, knowledge id, query, settings) so a
rerun sends nothing."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


from tuner.cache import content_key
from tuner.errors import ErrorKind, backend_error
from tuner.external._config import ExternalConfig
from tuner.external._contract import Record, kept_records
from tuner.http_guard import too_deep
from tuner.llm import CachedReply, CallStore, Usage, map_concurrent, read_key, retry_after_seconds, send_with_retries
from tuner.redaction import MASK, redact

_FORMAT = "external-retrieval-v1"


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
        self._dropped_lock = threading.Lock()
        self.dropped = Dropped(0, 0)

    def __repr__(self) -> str:
        return f"ExternalClient(url={redact(self.config.url)!r}, knowledge_id={self.config.knowledge_id!r})"

    def body(self, query: str, top_k: int, score_threshold: float) -> dict[str, Any]:
        return {"knowledge_id": self.config.knowledge_id, "query": query,
                "retrieval_setting": {"top_k": top_k, "score_threshold": score_threshold}}

    def request(self, query: str, top_k: int, score_threshold: float) -> dict[str, Any]:
        """Everything the reply depends on, the cache key, and no secret (credentials in the URL redacted)."""
        return {"url": redact(self.config.url), **self.body(query, top_k, score_threshold)}

    def records(self, query: str, top_k: int, score_threshold: float) -> list[Record]:
        """The service's records for one query (at most ``top_k``: :func:`tuner.external.kept_records`), from the cache
        when it has them."""
        request = self.request(query, top_k, score_threshold)
        if self.cache is None:
            return self._kept(self._sent(query, top_k, score_threshold), top_k)
        key = content_key(_FORMAT, request)
        with self.cache.claim(key):
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.add(cache_hits=1)
                return self._kept(hit.text, top_k)
            text = self._sent(query, top_k, score_threshold)  # a reply that is not the contract's is never cached
            self.cache.put(key, request, CachedReply(text, 0, 0))
            return self._kept(text, top_k)

    def many(self, queries: Sequence[str], top_k: int, score_threshold: float) -> list[list[Record]]:
        """:meth:`records` of every query, in order, ``concurrency`` at a time."""
        return map_concurrent(lambda q: self.records(q, top_k, score_threshold), queries, self.config.concurrency)

    def _kept(self, text: str, top_k: int) -> list[Record]:
        """The records of a reply as :meth:`_sent` keeps it (``{"records", "dropped"}``), its dropped ones counted."""
        body = json.loads(text)
        records, dropped = kept_records(body, top_k)
        dropped += int(body.get("dropped", 0))
        if dropped:
            with self._dropped_lock:
                self.dropped = Dropped(self.dropped.replies + 1, self.dropped.records + dropped)
        return records

    def _sent(self, query: str, top_k: int, score_threshold: float) -> str:
        deadline = time.monotonic() + self.config.deadline
        text = send_with_retries(lambda: self._send_once(query, top_k, score_threshold, deadline), self.config.max_retries,
                                 self.config.backoff_base, self.usage, deadline)
        self.usage.add(calls=1)
        return text

    def _send_once(self, query: str, top_k: int, score_threshold: float, deadline: float) -> str:
        """One POST, its reply read up to ``max_reply_mb`` and by ``deadline``, kept as ``{"records": [at most top_k],
        "dropped": N}``; a failure is the :class:`tuner.errors.BackendError` of its kind, never holding the key."""
        import httpx

        where = f"{self.config.url}/retrieval (knowledge {self.config.knowledge_id})"
        limit = int(self.config.max_reply_mb * 1024 * 1024)
        try:
            with self._slots:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise httpx.ReadTimeout("deadline")
                with self._http.stream("POST", f"{self.config.url}/retrieval", json=self.body(query, top_k, score_threshold),
                                       timeout=min(self.config.timeout, left)) as reply:
                    raw = self._read(reply, limit if reply.status_code == 200 else 4096, deadline)
        except httpx.TimeoutException:
            raise backend_error("timeout", self._redact(f"{where}: no reply in time (timeout {self.config.timeout:g} s "
                                                        f"an attempt, deadline {self.config.deadline:g} s)")) from None
        except httpx.TransportError as exc:
            raise backend_error("connection", self._redact(f"{where}: connection failed ({exc})")) from None
        if raw is None:
            raise backend_error("bad_response", self._redact(
                f"{where}: reply over {self.config.max_reply_mb:g} MB for top_k {top_k}, read no further (max_reply_mb)"))
        if reply.status_code != 200:
            detail = " ".join(raw.decode("utf-8", "replace").split())[:200]
            wait = retry_after_seconds({k.lower(): v for k, v in reply.headers.items()})
            raise backend_error(_kind(reply.status_code), self._redact(f"{where}: HTTP {reply.status_code}: {detail}"), wait)
        try:
            deep = too_deep(raw)
            if deep is not None:
                raise ValueError(deep.replace("body:", "the reply:"))
            records, dropped = kept_records(json.loads(raw), top_k)
        except ValueError as exc:  # json's errors (and a body that is not UTF-8) are ValueErrors too
            raise backend_error("bad_response", self._redact(f"{where}: {exc}")) from None
        return json.dumps({"records": [record.model_dump() for record in records], "dropped": dropped}, ensure_ascii=False)

    @staticmethod
    def _read(reply: Any, limit: int, deadline: float) -> bytes | None:
        """The body of ``reply``, streamed; None once it passes ``limit`` bytes (declared or read); a timeout once the
        deadline passes while it trickles in."""
        import httpx

        declared = reply.headers.get("content-length", "")
        if reply.status_code == 200 and declared.isdigit() and int(declared) > limit:
            return None
        body = bytearray()
        for chunk in reply.iter_bytes():
            body += chunk
            if len(body) > limit:
                return None if reply.status_code == 200 else bytes(body[:limit])
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout("deadline")
        return bytes(body)

    def _redact(self, text: str) -> str:
        return redact(text.replace(self._key, MASK) if self._key else text)


@dataclass(frozen=True)
class Dropped:
    """Records a service sent beyond the ``top_k`` it was asked for, left out (the top_k by score were kept): how many
    replies had such records, and how many records in all."""

    replies: int
    records: int
