"""Deploy (front → export → **serve**): the HTTP retrieval service behind ``tuner serve`` (FastAPI, run by uvicorn).

Endpoints: ``POST /retrieve``, ``GET /healthz`` (503 until the indexes are loaded, then 200), ``GET /config``
(settings and provenance, storage passwords redacted), ``POST /documents`` and ``POST /documents/delete``. The
indexes load in a background thread when the server starts, so the port answers (``loading``) at once; queries
keep being served while documents are added or deleted (see :class:`tuner.deploy.Retriever`).

Every error is ``{"error": "..."}`` with its status: 413 for a body over ``max_body_bytes`` (read no further),
422 for a request that is not what the endpoint takes (malformed JSON, non-UTF-8 bytes, ``top_k`` that is not
a JSON integer, a document with nothing to read), 503 while loading. The writes (``/documents``,
``/documents/delete``) need the service's token, JSON and no foreign ``Origin``, and a ``Host`` the service answers
to is needed everywhere (:class:`tuner.http_guard.WriteGuard`: 403, 415, 421).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tuner import __version__
from tuner.dataset import Document, document_metadata
from tuner.deploy import RetrievedChunk, Retriever
from tuner.http_guard import LOOPBACK_NAMES, WriteGuard
from tuner.redaction import redact_data
from tuner.text import is_blank

MAX_BODY_BYTES = 4 * 1024 * 1024
"""Default request body limit: a question is a few hundred bytes; a batch of documents beyond this is split."""


def _readable(value: str) -> str:
    # the rule tuner validate applies to dataset text: whitespace of any script and invisible characters are empty
    if is_blank(value):
        raise ValueError("is empty (only whitespace or invisible characters)")
    return value


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, description="the question")
    # strict: true, "3" and 2.0 are not a count of chunks (lax mode would read them as 1, 3 and 2)
    top_k: int | None = Field(None, ge=1, strict=True, description="chunks to return (at most the configuration's candidate_depth)")
    filters: dict[str, str | list[str]] | None = Field(
        None, description="field or document-metadata values a chunk must have (a list: any of them)")

    _query_readable = field_validator("query")(_readable)


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    _readable_fields = field_validator("doc_id", "text")(_readable)

    @field_validator("metadata")
    @classmethod
    def _metadata_as_validate_reads_it(cls, value: dict[str, Any]) -> dict[str, Any]:
        metadata, problems = document_metadata(value)
        if problems:
            raise ValueError(problems[0])
        return metadata


class AddDocuments(BaseModel):
    model_config = ConfigDict(extra="forbid")
    documents: list[DocumentIn] = Field(min_length=1)


class DeleteDocuments(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_ids: list[str] = Field(min_length=1)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _problem(error: Mapping[str, Any]) -> str:
    """One validation problem as ``field: message``; malformed JSON says where (its loc is the character offset)."""
    if error["type"] == "json_invalid":
        reason = error.get("ctx", {}).get("error", "")
        return f"body: malformed JSON at character {error['loc'][-1]}" + (f" ({reason})" if reason else "")
    return "{}: {}".format(".".join(str(p) for p in error["loc"][1:]) or "body", error["msg"])


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets 413 before the application reads it, whether
    its length is declared (``Content-Length``) or only found while it streams in (chunked)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _error(413, f"request body over {self.limit} bytes")(scope, receive, send)


def build_app(load: Callable[[], Retriever], token: str, max_body_bytes: int = MAX_BODY_BYTES,
              hosts: frozenset[str] | None = LOOPBACK_NAMES) -> FastAPI:
    """The service; ``load`` builds the retriever (in a background thread, when the server starts); request bodies
    over ``max_body_bytes`` get 413; writes need ``token``; a ``Host`` outside ``hosts`` gets 421 (``None``: any)."""
    state: dict[str, Any] = {"retriever": None, "error": None}

    def loader() -> None:
        started = time.perf_counter()
        try:
            state["retriever"] = load()
            state["load_seconds"] = round(time.perf_counter() - started, 3)
        except Exception as exc:  # reported by /healthz; the process stays up so the reason can be read
            state["error"] = f"{type(exc).__name__}: {exc}"

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        threading.Thread(target=loader, name="tuner-serve-load", daemon=True).start()
        yield

    app = FastAPI(title="tuner retrieval service", version=__version__, lifespan=lifespan)
    app.add_middleware(BodyLimit, limit=max_body_bytes)
    # added last, so it runs first: a refused write is not read at all
    app.add_middleware(WriteGuard, token=token, hosts=hosts, guarded=lambda path: path.startswith("/documents"))

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, "; ".join(_problem(e) for e in exc.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, exc: HTTPException) -> JSONResponse:
        # FastAPI's own refusals (a body it cannot parse, an unknown path or method) in the service's error shape
        cause = exc.__cause__
        if isinstance(cause, UnicodeDecodeError):
            return _error(422, f"body: not UTF-8 (byte {cause.start})")
        return _error(exc.status_code, str(exc.detail))

    def ready() -> Retriever | JSONResponse:
        retriever: Retriever | None = state["retriever"]
        if retriever is None:
            return _error(503, f"failed to load: {state['error']}" if state["error"] else "loading indexes")
        return retriever

    @app.get("/healthz")
    def healthz() -> Any:
        retriever = ready()
        if isinstance(retriever, JSONResponse):
            return retriever
        return {"status": "ready", "documents": retriever.document_count, "chunks": retriever.chunk_count,
                "load_seconds": state["load_seconds"]}

    @app.get("/config")
    def config() -> Any:
        retriever = ready()
        if isinstance(retriever, JSONResponse):
            return retriever
        return {"settings": retriever.settings.model_dump(), "provenance": redact_data(retriever.provenance),
                "tool": f"tuner {__version__}"}

    @app.post("/retrieve")
    def retrieve(request: RetrieveRequest) -> Any:
        retriever = ready()
        if isinstance(retriever, JSONResponse):
            return retriever
        try:
            chunks: list[RetrievedChunk] = retriever.retrieve(request.query, request.top_k, request.filters)
        except ValueError as exc:
            return _error(422, str(exc))
        return {"chunks": [chunk.to_json() for chunk in chunks]}

    @app.post("/documents")
    def add(request: AddDocuments) -> Any:
        retriever = ready()
        if isinstance(retriever, JSONResponse):
            return retriever
        documents = [Document(d.doc_id, d.text, d.title, d.metadata) for d in request.documents]
        return {"chunks_added": retriever.add_documents(documents), "documents": retriever.document_count}

    @app.post("/documents/delete")
    def delete(request: DeleteDocuments) -> Any:
        retriever = ready()
        if isinstance(retriever, JSONResponse):
            return retriever
        return {"deleted": retriever.delete_documents(request.doc_ids), "documents": retriever.document_count}

    return app
