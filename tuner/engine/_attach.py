"""Engine (**a team's collection** → candidates): attach mode, where a study tunes a Milvus collection the team
already has (``engine: {backend: milvus, uri, collection, fields}``) instead of one tuner builds.

Its chunks and their vectors are the collection's: tuner reads them once (text, doc id, metadata and vector of every
row, :func:`read_collection`) and never writes. Before any of that, :func:`attach` checks the schema against the
``fields`` mapping (each field there and of the right type, the BM25 output field an output of a BM25 function over
the text field, the vector field's index the engine's ``index`` with a metric tuner can score); the vectors'
dimension is checked against the study's embedding model (:func:`check_dimension`) and the golden set's relevant
documents against the ``doc_id`` field (:func:`check_doc_ids`). Every fault is one line naming the collection and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from tuner.cache import array_digest, content_key
from tuner.chunking import CONFLICT, Chunk
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder
from tuner.engine._collections import Collection, load
from tuner.engine._config import INDEX_KINDS, MilvusConfig
from tuner.engine._literal import literal
from tuner.errors import UserError
from tuner.progress import Reporter
from tuner.redaction import redact
from tuner.retrieval import ChunkTable, chunk_versions
from tuner.text import Language

if TYPE_CHECKING:
    from pymilvus import MilvusClient

METRICS: Final = ("COSINE", "IP")
"""The vector metrics whose scores are tuner's cosine: COSINE, and IP over unit vectors."""
MILVUS_BM25_K1: Final = 1.2
"""Milvus's ``bm25_k1`` when the collection's BM25 index does not say (Milvus Lite never says)."""
DEFAULT_ANALYZER: Final = {"type": "standard"}
"""Milvus's analyzer of a text field that names none."""
SCALARS: Final = ("VARCHAR", "INT8", "INT16", "INT32", "INT64", "BOOL", "FLOAT", "DOUBLE")
"""The field types a doc id or a metadata field of scalars may have."""
READ_BATCH: Final = 1000
"""The most rows per page when the collection is read back."""
PAGE_BYTES: Final = 8 << 20
"""The most bytes a page should carry (a gRPC message is refused above 64 MB by a cluster's default and Milvus Lite's
server; rows of 60 KB of metadata make a 1,000-row page 60 MB): a page holds as many rows as fit by the largest row
read so far."""


@dataclass(frozen=True)
class AttachedSchema:
    """An attached collection's schema, checked against the engine's ``fields``: its primary ``key``, the vector
    ``dim``, the vector field's ``index`` and ``metric``, the text field's ``analyzer`` and the BM25 ``bm25_k1``."""

    name: str
    key: str
    dim: int
    index: str
    metric: str
    analyzer: Mapping[str, Any]
    bm25_k1: float


def _type(field: Mapping[str, Any]) -> str:
    return str(getattr(field.get("type"), "name", field.get("type")))


