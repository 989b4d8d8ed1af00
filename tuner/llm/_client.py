"""LLM plumbing (answers, verdicts → **chat endpoint**): a chat-completions client for any OpenAI-compatible endpoint:
our own retries, a call cache, usage counters."""

from __future__ import annotations

import json
import os
import random
from email.utils import parsedate_to_datetime
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tuner.errors import BackendError, ErrorKind, MalformedReply, TransientBackendError, UserError, backend_error
from tuner.llm._cache import CachedReply, CallStore, request_key
from tuner.llm._config import LLMConfig
from tuner.llm._usage import Usage
from tuner.redaction import MASK, redact, redact_data

if TYPE_CHECKING:
    import openai

Message = Mapping[str, str]
_MAX_BACKOFF = 60.0
_NO_KEY = "no-key"
_QUOTED = 120
"""Characters of a malformed reply quoted in its failure line."""
T = TypeVar("T")


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    cached_prompt_tokens: int = 0
    """Prompt tokens the provider served from its prefix cache (0 for a reply from tuner's call cache, which cost nothing)."""


def send_with_retries(send_once: Callable[[], T], max_retries: int, backoff_base: float, usage: Usage,
                      deadline: float | None = None) -> T:
    """``send_once()``, the retry rule of every remote backend: a :class:`TransientBackendError` is tried again up to
    ``max_retries`` times, waiting ``backoff_base · 2^(attempt − 1)`` seconds (jittered ×1–1.25) or the server's
    ``retry_after``, whichever is longer (at most 60 s); any other :class:`BackendError` raises at once; the last
    failed attempt raises the error of its kind with ``retries_spent`` (a connection that never succeeded is then
    fatal). With a ``deadline`` (a ``time.monotonic()`` instant) no attempt starts at or after it, nor a wait that
    would end past it: the attempts so far are then the last (``send_once`` bounds its own attempt by the same
    instant). ``usage`` counts the retries and failures."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return send_once()
        except TransientBackendError as exc:
            failed = exc
        except BackendError:
            usage.add(failures=1)
            raise
        wait = min(max(backoff_base * 2 ** (attempt - 1) * random.uniform(1.0, 1.25), failed.retry_after), _MAX_BACKOFF)
        out_of_time = deadline is not None and time.monotonic() + wait >= deadline
        if attempt > max_retries or out_of_time:
            usage.add(failures=1)
            spent = f"{attempt} attempts" + (" (the request's deadline came first)" if out_of_time and attempt <= max_retries else "")
            raise backend_error(failed.kind, f"{failed} after {spent}", retries_spent=True)
        usage.add(retries=1)
        time.sleep(wait)


def read_key(env_name: str | None) -> str:
    """The API key in environment variable ``env_name`` (a placeholder for ``None``: a server that needs no key); a
    :class:`UserError` naming the variable when it is empty."""
    if env_name is None:
        return _NO_KEY
    value = os.environ.get(env_name, "")
    if not value.strip():
        raise UserError(f"environment variable {env_name} is not set: it must hold the API key (api_key_env)")
    return value


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float:
    """The wait a server asked for: ``retry-after-ms`` (milliseconds), else ``retry-after`` as seconds or as an
    HTTP date (RFC 9110, e.g. ``Wed, 21 Oct 2026 07:28:00 GMT``); 0 when absent, unreadable or in the past.

    >>> retry_after_seconds({"retry-after-ms": "1500"}), retry_after_seconds({"retry-after": "2"})
    (1.5, 2.0)
    >>> retry_after_seconds({"retry-after": "Thu, 01 Jan 1970 00:00:10 GMT"}, now=4.0)
    6.0
    """
    try:
        if "retry-after-ms" in headers:
            return max(float(headers["retry-after-ms"]) / 1000.0, 0.0)
        value = headers.get("retry-after")
        if value is None:
            return 0.0
        try:
            return max(float(value), 0.0)
        except ValueError:
            when = parsedate_to_datetime(value).timestamp()
            return max(when - (time.time() if now is None else now), 0.0)
    except (TypeError, ValueError):
        return 0.0


def _retry_after(exc: openai.APIStatusError) -> float:
    return retry_after_seconds({k.lower(): v for k, v in exc.response.headers.items()})


def _classify(exc: Exception) -> tuple[ErrorKind, str, float]:
    """Map an ``openai`` exception to (kind, one-line reason, server-requested wait in seconds)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout", "request timed out", 0.0
    if isinstance(exc, openai.APIConnectionError):
        return "connection", f"connection failed ({exc.__cause__ or exc})", 0.0
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = " ".join(str(exc.message).split())[:200]
        if status == 429:
            return "rate_limit", f"HTTP 429 rate limited: {detail}", _retry_after(exc)
        if status >= 500:
            return "server", f"HTTP {status} server error: {detail}", _retry_after(exc)
        if status in (401, 403):
            return "auth", f"HTTP {status} the API key was rejected: {detail}", 0.0
        if status == 404:
            return "not_found", f"HTTP 404 unknown model or path: {detail}", 0.0
        return "request", f"HTTP {status} request rejected: {detail}", 0.0
    return "bad_response", f"unusable response ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})", 0.0


