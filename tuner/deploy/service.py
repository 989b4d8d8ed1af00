"""Deploy (front → export → **serve**): the HTTP retrieval service behind ``tuner serve`` (FastAPI, run by uvicorn).

Endpoints: ``POST /retrieve``, ``GET /healthz`` (503 until the indexes are loaded, then 200), ``GET /config``
(settings and provenance, storage passwords redacted), ``POST /documents`` and ``POST /documents/delete``. The
indexes load in a background thread when the server starts, so the port answers (``loading``) at once; queries
keep being served while documents are added or deleted (see :class:`tuner.deploy.Retriever`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from tuner import __version__
from tuner.dataset import Document
from tuner.deploy import RetrievedChunk, Retriever
from tuner.redaction import redact_data


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, description="the question")
    top_k: int | None = Field(None, ge=1, description="chunks to return (at most the configuration's candidate_depth)")
    filters: dict[str, str | list[str]] | None = Field(
        None, description="field or document-metadata values a chunk must have (a list: any of them)")


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class AddDocuments(BaseModel):
    model_config = ConfigDict(extra="forbid")
    documents: list[DocumentIn] = Field(min_length=1)


class DeleteDocuments(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_ids: list[str] = Field(min_length=1)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def build_app(load: Callable[[], Retriever]) -> FastAPI:
    """The service; ``load`` builds the retriever (in a background thread, when the server starts)."""
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

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = ["{}: {}".format(".".join(str(p) for p in e["loc"][1:]) or "body", e["msg"]) for e in exc.errors()]
        return _error(422, "; ".join(problems))

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
