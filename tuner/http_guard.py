"""Beside the flows: what tuner's two web services (``tuner golden review``, ``tuner serve``) share against hostile
pages in the user's own browser, and how both listen on their port.

:class:`WriteGuard` is ASGI middleware. A request whose ``Host`` is not a name the service answers to gets 421 (a
hostile page that made its own domain resolve to this machine, DNS rebinding, would otherwise read and write it).
A write (``POST``, ``PUT``, ``PATCH``, ``DELETE`` on a guarded path) also needs, in this order:

- no ``Origin`` header, or the service's own (``http://`` + its ``Host``): else 403 (a form or script on another site);
- ``Content-Type: application/json``: else 415 (a cross-site form can send text/plain without a preflight);
- the service's token in the ``X-Tuner-Token`` header: else 403. The token is unguessable and per run: the review
  app embeds it in the page it serves; ``tuner serve`` takes it from ``TUNER_SERVE_TOKEN`` or prints a new one.

Refusals are ``{"error": "..."}`` with their status, like every other error of the two services.

:class:`BodyGuard`, also ASGI middleware, reads a request body before the application does: one over its size limit
gets 413 (read no further), and one whose arrays and objects nest deeper than :data:`MAX_JSON_DEPTH` is answered as the
service answers any malformed body (400 with one line; ``tuner serve``'s own endpoints 422). Without it, 50,000 nested
objects made Python's JSON parser raise ``RecursionError``: a 500 and a traceback in the log.
"""

from __future__ import annotations

import hmac
import re
import secrets
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from tuner.errors import UserError

if TYPE_CHECKING:
    # starlette comes with the serve extra: imported where a service runs, so that the base install (whose
    # external-retriever client uses too_deep) imports this module
    from starlette.responses import Response
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_HEADER = "X-Tuner-Token"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_BODY_BYTES = 4 * 1024 * 1024
"""Default request body limit: a question is a few hundred bytes; a batch of documents beyond this is split."""
MAX_JSON_DEPTH = 64
"""How deep the arrays and objects of a JSON body may nest: tuner's own bodies nest 5 levels at most (a Dify
``metadata_condition``'s list value), a document's metadata a few more."""
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NESTING_STEP = np.zeros(256, dtype=np.int32)
_NESTING_STEP[[ord("["), ord("{")]] = 1
_NESTING_STEP[[ord("]"), ord("}")]] = -1


def new_token() -> str:
    """An unguessable token (256 random bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def answered_hosts(bound: str) -> frozenset[str] | None:
    """The ``Host`` names a service listening on ``bound`` answers to: the loopback names and ``bound`` itself;
    ``None`` (any name) when it listens on every address (``0.0.0.0``, ``::``), where the token guards the writes.

    >>> sorted(answered_hosts("10.0.0.5") or [])
    ['10.0.0.5', '127.0.0.1', '::1', 'localhost']
    >>> answered_hosts("0.0.0.0") is None
    True
    """
    name = bound.strip("[]").lower()
    return None if name in _WILDCARDS else LOOPBACK_NAMES | {name}


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port and brackets, lower-cased.

    >>> host_name("[::1]:8000"), host_name("Evil.Example:8765"), host_name("localhost")
    ('::1', 'evil.example', 'localhost')
    """
    if header.startswith("["):
        return header[1:].partition("]")[0].lower()
    return header.rpartition(":")[0].lower() if ":" in header else header.lower()


