"""Deploy (front → export → **serve**): the HTTP retrieval service behind ``tuner serve`` (FastAPI, run by uvicorn).

Endpoints: ``POST /retrieve``, ``GET /healthz`` (503 until the indexes are loaded, then 200), ``GET /config``
(settings, provenance and the engine served on, storage passwords redacted), ``POST /documents`` and
``POST /documents/delete`` (409 on an engine: its collection is the corpus, see :class:`tuner.deploy.EngineCorpus`),
all on the first knowledge base served; and ``POST /retrieval``, Dify's External Knowledge API (:mod:`tuner.external`) over every
knowledge base by its id. The indexes load in a background thread when the server starts, so the port answers
(``loading``) at once; queries keep being served while documents are added or deleted (see
:class:`tuner.deploy.Retriever`).

``/retrieval`` answers as the contract says: a Bearer key (``api_key``, compared in constant time; 1001 for a missing
or malformed ``Authorization`` header, 1002 for a wrong key, both HTTP 403), 2001 (404) for an unknown
``knowledge_id``, 400 with one line for a body that is not the contract's (a ``metadata_condition`` beyond the
:class:`ServiceLimits` too), errors as ``{"error_code", "error_msg"}``.
Dify's ``retrieval_setting`` narrows what the study measured and never widens it: at most ``min(top_k, the tuned
top_k)`` records, and a ``score_threshold`` above 0 drops records scoring below it (the tuned
``relevance_threshold`` already applies; both are the same normalized score in [0, 1]). Each record's ``metadata``
holds the document's metadata, its ``doc_id`` and ``chunk_id``, and under ``tuner`` the settings that produced it.

Every error is ``{"error": "..."}`` with its status: 413 for a body over ``max_body_bytes`` (read no further),
422 for a request that is not what the endpoint takes (malformed JSON, JSON nested deeper than ``max_json_depth``,
non-UTF-8 bytes, ``top_k`` that is not a JSON integer, a document with nothing to read), 503 while loading (the
body limits are :class:`tuner.http_guard.BodyGuard`'s). The writes (``/documents``,
``/documents/delete``) need the service's token, JSON and no foreign ``Origin``, and a ``Host`` the service answers
to is needed everywhere (:class:`tuner.http_guard.WriteGuard`: 403, 415, 421).
"""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from tuner import __version__
from tuner.dataset import Document, document_metadata
from tuner.deploy import EngineCorpus, RetrievedChunk, Retriever
from tuner.external import (
    AUTH_FAILED,
    INVALID_AUTH_HEADER,
    MAX_CONDITION_CHARS,
    MAX_CONDITIONS,
    UNKNOWN_KNOWLEDGE,
    KnowledgeRequest,
    error_body,
    parse_request,
)
from tuner.http_guard import LOOPBACK_NAMES, MAX_BODY_BYTES, MAX_JSON_DEPTH, BodyGuard, WriteGuard
from tuner.redaction import redact_data
from tuner.strict import StrictModel
from tuner.text import is_blank



class ServiceLimits(StrictModel):
    """How much one request may ask of ``tuner serve`` (its ``--max-*`` flags): each bound keeps a hostile or careless
    client from taking the server's CPU or memory. A request beyond one is refused with the limit named."""

    max_body_bytes: int = Field(MAX_BODY_BYTES, ge=1, description="largest request body; larger: 413")
    max_json_depth: int = Field(MAX_JSON_DEPTH, ge=2, le=1000,
                                description="deepest nesting of a body's arrays and objects; deeper: a malformed body")
    max_conditions: int = Field(MAX_CONDITIONS, ge=1, le=100_000,
                                description="conditions of one metadata_condition (each is a pass over every chunk)")
    max_condition_chars: int = Field(MAX_CONDITION_CHARS, ge=1, le=10_000_000,
                                     description="characters of one condition's name or value (a list: its items joined by commas)")


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