def _params(value: Any) -> dict[str, Any]:
    """Index or analyzer parameters as Milvus gives them back: a mapping, or JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return dict(value) if isinstance(value, Mapping) else {}


def attach(client: MilvusClient, engine: MilvusConfig) -> AttachedSchema:
    """The schema of ``engine.collection``, checked: a :class:`UserError` of one line naming the collection and the
    field for a collection that is not there, a field of the mapping it lacks or holds with another type, a
    ``sparse`` field no BM25 function over ``fields.text`` fills, a vector field without an index, indexed otherwise
    than ``engine.index`` says or with a metric other than COSINE or IP."""
    assert engine.collection is not None and engine.fields is not None, "attach mode names a collection and its fields"
    name, mapping = engine.collection, engine.fields
    if not client.has_collection(name):
        there = sorted(client.list_collections())
        raise UserError(f"engine: collection {name} not found at {redact(engine.uri)} (there: "
                        f"{', '.join(there[:10]) or 'none'}{', …' if len(there) > 10 else ''})")
    described = client.describe_collection(name)
    fields = {f["name"]: f for f in described.get("fields", [])}
    metadata_types = ("JSON",) if isinstance(mapping.metadata, str) else SCALARS
    wanted = [("text", mapping.text, ("VARCHAR",)), ("vector", mapping.vector, ("FLOAT_VECTOR",)),
              ("doc_id", mapping.doc_id, SCALARS), *(("metadata", field, metadata_types) for field in mapping.metadata_fields),
              *([("sparse", mapping.sparse, ("SPARSE_FLOAT_VECTOR",))] if mapping.sparse else [])]
    for role, field, _ in wanted:
        if field not in fields:
            raise UserError(f"engine: collection {name} has no field {field!r} (fields.{role}); its fields: "
                            f"{', '.join(fields)}")
    for role, field, types in wanted:
        if _type(fields[field]) not in types:
            raise UserError(f"engine: collection {name} field {field} (fields.{role}) is {_type(fields[field])}, not "
                            f"{' or '.join(types)}")
    if mapping.sparse and not any(
            _type(f) == "BM25" and mapping.text in f.get("input_field_names", ()) and mapping.sparse in f.get("output_field_names", ())
            for f in described.get("functions", [])):
        raise UserError(f"engine: collection {name} field {mapping.sparse} (fields.sparse) is not filled by a BM25 "
                        f"function over {mapping.text} (fields.text): leave fields.sparse out to search it without BM25")
    key = next((f["name"] for f in fields.values() if f.get("is_primary")), None)
    if key is None:
        raise UserError(f"engine: collection {name} has no primary key field")
    index, metric = _index(client, name, mapping.vector)
    if index != engine.index:
        known = INDEX_KINDS.get(index)
        hint = (f"set engine.index: {index} (--engine-index {index})" if known else
                f"tuner searches {', '.join(INDEX_KINDS)}")
        raise UserError(f"engine: collection {name} field {mapping.vector} is indexed {index}, engine.index says "
                        f"{engine.index}: {hint}")
    if metric not in METRICS:
        raise UserError(f"engine: collection {name} field {mapping.vector} is indexed with metric {metric}: tuner scores "
                        f"by cosine, so it searches a COSINE index, or IP over unit vectors")
    k1 = MILVUS_BM25_K1
    if mapping.sparse:
        k1 = float(_describe(client, name, mapping.sparse).get("bm25_k1", MILVUS_BM25_K1))
    analyzer = _params(fields[mapping.text].get("params", {}).get("analyzer_params")) or dict(DEFAULT_ANALYZER)
    dim = int(_params(fields[mapping.vector].get("params")).get("dim", 0))
    return AttachedSchema(name, key, dim, index, metric, analyzer, k1)


def _describe(client: MilvusClient, name: str, field: str) -> dict[str, Any]:
    """The index of ``field`` as Milvus describes it ({} when it has none)."""
    indexes = client.list_indexes(name, field_name=field)
    if not indexes:
        return {}
    described = client.describe_index(name, indexes[0])
    return {**_params(described.get("params")), **{k: v for k, v in described.items() if k != "params"}}


def _index(client: MilvusClient, name: str, field: str) -> tuple[str, str]:
    described = _describe(client, name, field)
    if not described:
        raise UserError(f"engine: collection {name} field {field} (fields.vector) has no index: Milvus searches only "
                        "an indexed vector field")
    return str(described.get("index_type", "")), str(described.get("metric_type", ""))


def check_dimension(schema: AttachedSchema, field: str, model_id: str, dim: int) -> None:
    """The questions are embedded by ``model_id``: refuse one whose vectors (``dim``) the collection's cannot be
    compared with (not the model the collection was built with)."""
    if schema.dim != dim:
        raise UserError(f"engine: collection {schema.name} field {field} holds {schema.dim}-dimensional vectors, the "
                        f"embedding model {model_id} gives {dim}: embed the questions with the model the collection "
                        "was built with (settings.embedding_model)")


MODEL_SAMPLE: Final = 16
"""Rows whose texts :func:`check_model` embeds again."""
MIN_COSINE: Final = 0.95
"""The least mean cosine between a collection's vectors and its texts embedded again by the study's model and
document prompt: the same model and prompt give ~1 (0.99+ across tuner's inference backends), another model of the
same dimension ~0 (its space is not this one's)."""


def check_model(rows: AttachedRows, encoder: CachedEncoder, schema: AttachedSchema, field: str, model_id: str) -> float:
    """The collection's vectors must be the study's model's (``encoder``: its model with the document prompt): a
    sample of :data:`MODEL_SAMPLE` rows spread over it, their texts embedded again, compared by cosine with the
    stored vectors; a mean below :data:`MIN_COSINE` is a :class:`UserError` naming the collection and both figures.
    Returns the mean cosine."""
    picked = sorted({int(i) for i in np.linspace(0, len(rows.chunks) - 1, min(MODEL_SAMPLE, len(rows.chunks)))})
    again = encoder.encode([rows.chunks[i].text for i in picked]).reshape(len(picked), schema.dim)
    mean = float(np.mean(np.sum(again * rows.vectors[picked], axis=1)))
    if mean < MIN_COSINE:
        raise UserError(f"engine: collection {schema.name} field {field} was not embedded by {model_id} with this document "
                        f"prompt: {len(picked)} of its texts embedded again have a mean cosine of {mean:.3f} with the "
                        f"stored vectors (the same model and prompt give ≥ {MIN_COSINE}); set settings.embedding_model "
                        "(and document_prompt) to the collection's")
    return mean


@dataclass(frozen=True)
class AttachedRows:
    """Every row of an attached collection, read back: its chunks (``chunk_id`` = the primary key, ``passage`` =
    the text), their unit vectors, the primary keys in row order, each document's metadata (its first row's) and
    ``key``, the content hash of all of it (what tuner's caches of this collection are keyed by)."""

    chunks: list[Chunk]
    vectors: np.ndarray
    ids: tuple[Any, ...]
    metadata: dict[str, dict[str, Any]]
    key: str


def _row_bytes(row: Mapping[str, Any]) -> int:
    """About the bytes a row takes in a query's answer: its strings' UTF-8, its JSON values' text, 4 a number or a
    vector component."""
    size = 0
    for value in row.values():
        if isinstance(value, str):
            size += len(value.encode("utf-8"))
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value):
            size += 4 * len(value)
        elif isinstance(value, (dict, list)):
            size += len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))
        else:
            size += 8
    return size


