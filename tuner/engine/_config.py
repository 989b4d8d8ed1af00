"""Engine (indexes → candidates **in an engine**): the ``milvus`` engine's ``engine:`` block (:class:`MilvusConfig`:
a Milvus Lite ``.db`` file or a Milvus cluster by URL, its dense index, attach mode's collection and ``fields``),
validated at the edge, and what those fields alone decide: the settings it fixes, how an export is served on it.
The registered engine (:class:`tuner.engine.MilvusEngine`) adds the pipeline that connects to it."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from tuner.engine._base import Engine, EngineFlag, InertKnob, SpaceChoices
from tuner.errors import UserError
from tuner.redaction import redact
from tuner.settings import FIRST_STAGES, RetrievalSettings, stage_fields
from tuner.strict import StrictModel

IndexType = Literal["FLAT", "HNSW", "HNSW_SQ", "IVF_FLAT", "IVF_SQ8", "AUTOINDEX"]
"""The dense index types tuner builds and searches (Milvus Lite has these; a cluster has more)."""
DenseIndex = Literal["flat", "hnsw", "ivf"]

INDEX_KINDS: dict[str, DenseIndex] = {"FLAT": "flat", "AUTOINDEX": "flat", "HNSW": "hnsw", "HNSW_SQ": "hnsw",
                                      "IVF_FLAT": "ivf", "IVF_SQ8": "ivf"}
"""The ``dense_index`` setting each Milvus index type is, by the search knob it reads: ``hnsw_ef`` (Milvus ``ef``) for
the HNSW family, ``ivf_nprobe`` (``nprobe``) for the IVF family, none for ``FLAT`` and ``AUTOINDEX`` (whose search
level tuner leaves at Milvus's default)."""


ATTACH_FIXED: tuple[str, ...] = (*stage_fields("chunking"), "embedding_model", "document_prompt")
"""What an attached collection's rows fix: its chunks and the vectors of its chunks."""
BM25_RETRIEVERS: tuple[str, ...] = tuple(name for name, spec in FIRST_STAGES.items() if spec.bm25)
"""The retrievers that score BM25 terms (``bm25``, ``hybrid``): an attached collection without a BM25 field runs none."""

MILVUS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""Milvus's rule for database and collection names."""
MILVUS_NAME_LENGTH = {"db_name": 64, "collection": 255}


class AttachedFields(StrictModel):
    """Which fields of an attached collection hold what tuner reads: the chunk's ``text`` (VARCHAR), its ``vector``
    (FLOAT_VECTOR, of the study's embedding model), the ``doc_id`` the golden set's relevant documents name, the
    document's ``metadata`` (a JSON field, or a list of scalar fields, what metadata filters and version knobs read;
    none by default) and ``sparse``, the output field of the collection's BM25 function over ``text`` (without it
    the collection has no BM25, and retrievers bm25 and hybrid cannot be searched)."""

    text: str = Field(min_length=1)
    vector: str = Field(min_length=1)
    doc_id: str = Field(min_length=1)
    metadata: str | tuple[str, ...] = ()
    sparse: str | None = Field(None, min_length=1)

    @property
    def metadata_fields(self) -> tuple[str, ...]:
        """The fields ``metadata`` names (one JSON field or scalar fields)."""
        return (self.metadata,) if isinstance(self.metadata, str) else self.metadata


def attached_fields_flag(text: str) -> dict[str, str | list[str]]:
    """``--engine-fields`` as the ``fields:`` mapping: ``ROLE=FIELD`` pairs, ``metadata`` once for a JSON field or
    several times for scalar fields.

    >>> attached_fields_flag("text=body,vector=emb,doc_id=doc,metadata=team,metadata=year")
    {'text': 'body', 'vector': 'emb', 'doc_id': 'doc', 'metadata': ['team', 'year']}
    """
    fields: dict[str, str | list[str]] = {}
    metadata: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        role, equals, field = part.partition("=")
        if not equals or not role or not field:
            raise UserError(f"command line: --engine-fields: {part!r} is not ROLE=FIELD (text=, vector=, doc_id=, "
                            "metadata=, sparse=)")
        if role == "metadata":
            metadata.append(field)
        else:
            fields[role] = field
    if metadata:
        fields["metadata"] = metadata[0] if len(metadata) == 1 else metadata
    return fields


class MilvusConfig(Engine):
    """A Milvus engine: ``uri`` is a Milvus Lite file (``PATH.db``, one process at a time) or a server
    (``http://host:19530``); the token (``user:password`` or an API key) is read from the environment variable
    ``token_env``, never from a file; ``db_name`` the database there (default: the server's default). ``index`` is the
    dense index of the collections tuner builds (``FLAT``: exact search), with ``index_params`` as Milvus takes them.

    With ``collection`` (attach mode) tuner builds nothing: it searches that collection, one the team already has,
    read through ``fields`` and never written; ``index`` is then the index the collection's vector field has
    (checked when attaching)."""

    backend: Literal["milvus"]
    label: ClassVar[str] = "a Milvus Lite file or cluster"
    uri: Annotated[str, EngineFlag(metavar="URI")] = Field(
        min_length=1, description="a Milvus Lite file (PATH.db) or a server (http://host:19530)")
    token_env: Annotated[str | None, EngineFlag(metavar="NAME")] = Field(
        None, min_length=1, description="the environment variable holding the token (user:password or an API key)")
    db_name: Annotated[str, EngineFlag(flag="--engine-db", metavar="NAME")] = Field(
        "", description="the database (default: the server's)")
    index: Annotated[IndexType, EngineFlag(metavar="TYPE", measures=True)] = Field(
        "FLAT", description="the dense index (FLAT default, HNSW, HNSW_SQ, IVF_FLAT, IVF_SQ8, AUTOINDEX): of the "
        "collections tuner builds, or the one an attached collection has")
    index_params: Annotated[dict[str, int], EngineFlag(metavar="MAPPING", measures=True)] = Field(
        default_factory=dict, description="the dense index's build parameters as Milvus takes them ({M: 16})")
    collection: Annotated[str | None, EngineFlag(metavar="NAME", measures=True, together="fields")] = Field(
        None, min_length=1, description="attach mode, search this existing collection (never written) instead of "
        "building one; needs --engine-fields")
    fields: Annotated[AttachedFields | None, EngineFlag(metavar="ROLE=FIELD,...", parse=attached_fields_flag,
                                                        measures=True)] = Field(
        None, description="the attached collection's fields: text=F,vector=F,doc_id=F and optionally metadata=F (a "
        "JSON field; several metadata=F: scalar fields) and sparse=F (its BM25 function's output)")

    @model_validator(mode="after")
    def _attach(self) -> MilvusConfig:
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

    @property
    def attached(self) -> bool:
        """Attach mode: the collection is the team's, read and never written."""
        return self.collection is not None

    def fixed_settings(self) -> dict[str, tuple[Any, str]]:
        """``dense_index`` at the engine's index: on Milvus the collection's index decides which search knob acts
        (``hnsw_ef`` is sampled on an HNSW collection and nowhere else, :data:`tuner.settings.ACTS_WHEN`)."""
        return {"dense_index": (self.dense_index, f"the engine's index is {self.index} ({self.dense_index}): on "
                                "Milvus the collection's index decides; leave dense_index out or set engine.index")}

    def fixed_knobs(self, space: SpaceChoices, base: RetrievalSettings) -> list[InertKnob]:
        """The space's settings a Milvus engine fixes: ``dense_index`` at the engine's index (the collection's index
        is searched); in attach mode the chunking settings, ``embedding_model`` and ``document_prompt`` at the
        study's values (the collection holds its own chunks and vectors; the model embeds the questions and must be
        the one the collection was built with), and without a BM25 output field (``fields.sparse``) the retrievers
        that need BM25."""
        scope = "the milvus engine" if self.collection is None else f"the attached collection {self.collection}"
        fixed = []
        if "dense_index" in space:
            fixed.append(InertKnob("dense_index", self.dense_index, f"it searches its {self.index} index", scope=scope))
        if self.collection is None or self.fields is None:
            return fixed
        fixed += [InertKnob(name, getattr(base, name), "it holds its own chunks and their vectors", scope=scope)
                  for name in ATTACH_FIXED if name in space]
        if self.fields.sparse is None:
            fixed += [InertKnob("retriever", "dense", "it has no BM25 output field, fields.sparse", choice=str(choice),
                                scope=scope) for choice in space.get("retriever") or () if choice in BM25_RETRIEVERS]
        return fixed

    def without_bm25(self) -> str | None:
        if self.fields is None or self.fields.sparse is not None:
            return None
        return f"the attached collection {self.collection} has none (engine.fields.sparse)"

    def relative_to(self, folder: Path) -> MilvusConfig:
        """A Lite file, like the dataset, relative to the study file's folder."""
        return self.model_copy(update={"uri": str((folder / self.uri).resolve())}) if self.lite else self

    def serving(self, provenance: Mapping[str, Any]) -> MilvusConfig:
        """This engine with the dense index of the Milvus engine the export was measured on: the index and its
        parameters are part of what was measured (and of the name of the collection it searched). An export measured
        on an attached collection is served from that collection (read-only, through the recorded field mapping) at
        this address, never from a collection tuner builds in its place."""
        recorded = provenance.get("engine")
        if (self.collection is not None  # attached: its index is its own
                or not isinstance(recorded, Mapping) or recorded.get("backend") != self.backend):
            return self
        if recorded.get("collection"):
            if not isinstance(recorded.get("fields"), Mapping):
                raise UserError(f"engine: the export was measured on the attached collection {recorded['collection']} "
                                "and does not record its field mapping (exported before tuner recorded it): export the "
                                "trial again, or give --engine-collection and --engine-fields")
            # the team's collection itself, at the address the deployment gives, read through the recorded mapping
            return self.model_validate({**self.model_dump(), "index": recorded.get("index", self.index),
                                        "collection": recorded["collection"], "fields": dict(recorded["fields"])})
        return self.model_validate({**self.model_dump(), "index": recorded.get("index", self.index),
                                    "index_params": recorded.get("index_params") or {}})

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
