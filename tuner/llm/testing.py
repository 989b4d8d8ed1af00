"""LLM plumbing (answers, verdicts → **chat endpoint**): a scriptable OpenAI-compatible chat server on loopback, for
tests and offline demos of the LLM backends.

It speaks ``POST /v1/chat/completions`` (and ``POST /v1/embeddings`` when given an ``embedder``) over real HTTP,
so the client, its retries and its timeouts are exercised exactly as against a hosted endpoint. Token counts are
words; the cached prompt tokens come from a simulated prefix cache (:class:`PrefixCache`). Replies are derived from the request unless a
script matches: ``server.script("[[flaky]]", Failure(429), Reply("ok"))`` makes the first request
whose messages contain ``[[flaky]]`` get HTTP 429 and every later one ``"ok"`` (the last behaviour
of a script repeats).

Example::

    with FakeChatServer() as server:
        client = ChatClient(LLMConfig(base_url=server.url, model="fake", api_key_env=None))
        client.complete([{"role": "user", "content": "hi"}]).text
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass(frozen=True)
class Reply:
    """A normal completion with ``content``, sent after ``delay`` seconds."""

    content: str
    delay: float = 0.0


@dataclass(frozen=True)
class Failure:
    """An HTTP error status with an OpenAI-style error body."""

    status: int
    message: str = "scripted failure"
    retry_after: float | None = None
    headers: tuple[tuple[str, str], ...] = ()
    """Extra response headers, e.g. ``(("retry-after-ms", "250"),)`` or an HTTP-date ``retry-after``."""


@dataclass(frozen=True)
class Garbled:
    """HTTP 200 with ``body`` as it is, not a chat completion: a truncated JSON reply, or the HTML page a proxy sends."""

    body: str
    content_type: str = "application/json"


Behaviour = Reply | Failure | Garbled


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received; header names are lower-cased."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def text(self) -> str:
        """All message contents (or embedding inputs), joined: what scripts match against."""
        inputs = self.body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        texts += [m.get("content", "") for m in self.body.get("messages", [])]
        return "\n".join(str(text) for text in texts)


def echo_reply(body: dict[str, Any]) -> str:
    """The default reply: a digest of everything that should determine it (model, messages, sampling)."""
    keyed = {k: body.get(k) for k in ("model", "messages", "temperature", "seed", "max_tokens")}
    digest = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:12]
    return f"reply-{digest}"


def context_echo_reply(body: dict[str, Any]) -> str:
    """A deterministic stand-in answerer: the first passage of the prompt's ``Context:`` block (the best-ranked chunk,
    its title line included) on one line without its ``[1]`` number, else an abstention."""
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    match = re.search(r"Context:\s*\n(?:\[\d+\]\s*)?(.+?)(?:\n\s*\n|$)", prompt, re.S)
    return " ".join(match.group(1).split())[:300] if match else "I don't know."


_FACT = re.compile(r"^(?:Fact \(any of these phrasings counts\)|事实（以下任一说法都算）)[:：] ?(.+)$", re.M)
_FACTS = re.compile(r"^(\d+)\. (.+)$", re.M)
_JUDGED = re.compile(r"^(?:PASSAGES|ANSWER|段落|回答)[:：]\s*(.+?)\n\n(?:Question|问题)[:：]", re.S | re.M)


def _verdict(aliases_text: str, judged: str) -> dict[str, str]:
    aliases = re.findall(r'"([^"]+)"', aliases_text)
    found = next((alias for alias in aliases if alias.lower() in judged), None)
    return {"verdict": "supported" if found else "absent", "evidence": found or ""}


def keypoint_oracle_reply(body: dict[str, Any]) -> str:
    """A deterministic stand-in for a generator and a judge (tuner's prompts): a judge prompt gets ``supported`` for a
    fact when one of its quoted aliases is in the judged text (the answer or the passages), else ``absent``, with the
    alias as evidence, one verdict per fact (``{"verdicts": [...]}``) for a batched prompt; any other prompt gets
    :func:`context_echo_reply`. Per-keypoint and batched judging thus give the same verdicts, so the two can be
    compared on their requests alone."""
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", [])[:1])
    judged_match = _JUDGED.search(prompt)
    if judged_match is None:
        return context_echo_reply(body)
    judged = judged_match.group(1).lower()
    single = _FACT.search(prompt)
    if single is not None:
        return json.dumps(_verdict(single.group(1), judged), ensure_ascii=False)
    facts = _FACTS.findall(prompt[judged_match.end():])
    verdicts = [{"fact": int(number), **_verdict(aliases, judged)} for number, aliases in facts]
    return json.dumps({"verdicts": verdicts}, ensure_ascii=False)


_HOST = "127.0.0.1"


class PrefixCache:
    """A provider's automatic prompt caching, simulated: a prompt's leading words are cached in blocks of ``block``
    words once any earlier prompt to the same model began with the same blocks (providers cache in fixed increments
    too, e.g. 128 tokens at OpenAI). ``hit`` returns the cached words of a prompt and remembers its blocks.

    >>> cache = PrefixCache(block=2)
    >>> cache.hit("m", "a b c d e"), cache.hit("m", "a b c x y"), cache.hit("other", "a b c d e")
    (0, 2, 0)
    """

    def __init__(self, block: int = 16) -> None:
        self.block = block
        self._seen: set[tuple[str, bytes]] = set()
        self._lock = threading.Lock()

    def hit(self, model: str, prompt: str) -> int:
        words = prompt.split()
        digest = hashlib.sha256()
        prefixes = []
        for start in range(0, len(words) - len(words) % self.block, self.block):
            digest.update(" ".join(words[start : start + self.block]).encode() + b"\n")
            prefixes.append((model, digest.copy().digest()))
        with self._lock:
            cached = 0
            while cached < len(prefixes) and prefixes[cached] in self._seen:
                cached += 1
            self._seen.update(prefixes)
        return cached * self.block


UsageStyle = Literal["openai", "deepseek"]
"""How a chat reply reports cached prompt tokens: ``usage.prompt_tokens_details.cached_tokens`` (OpenAI) or
``usage.prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens`` (DeepSeek)."""


def usage_of(prompt_tokens: int, completion_tokens: int, cached: int, style: UsageStyle) -> dict[str, Any]:
    """The ``usage`` object of a chat reply, with the cached prompt tokens where ``style``'s provider puts them."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if style == "openai":
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    else:
        usage.update(prompt_cache_hit_tokens=cached, prompt_cache_miss_tokens=prompt_tokens - cached)
    return usage


Embedder = Callable[[list[str]], list[list[float]]]
"""Texts to vectors, for ``/v1/embeddings`` (tests plug a real local model in, making the server a small TEI)."""


class FakeChatServer:
    """``ThreadingHTTPServer`` on 127.0.0.1 and an ephemeral port; ``url`` is the ``base_url`` to configure."""

    def __init__(
        self, responder: Callable[[dict[str, Any]], str] = echo_reply, embedder: Embedder | None = None,
        prefix_cache: PrefixCache | None = None, usage_style: UsageStyle = "openai",
    ) -> None:
        self.responder = responder
        self.embedder = embedder
        self.prefix_cache = prefix_cache if prefix_cache is not None else PrefixCache()
        self.usage_style = usage_style
        self.requests: list[RecordedRequest] = []
        self._scripts: list[tuple[str, list[Behaviour]]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((_HOST, 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://{_HOST}:{self._server.server_port}/v1"

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, marker: str, *behaviours: Behaviour) -> None:
        """Requests whose messages contain ``marker`` get ``behaviours`` in turn; the last one repeats."""
        with self._lock:
            self._scripts.append((marker, list(behaviours)))

    def count(self, marker: str = "") -> int:
        """How many requests arrived (whose messages contain ``marker``)."""
        with self._lock:
            return sum(1 for r in self.requests if marker in r.text)

    def _behaviour(self, request: RecordedRequest) -> Behaviour:
        with self._lock:
            self.requests.append(request)
            for marker, behaviours in self._scripts:
                if marker in request.text:
                    return behaviours.pop(0) if len(behaviours) > 1 else behaviours[0]
        return Reply(self.responder(request.body))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Silence the per-request stderr log."""

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if len(raw) < length:
                    # The client died while sending (a killed worker): like a real server, nothing is received.
                    self.close_connection = True
                    return
                body = json.loads(raw or b"{}")
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                route = self.path.split("?", 1)[0].rstrip("/")
                if route not in ("/v1/chat/completions", "/v1/embeddings") or (
                    route == "/v1/embeddings" and server.embedder is None
                ):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                behaviour = server._behaviour(request)
                if isinstance(behaviour, Failure):
                    headers = {"retry-after": str(behaviour.retry_after)} if behaviour.retry_after is not None else {}
                    headers.update(behaviour.headers)
                    self._send(behaviour.status, {"error": {"message": behaviour.message}}, headers)
                    return
                if isinstance(behaviour, Garbled):
                    self._send_raw(200, behaviour.body.encode(), behaviour.content_type)
                    return
                time.sleep(behaviour.delay)
                if route == "/v1/embeddings":
                    self._embeddings(body)
                    return
                prompt_words = len(request.text.split())
                cached = server.prefix_cache.hit(str(body.get("model", "")), request.text)
                completion_words = len(behaviour.content.split())
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", ""),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": behaviour.content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": usage_of(prompt_words, completion_words, cached, server.usage_style),
                    },
                )

            def _embeddings(self, body: dict[str, Any]) -> None:
                assert server.embedder is not None
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = server.embedder([str(text) for text in texts])
                words = sum(len(str(text).split()) for text in texts)
                self._send(
                    200,
                    {
                        "object": "list",
                        "model": body.get("model", ""),
                        "data": [
                            {"object": "embedding", "index": i, "embedding": [float(x) for x in vector]}
                            for i, vector in enumerate(vectors)
                        ],
                        "usage": {"prompt_tokens": words, "total_tokens": words},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

            def _send_raw(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", content_type)
                    self.send_header("content-length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    # The client gave up (a scripted slow reply outlived its timeout).
                    pass

        return Handler