def require_key(config: LLMConfig) -> None:
    """The API key ``config`` names is set (:func:`read_key`): a backend registry's check, so a run whose key is
    missing stops before any work, not at its first call."""
    read_key(config.api_key_env)


class EndpointClient:
    """What every client of one OpenAI-compatible endpoint shares: the key (read from the environment, never
    stored), the ``openai`` client, at most ``config.concurrency`` requests in flight, and retries: a
    :class:`TransientBackendError` (429, 5xx, timeouts, connection errors) is retried with exponential backoff;
    anything else, or the last failed attempt, raises the :class:`BackendError` of its kind (one line, key
    redacted; :func:`tuner.errors.backend_error`)."""

    def __init__(self, config: LLMConfig, usage: Usage | None = None) -> None:
        self.config = config
        self.usage = usage if usage is not None else Usage()
        import openai  # here, not at the top: importing it takes seconds, and most runs never reach an endpoint

        self._key = read_key(config.api_key_env)
        self._client = openai.OpenAI(
            base_url=config.base_url, api_key=self._key, timeout=config.timeout, max_retries=0,
            default_headers=config.extra_headers or None, default_query=config.default_query or None,
        )
        self._slots = threading.BoundedSemaphore(config.concurrency)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={redact(self.config.base_url)!r}, model={self.config.model!r})"

    def _send_with_retries(self, send: Callable[[], T]) -> T:
        return send_with_retries(lambda: self._send_once(send), self.config.max_retries, self.config.backoff_base, self.usage)

    def _send_once(self, send: Callable[[], T]) -> T:
        """``send()``; an ``openai`` failure becomes the :class:`BackendError` of its kind, not chained to it (its
        message may hold the key)."""
        import openai

        try:
            with self._slots:
                return send()
        except openai.OpenAIError as exc:
            kind, reason, wait = _classify(exc)
        except MalformedReply as exc:
            kind, reason, wait = "malformed", str(exc), 0.0
        raise backend_error(kind, self._redact(f"{self.config.model} at {self.config.base_url}: {reason}"), wait)

    def _redact(self, text: str) -> str:
        text = text.replace(self._key, MASK) if self._key != _NO_KEY else text
        return redact(text)


