"""Engine (indexes → candidates **in an engine**): where a study's first stage runs, a study-level choice validated at the
edge: ``memory`` (tuner's own indexes in this process, the default) or ``milvus`` (a Milvus Lite ``.db`` file or a
Milvus cluster by URL)."""

from __future__ import annotations

import os
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from tuner.errors import UserError, describe_validation_error
from tuner.redaction import redact

IndexType = Literal["FLAT", "HNSW", "HNSW_SQ", "IVF_FLAT", "IVF_SQ8", "AUTOINDEX"]
"""The dense index types tuner builds and searches (Milvus Lite has these; a cluster has more)."""
DenseIndex = Literal["flat", "hnsw", "ivf"]

INDEX_KINDS: dict[str, DenseIndex] = {"FLAT": "flat", "AUTOINDEX": "flat", "HNSW": "hnsw", "HNSW_SQ": "hnsw",
                                      "IVF_FLAT": "ivf", "IVF_SQ8": "ivf"}
"""The ``dense_index`` setting each Milvus index type is, by the search knob it reads: ``hnsw_ef`` (Milvus ``ef``) for
the HNSW family, ``ivf_nprobe`` (``nprobe``) for the IVF family, none for ``FLAT`` and ``AUTOINDEX`` (whose search
level tuner leaves at Milvus's default)."""


MILVUS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""Milvus's rule for database and collection names."""
MILVUS_NAME_LENGTH = {"db_name": 64, "collection": 255}


class MemoryEngine(BaseModel):
    """tuner's own indexes (BM25 arrays, FAISS) in the process that runs the trial."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    backend: Literal["memory"] = "memory"

    def described(self) -> dict[str, Any]:
        return {"backend": self.backend}


class AttachedFields(BaseModel):
    """Which fields of an attached collection hold what tuner reads: the chunk's ``text`` (VARCHAR), its ``vector``
    (FLOAT_VECTOR, of the study's embedding model), the ``doc_id`` the golden set's relevant documents name, the
    document's ``metadata`` (a JSON field, or a list of scalar fields, what metadata filters and version knobs read;
    none by default) and ``sparse``, the output field of the collection's BM25 function over ``text`` (without it
    the collection has no BM25, and retrievers bm25 and hybrid cannot be searched)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = Field(min_length=1)
    vector: str = Field(min_length=1)
    doc_id: str = Field(min_length=1)
    metadata: str | tuple[str, ...] = ()
    sparse: str | None = Field(None, min_length=1)

    @property
    def metadata_fields(self) -> tuple[str, ...]:
        """The fields ``metadata`` names (one JSON field or scalar fields)."""
        return (self.metadata,) if isinstance(self.metadata, str) else self.metadata


class MilvusEngine(BaseModel):
    """A Milvus engine: ``uri`` is a Milvus Lite file (``PATH.db``, one process at a time) or a server
    (``http://host:19530``); the token (``user:password`` or an API key) is read from the environment variable
    ``token_env``, never from a file; ``db_name`` the database there (default: the server's default). ``index`` is the
    dense index of the collections tuner builds (``FLAT``: exact search), with ``index_params`` as Milvus takes them.

    With ``collection`` (attach mode) tuner builds nothing: it searches that collection, one the team already has,
    read through ``fields`` and never written; ``index`` is then the index the collection's vector field has
    (checked when attaching)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    backend: Literal["milvus"]
    uri: str = Field(min_length=1)
    token_env: str | None = Field(None, min_length=1)
    db_name: str = ""
    index: IndexType = "FLAT"
    index_params: dict[str, int] = Field(default_factory=dict)
    collection: str | None = Field(None, min_length=1)
    fields: AttachedFields | None = None

    @model_validator(mode="after")
    def _attach(self) -> MilvusEngine:
        if (self.collection is None) != (self.fields is None):
            raise ValueError("collection and fields go together (attach mode: the collection and which of its fields "
                             "hold text, vector, doc_id)")
        if self.collection is not None and self.index_params:
            raise ValueError("index_params: an attached collection is built already: tuner builds nothing in it")
        return self

    @field_validator("db_name", "collection")
    @classmethod
    def _name(cls, name: str | None, info: ValidationInfo) -> str | None:
        # checked before any connection: pymilvus sends db_name as a gRPC header, and one holding a newline fails
        # every call, retried for minutes
        if name and not (MILVUS_NAME.fullmatch(name) and len(name) <= MILVUS_NAME_LENGTH[info.field_name or ""]):
            raise ValueError(f"{name!r} is no Milvus name: letters, digits and underscores, not starting with a "
                             f"digit, at most {MILVUS_NAME_LENGTH[info.field_name or '']} characters")
        return name

    @field_validator("uri")
    @classmethod
    def _uri(cls, uri: str) -> str:
        if not (uri.startswith(("http://", "https://", "tcp://", "unix:")) or uri.endswith(".db")):
            raise ValueError(f"must be a Milvus Lite file ending in .db or a server URL (http://host:19530), got {redact(uri)!r}")
        return uri

    @property
    def lite(self) -> bool:
        """Whether ``uri`` is a Milvus Lite file (embedded in this process)."""
        return self.uri.endswith(".db")

    @property
    def dense_index(self) -> DenseIndex:
        """The ``dense_index`` setting ``index`` is: on Milvus the collection's index decides which search knob acts
        (``hnsw_ef``, ``ivf_nprobe``), so a study fixes ``dense_index`` at this (docs/engine.md)."""
        return INDEX_KINDS[self.index]

    def token(self) -> str:
        """The token from ``token_env`` ('' without one); a named variable that is unset is a user error."""
        if self.token_env is None:
            return ""
        value = os.environ.get(self.token_env)
        if not value:
            raise UserError(f"engine: token_env: the environment variable {self.token_env} is not set")
        return value

    def described(self) -> dict[str, Any]:
        """What a run prints and records of the engine (a study, an export): never the token (``token_env`` is only
        a variable's name), credentials in the URI redacted; in attach mode the collection and its field mapping."""
        described = {"backend": self.backend, "uri": redact(self.uri), "db_name": self.db_name, "token_env": self.token_env,
                     "index": self.index, "index_params": dict(self.index_params)}
        if self.collection is None or self.fields is None:
            return described
        # the mapping is what the export's search and tuner serve need to search the team's collection again
        fields = {role: list(field) if isinstance(field, tuple) else field
                  for role, field in self.fields.model_dump().items() if field not in (None, ())}
        return {**described, "collection": self.collection, "fields": fields}


EngineConfig = Annotated[MemoryEngine | MilvusEngine, Field(discriminator="backend")]
"""A study file's ``engine:`` block, told apart by ``backend``."""


class _Engine(BaseModel):
    model_config = ConfigDict(extra="forbid")
    engine: EngineConfig


def parse_engine(data: Any, where: str) -> MemoryEngine | MilvusEngine:
    """``data`` (an ``engine:`` mapping) as an engine; a :class:`UserError` naming ``where`` (a file, the command line)
    and the key otherwise.

    >>> parse_engine({"backend": "milvus", "uri": "kb.db"}, "study.yaml").index
    'FLAT'
    >>> parse_engine({"backend": "milvus", "uri": "kb"}, "study.yaml")
    Traceback (most recent call last):
    ...
    tuner.errors.UserError: study.yaml: engine.milvus.uri: must be a Milvus Lite file ending in .db or a server URL (http://host:19530), got 'kb'
    """
    try:
        return _Engine(engine=data).engine
    except ValidationError as exc:
        raise UserError(f"{where}: {describe_validation_error(exc)}") from None