class WriteGuard:
    """ASGI middleware: the refusals of the module doc; ``hosts`` ``None`` accepts any ``Host``; ``guarded(path)``
    says which paths' writes need the Origin, Content-Type and token checks (default: all)."""

    def __init__(self, app: ASGIApp, token: str, hosts: frozenset[str] | None,
                 guarded: Callable[[str], bool] = lambda _path: True) -> None:
        if not token:
            raise ValueError("the write token must not be empty")
        self.app, self.token, self.hosts, self.guarded = app, token, hosts, guarded

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and reason this request is refused with, or None."""
        from starlette.datastructures import Headers

        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.hosts is not None and host_name(host) not in self.hosts:
            return 421, f"Host '{host}' is not this service (it answers to {', '.join(sorted(self.hosts))})"
        if scope["method"] not in _WRITES or not self.guarded(scope["path"]):
            return None
        origin = headers.get("origin")
        if origin is not None and origin != f"{scope.get('scheme', 'http')}://{host}":
            return 403, f"cross-site request refused (Origin {origin})"
        content_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type != "application/json":
            return 415, f"the request body must be sent as application/json (got '{content_type or 'none'}')"
        if not hmac.compare_digest(headers.get(TOKEN_HEADER, "").encode(), self.token.encode()):
            return 403, f"missing or wrong {TOKEN_HEADER} header"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self.refusal(scope) if scope["type"] == "http" else None
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, reason = refused
        await _error(status, reason)(scope, receive, send)


def json_depth(raw: bytes) -> int:
    """How deep the arrays and objects of the JSON text ``raw`` nest (0 for a scalar), brackets inside strings not
    counted: the recursion a parser would reach, found in one pass over the bytes without parsing them (a malformed
    text gets a depth too; the parser then refuses it).

    >>> json_depth(b'{"a": [1, {"b": "[[[\\\\"{"}]}'), json_depth(b'"x"'), json_depth(b"[" * 50_000 + b"]" * 50_000)
    (3, 0, 50000)
    """
    steps = _NESTING_STEP[np.frombuffer(_JSON_STRING.sub(b"", raw), dtype=np.uint8)]
    return int(np.cumsum(steps).max(initial=0))


def too_deep(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """The one line refusing a JSON text nested deeper than ``max_depth``, or None.

    >>> too_deep(b"[[[]]]", 2)
    'body: JSON nested 3 levels deep, at most 2 allowed'
    """
    depth = json_depth(raw)
    return f"body: JSON nested {depth} levels deep, at most {max_depth} allowed" if depth > max_depth else None


def _error(status: int, message: str) -> Response:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status)


class BodyGuard:
    """ASGI middleware: a request body over ``max_bytes`` gets 413 before the application reads it, whether its length
    is declared (``Content-Length``) or only found while it streams in (chunked); a body nested deeper than
    ``max_depth`` (:func:`too_deep`) gets ``malformed(path, message)``, the response the service gives any malformed
    body on that path (default: 400 ``{"error": message}``)."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES, max_depth: int = MAX_JSON_DEPTH,
                 malformed: Callable[[str, str], Response] = lambda _path, message: _error(400, message)) -> None:
        self.app, self.max_bytes, self.max_depth, self.malformed = app, max_bytes, max_depth, malformed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._over(scope, receive, send)
            return
        messages: list[Message] = []
        body = bytearray()
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._over(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        refused = too_deep(bytes(body), self.max_depth)
        if refused is not None:
            await self.malformed(scope["path"], refused)(scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _over(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _error(413, f"request body over {self.max_bytes} bytes")(scope, receive, send)


def listen(host: str, port: int, flags: str) -> socket.socket:
    """A socket listening on ``host:port``, which the service then runs on (:func:`serve_on`): the port printed is the
    one bound, also for port 0, and no other process can take it in between. Like uvicorn's own bind it sets
    ``SO_REUSEADDR``: a port that only holds connections of a stopped run (TIME-WAIT) is free, a port another process
    listens on is a :class:`UserError` naming ``flags``."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's default backlog
    except OSError as exc:
        sock.close()
        raise UserError(f"{flags}: cannot listen there: {exc.strerror}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://HOST:PORT/`` of a listening socket (``[::1]`` for an IPv6 address)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve_on(app: ASGIApp, sock: socket.socket) -> None:
    """Run ``app`` with uvicorn on the socket :func:`listen` bound, until it is stopped (Ctrl-C, SIGTERM)."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])