class ChatClient(EndpointClient):
    """Send chat requests to ``config.base_url`` with retries, caching and at most ``config.concurrency`` in flight.

    ``complete`` is thread-safe. A request already in ``cache`` is answered from it without any
    network call; other requests are sent with :class:`EndpointClient`'s retries.
    """

    def __init__(self, config: LLMConfig, cache: CallStore | None = None, usage: Usage | None = None) -> None:
        super().__init__(config, usage)
        self.cache = cache if config.cache else None

    def request(self, messages: Sequence[Message], response_format: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The request as data: everything that determines the reply, hence the cache key, and no secret (the
        extra headers are left out, credentials in the URL and query are redacted). Options at their defaults add no key, so existing cache entries stay valid."""
        request: dict[str, Any] = {
            "base_url": redact(self.config.base_url.rstrip("/")),
            "model": self.config.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "temperature": self.config.temperature,
            "seed": self.config.seed,
            "max_tokens": self.config.max_tokens,
        }
        options = {
            "token_limit": self.config.token_limit if self.config.token_limit != "max_tokens" else None,
            "default_query": redact_data(self.config.default_query) or None,
            "extra_body": self.config.extra_body or None,
            "response_format": dict(response_format) if response_format else None,
        }
        request.update({name: value for name, value in options.items() if value is not None})
        return request

    def complete(self, messages: Sequence[Message], response_format: Mapping[str, Any] | None = None) -> Completion:
        """One chat completion; ``response_format`` (e.g. a JSON schema) is passed when the endpoint supports it."""
        request = self.request(messages, response_format)
        if self.cache is None:
            return self._sent(request)
        key = request_key(request)
        with self.cache.claim(key):
            hit = self.cache.get(key)
            if hit is not None:
                self.usage.add(cache_hits=1)
                return Completion(hit.text, hit.prompt_tokens, hit.completion_tokens, cached=True)
            completion = self._sent(request)
            self.cache.put(key, request, CachedReply(completion.text, completion.prompt_tokens, completion.completion_tokens))
        return completion

    def _sent(self, request: dict[str, Any]) -> Completion:
        reply = self._send_with_retries(lambda: self._send(request))
        pricing = self.config.pricing
        cost = 0.0 if pricing is None else pricing.cost(
            reply.prompt_tokens, reply.cached_prompt_tokens, reply.completion_tokens
        )
        self.usage.add(
            calls=1, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
            cached_tokens=reply.cached_prompt_tokens, cost=cost,
        )
        return reply

    def _send(self, request: dict[str, Any]) -> Completion:
        extra: dict[str, Any] = {"seed": request["seed"]} if request["seed"] is not None else {}
        extra[request.get("token_limit", "max_tokens")] = request["max_tokens"]
        if "response_format" in request:
            extra["response_format"] = request["response_format"]
        raw = self._client.chat.completions.with_raw_response.create(
            model=request["model"],
            messages=request["messages"],
            temperature=request["temperature"],
            extra_body=request.get("extra_body"),
            **extra,
        )
        return chat_completion(reply_object(raw.http_response.content, raw.headers.get("content-type", "")))


def reply_object(body: bytes, content_type: str) -> dict[str, Any]:
    """The JSON object of an HTTP 200 reply; anything else (a truncated body, a proxy's HTML page, a bare list) is a
    :class:`MalformedReply` quoting its start.

    >>> reply_object(b'<html><body>502 Bad Gateway</body></html>', "text/html")
    Traceback (most recent call last):
    tuner.errors.MalformedReply: HTTP 200 but the body is not a JSON object (text/html: '<html><body>502 Bad Gateway</body></html>')
    """
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # malformed JSON, invalid UTF-8, nesting past the parser's recursion
        payload = None
    if not isinstance(payload, dict):
        start = " ".join(body[:_QUOTED].decode("utf-8", "replace").split())
        raise MalformedReply(f"HTTP 200 but the body is not a JSON object ({content_type or 'no content-type'}: {start!r})")
    return payload


def chat_completion(payload: dict[str, Any]) -> Completion:
    """The text and token counts of a chat-completions reply. A reply with no choices or no content is kept as "" (its
    caller records an empty answer); one without a ``choices`` list, or whose first choice holds no message object, is
    a :class:`MalformedReply`. Token counts that are not whole numbers read 0.

    >>> chat_completion({"choices": [{"message": {"content": "24 months"}}], "usage": {"prompt_tokens": 9}}).text
    '24 months'
    >>> chat_completion({"error": {"message": "overloaded"}})
    Traceback (most recent call last):
    tuner.errors.MalformedReply: HTTP 200 but no 'choices' in the reply (error: overloaded)
    """
    choices = payload.get("choices")
    if not isinstance(choices, list):
        error = payload.get("error")
        detail = error.get("message") if isinstance(error, dict) else error
        raise MalformedReply("HTTP 200 but no 'choices' in the reply" + (f" (error: {str(detail)[:_QUOTED]})" if detail else ""))
    content: Any = None
    if choices:
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        content = message.get("content") if isinstance(message, dict) else 0
        if content is not None and not isinstance(content, str):
            raise MalformedReply("HTTP 200 but choices[0] holds no message with text content")
    usage = payload.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return Completion(
        content or "", whole_number(usage.get("prompt_tokens")), whole_number(usage.get("completion_tokens")), cached=False,
        cached_prompt_tokens=cached_prompt_tokens(usage),
    )


def whole_number(value: Any, default: int = 0) -> int:
    """``value`` when a reply gives a whole number of 0 or more there (not a bool), else ``default``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def cached_prompt_tokens(usage: dict[str, Any]) -> int:
    """The prompt tokens a provider says it served from its prefix cache: OpenAI's
    ``usage.prompt_tokens_details.cached_tokens``, else DeepSeek's ``usage.prompt_cache_hit_tokens``; 0 when neither
    is reported."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and "cached_tokens" in details:
        return whole_number(details["cached_tokens"])
    return whole_number(usage.get("prompt_cache_hit_tokens"))