def bearer_refusal(header: str | None, api_key: str) -> tuple[int, str] | None:
    """The contract's error code and message for an ``Authorization`` header that is missing or malformed (1001) or
    holds another key (1002, compared in constant time), else None.

    >>> bearer_refusal("Bearer k", "k"), bearer_refusal("k", "k")[0], bearer_refusal("Bearer x", "k")[0]
    (None, 1001, 1002)
    """
    scheme, _, key = (header or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip() or " " in key.strip():
        return INVALID_AUTH_HEADER, "Invalid Authorization header format. Expected 'Bearer <api-key>' format."
    if not hmac.compare_digest(key.strip().encode(), api_key.encode()):
        return AUTH_FAILED, "Authorization failed"
    return None


def knowledge_records(retriever: Retriever, request: KnowledgeRequest) -> list[dict[str, Any]]:
    """The contract's records for ``request`` from ``retriever``: its ranking with ``min(top_k, the tuned top_k)``,
    records below a ``score_threshold`` above 0 dropped, each record's metadata with the settings used under ``tuner``."""
    settings, wanted = retriever.settings, request.retrieval_setting
    k = min(wanted.top_k, settings.top_k)
    condition = request.metadata_condition
    chunks = retriever.retrieve(request.query, k, conditions=condition.parsed() if condition else (),
                                logical=condition.logical_operator if condition else "and")
    used: dict[str, Any] = {"top_k": k, "tuned_top_k": settings.top_k, "relevance_threshold": settings.relevance_threshold,
            "score_threshold": wanted.score_threshold, "retriever": settings.retriever,
            "rerank_strength": settings.rerank_strength,
            **{key: retriever.provenance[key] for key in ("study", "trial") if key in retriever.provenance}}
    return [{"content": chunk.text, "score": chunk.score, "title": chunk.metadata.get("title") or chunk.doc_id,
             "metadata": {**chunk.metadata, "doc_id": chunk.doc_id, "tuner": used}}
            for chunk in chunks if wanted.score_threshold <= 0 or chunk.score >= wanted.score_threshold]


def _malformed(path: str, message: str) -> JSONResponse:
    """How each endpoint answers a malformed body: ``/retrieval`` as the contract's 400, the others 422."""
    if path == "/retrieval":
        return JSONResponse(error_body(400, message), status_code=400)
    return _error(422, message)


def build_app(load: Callable[[], Mapping[str, Retriever]], token: str, limits: ServiceLimits = ServiceLimits(),
              hosts: frozenset[str] | None = LOOPBACK_NAMES, api_key: str | None = None) -> FastAPI:
    """The service; ``load`` builds the retrievers by knowledge id (in a background thread, when the server starts;
    the first one answers ``/retrieve``, ``/config`` and the writes); a request beyond ``limits`` is refused;
    writes need ``token``; ``/retrieval`` needs ``api_key`` (None: it refuses every request with 1002); a ``Host``
    outside ``hosts`` gets 421 (``None``: any)."""
    state: dict[str, Any] = {"retriever": None, "knowledge": {}, "error": None}

    def loader() -> None:
        started = time.perf_counter()
        try:
            knowledge = dict(load())
            state["knowledge"], state["retriever"] = knowledge, next(iter(knowledge.values()))
            state["load_seconds"] = round(time.perf_counter() - started, 3)
        except Exception as exc:  # reported by /healthz; the process stays up so the reason can be read
            state["error"] = f"{type(exc).__name__}: {exc}"

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        threading.Thread(target=loader, name="tuner-serve-load", daemon=True).start()
        yield

    app = FastAPI(title="tuner retrieval service", version=__version__, lifespan=lifespan)
    app.add_middleware(BodyGuard, max_bytes=limits.max_body_bytes, max_depth=limits.max_json_depth, malformed=_malformed)
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
                "engine": retriever.served_engine(), "tool": f"tuner {__version__}"}

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

    @app.post("/retrieval")
    async def retrieval(request: Request) -> JSONResponse:
        refused = bearer_refusal(request.headers.get("authorization"), api_key or "") if api_key else (
            AUTH_FAILED, "Authorization failed (this service was started without an API key)")
        if refused is not None:
            return JSONResponse(error_body(*refused), status_code=403)
        try:
            asked = parse_request(json.loads(await request.body()), max_conditions=limits.max_conditions,
                                  max_condition_chars=limits.max_condition_chars)
        except UnicodeDecodeError as exc:
            return JSONResponse(error_body(400, f"body: not UTF-8 (byte {exc.start})"), status_code=400)
        except json.JSONDecodeError as exc:
            return JSONResponse(error_body(400, f"body: malformed JSON at character {exc.pos} ({exc.msg})"), status_code=400)
        except ValueError as exc:
            return JSONResponse(error_body(400, str(exc)), status_code=400)
        if state["retriever"] is None:
            reason = f"failed to load: {state['error']}" if state["error"] else "loading indexes"
            return JSONResponse(error_body(503, reason), status_code=503)
        served: Retriever | None = state["knowledge"].get(asked.knowledge_id)
        if served is None:
            return JSONResponse(error_body(UNKNOWN_KNOWLEDGE, f"The knowledge does not exist: {asked.knowledge_id!r} "
                                           f"(served: {', '.join(state['knowledge'])})"), status_code=404)
        return JSONResponse({"records": await run_in_threadpool(knowledge_records, served, asked)})

    @app.post("/documents")
    def add(request: AddDocuments) -> Any:
        retriever = ready()
        if isinstance(retriever, JSONResponse):
            return retriever
        documents = [Document(d.doc_id, d.text, d.title, d.metadata) for d in request.documents]
        try:
            return {"chunks_added": retriever.add_documents(documents), "documents": retriever.document_count}
        except EngineCorpus as exc:
            return _error(409, str(exc))

    @app.post("/documents/delete")
    def delete(request: DeleteDocuments) -> Any:
        retriever = ready()
        if isinstance(retriever, JSONResponse):
            return retriever
        try:
            return {"deleted": retriever.delete_documents(request.doc_ids), "documents": retriever.document_count}
        except EngineCorpus as exc:
            return _error(409, str(exc))

    return app