def pages(client: MilvusClient, schema: AttachedSchema, fields: list[str], where: str = "") -> Iterator[list[dict[str, Any]]]:
    """Every row passing ``where`` ('' = all) with ``fields``, page by page in primary-key order: each page asks for
    the rows after the last key read (escaped by the engine's rules: a key holding ``"``, ``\\`` or a control
    character is a literal like any other; pymilvus' own query iterator writes it into its expression unescaped), as
    many as fit :data:`PAGE_BYTES` by the largest row seen (one row for the first page)."""
    last: Any = None
    size, largest = 1, 1
    while True:
        after = "" if last is None else f"{schema.key} > {literal(last)}"
        condition = " and ".join(f"({part})" for part in (after, where) if part) if after and where else after or where
        page = client.query(schema.name, filter=condition, output_fields=fields, limit=size, iterator="True",
                            reduce_stop_for_best="True")
        if not page:
            return
        yield page
        last = max(row[schema.key] for row in page)
        largest = max(largest, *(_row_bytes(row) for row in page))
        size = max(1, min(READ_BATCH, PAGE_BYTES // largest))


def rows_by_keys(client: MilvusClient, schema: AttachedSchema, field: str, values: Sequence[Any],
                 fields: list[str]) -> list[dict[str, Any]]:
    """The rows whose ``field`` (the primary key, the doc id field, any scalar) holds one of ``values``, with
    ``fields``, in primary-key order: the read of the rows a trial needs (search hits, the golden documents' rows, the
    conflicting rows exposure reads) without the rest of the collection."""
    rows: list[dict[str, Any]] = []
    for first in range(0, len(values), READ_BATCH):  # an expression of at most READ_BATCH literals
        where = f"{field} in [{', '.join(literal(v) for v in values[first:first + READ_BATCH])}]"
        for page in pages(client, schema, fields, where):
            rows.extend(page)
    return rows


def _metadata(value: Any) -> dict[str, Any] | None:
    """A JSON metadata field's value as a document's metadata: an object, or a JSON string holding one (metadata
    written as text); None for anything else (a list, a number, a string of no object)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return dict(value) if isinstance(value, Mapping) else ({} if value is None else None)


def read_collection(client: MilvusClient, engine: MilvusConfig, schema: AttachedSchema, reporter: Reporter) -> AttachedRows:
    """Read every row of the attached collection (text, doc id, metadata, vector) once, page by page (:func:`pages`);
    nothing is written. An empty collection is a :class:`UserError`: there is nothing to tune."""
    assert engine.fields is not None, "attach mode names its fields"
    mapping = engine.fields
    load(client, schema.name)
    fields = [schema.key, mapping.text, mapping.doc_id, *mapping.metadata_fields, mapping.vector]
    counted = client.query(schema.name, filter="", output_fields=["count(*)"])
    total = int(counted[0]["count(*)"]) if counted else 0
    if not total:
        raise UserError(f"engine: collection {schema.name} at {redact(engine.uri)} holds no rows: attach the collection "
                        "holding the team's chunks")
    # page by page into the table's own forms (a row's vector as a list of Python floats takes ~6× its float32)
    keys: list[Any] = []
    chunks: list[Chunk] = []
    metadata: dict[str, dict[str, Any]] = {}
    not_objects: list[Any] = []
    vectors = np.zeros((total, schema.dim), dtype=np.float32)
    with reporter.task(f"engine: reading collection {schema.name}", total) as task:
        for page in pages(client, schema, fields):
            if len(keys) + len(page) > len(vectors):  # rows added while it is read
                vectors = np.vstack([vectors, np.zeros((len(page), schema.dim), dtype=np.float32)])
            vectors[len(keys):len(keys) + len(page)] = np.asarray([row[mapping.vector] for row in page], dtype=np.float32)
            for row in page:
                keys.append(row[schema.key])
                text, doc_id = str(row[mapping.text] or ""), str(row[mapping.doc_id])
                chunks.append(Chunk(chunk_id=str(row[schema.key]), doc_id=doc_id, start=0, end=len(text), text=text))
                if doc_id not in metadata:
                    found = (_metadata(row[mapping.metadata]) if isinstance(mapping.metadata, str)
                             else {field: row[field] for field in mapping.metadata_fields})
                    if found is None:
                        not_objects.append(row[schema.key])
                    metadata[doc_id] = found or {}
            task.advance(len(page))
    order = sorted(range(len(keys)), key=keys.__getitem__)  # one order whatever the engine's order within a page
    chunks, vectors = [chunks[i] for i in order], vectors[order]
    if not_objects:
        reporter.stage(f"engine: collection {schema.name} field {mapping.metadata} (fields.metadata) holds no JSON object "
                       f"in {len(not_objects)} document(s) (e.g. row {not_objects[0]!r}): read as no metadata")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors /= np.where(norms > 0, norms, 1.0)  # unit vectors: what dedupe compares
    ids = tuple(keys[i] for i in order)
    key = content_key("attached-chunks", schema.name, [(str(c.chunk_id), c.doc_id, c.text) for c in chunks], metadata,
                      array_digest(vectors))
    return AttachedRows(chunks, vectors, ids, metadata, key)


def check_doc_ids(rows: AttachedRows, dataset: Dataset, schema: AttachedSchema, field: str, reporter: Reporter) -> None:
    """The golden set's relevant documents must be values of the ``doc_id`` field: none found is a
    :class:`UserError` (every recall would be 0, a wrong mapping); some missing is a line (their cases count as
    missed, as a knowledge base without the document would)."""
    relevant = sorted({doc for case in dataset.golden for doc in case.relevant_doc_ids})
    found = set(rows.metadata)
    missing = [doc for doc in relevant if doc not in found]
    if relevant and len(missing) == len(relevant):
        example = next(iter(sorted(found)), "none")
        raise UserError(f"engine: none of the golden set's {len(relevant)} relevant documents is a value of collection "
                        f"{schema.name} field {field} (fields.doc_id): golden {relevant[0]!r}, collection {example!r}; "
                        "map fields.doc_id to the field holding the golden set's doc ids")
    if missing:
        reporter.stage(f"engine: {len(missing)} of the golden set's {len(relevant)} relevant documents are not in "
                       f"collection {schema.name} (e.g. {missing[0]!r}): their cases count them as not retrieved")


def conflicting_documents(rows: AttachedRows, dataset: Dataset) -> dict[str, tuple[str, str]]:
    """The collection's documents tuner knows to conflict, with the ``kind`` and ``severity`` v3's views read: those
    ``conflicts.jsonl`` names (its doc ids are values of the ``doc_id`` field: the team's stale versions, labelled),
    and the stale versions its own metadata shows (a ``family`` holding a document of a later ``date`` in the collection,
    the rule ``version_policy`` reads: kind ``stale``). None known: conflict exposure cannot be measured there."""
    named = {c.doc_id: (c.kind, c.severity) for c in dataset.conflicts if c.doc_id in rows.metadata}
    documents = sorted(rows.metadata)
    versions = chunk_versions(documents, lambda doc: rows.metadata[doc], None)
    stale = {doc: ("stale", "unspecified") for doc, old in zip(documents, versions.stale.tolist()) if old}
    return {**stale, **named}


def attached_collection(client: MilvusClient, schema: AttachedSchema, rows: AttachedRows, conflicts: ChunkTable,
                        language: Language, sparse: str | None, vector: str,
                        conflicting: Mapping[str, tuple[str, str]]) -> Collection:
    """The attached collection as the first stage searches it: its rows as a chunk table (vectors the collection's;
    the rows of ``conflicting`` documents, :func:`conflicting_documents`, marked as conflicts, which the clean view
    leaves out and the ``all`` view, exposure and v3 ``in_index`` search), followed by the chunks of the dataset's
    conflicting documents the collection does not hold (``conflicts``: tuner's chunk table of the dataset, whose
    conflicting chunks are embedded here by its encoder, the questions' model), which v3 ``inject`` draws from and
    which are never searched."""
    own = [replace(chunk, source=CONFLICT, kind=conflicting[chunk.doc_id][0], severity=conflicting[chunk.doc_id][1])
           if chunk.doc_id in conflicting else chunk for chunk in rows.chunks]
    chunks = [chunk for chunk in conflicts.chunks if chunk.conflicting and chunk.doc_id not in rows.metadata]
    vectors = conflicts.encoder.encode([chunk.passage for chunk in chunks]).reshape(len(chunks), schema.dim)
    table = ChunkTable(own + chunks, content_key(rows.key, conflicts.key, *([sorted(conflicting.items())] if conflicting else [])),
                       conflicts.encoder, language,
                       np.vstack([rows.vectors, vectors]).astype(np.float32))
    return Collection(client, schema.name, table, language, schema.dim, schema.index, schema.metric, schema.key, vector,
                      sparse or "", schema.analyzer, schema.bm25_k1, rows.ids)
