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
"""

from __future__ import annotations

import hmac
import secrets
import socket
from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tuner.errors import UserError

TOKEN_HEADER = "X-Tuner-Token"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})
_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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
        await JSONResponse({"error": reason}, status_code=status)(scope, receive, send)


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