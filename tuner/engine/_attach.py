"""Engine (**a team's collection** → candidates): attach mode, where a study tunes a Milvus collection the team
already has (``engine: {backend: milvus, uri, collection, fields}``) instead of one tuner builds.

Its chunks and their vectors are the collection's: tuner reads only the rows a trial needs (:class:`AttachedStore`:
the golden documents' rows and a sample of keys, both found by one scan of the keys, then each row the searches
return, all read by key) and never writes. Before any of that, :func:`attach` checks the schema against the ``fields``
mapping (each field there and of the right type, the BM25 output field an output of a BM25 function over
the text field, the vector field's index the engine's ``index`` with a metric tuner can score); the vectors'
dimension is checked against the study's embedding model (:func:`check_dimension`) and the golden set's relevant
documents against the ``doc_id`` field (:func:`check_doc_ids`). Every fault is one line naming the collection and field.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from tuner.cache import content_key
from tuner.chunking import CONFLICT, Chunk
from tuner.dataset import FAMILY, Dataset
from tuner.embedding import CachedEncoder
from tuner.engine._collections import Collection, RowDigest, keys_in, load
from tuner.engine._config import INDEX_KINDS, MilvusConfig
from tuner.engine._literal import literal, string_literal
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
    ``dim``, the vector field's ``index`` and ``metric``, the text field's ``analyzer``, the BM25 ``bm25_k1`` and the
    doc id field's type ``doc_type``."""

    name: str
    key: str
    dim: int
    index: str
    metric: str
    analyzer: Mapping[str, Any]
    bm25_k1: float
    doc_type: str = "VARCHAR"


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
    return AttachedSchema(name, key, dim, index, metric, analyzer, k1, _type(fields[mapping.doc_id]))


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
    sample of :data:`MODEL_SAMPLE` rows, their texts embedded again, compared by cosine with the
    stored vectors (the rows spread over those read: the golden documents' and the sample); a mean below :data:`MIN_COSINE` is a :class:`UserError` naming the collection and both figures.
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
    """The rows of an attached collection read so far (:meth:`AttachedStore.view`): their chunks (``chunk_id`` = the
    primary key, ``passage`` = the text), their unit vectors, the primary keys in row order, each document's metadata
    (its first row's) and ``key``, the collection's content key (what tuner's caches of it are keyed by)."""

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


def _next_size(largest: int, rows: Sequence[Mapping[str, Any]], most: int) -> tuple[int, int]:
    """The largest row's bytes so far, after ``rows``, and the rows the next page may ask for: as many as fit
    :data:`PAGE_BYTES` by that row, at least 1, at most ``most``."""
    largest = max([largest, *map(_row_bytes, rows)])
    return largest, max(1, min(most, PAGE_BYTES // largest))


def pages(client: MilvusClient, name: str, key: str, fields: list[str], where: str = "",
          most: int | None = None, first: int = 1) -> Iterator[list[dict[str, Any]]]:
    """Every row of collection ``name`` (primary key field ``key``) passing ``where`` ('' = all) with ``fields``, page
    by page in primary-key order: each page asks for the rows after the last key read (escaped by the engine's rules:
    a key holding ``"``, ``\\`` or a control character is a literal like any other; pymilvus' own query iterator
    writes it into its expression unescaped), as many as fit :data:`PAGE_BYTES` by the largest row seen (``first``
    rows for the first page), at most ``most`` (default :data:`READ_BATCH`)."""
    last: Any = None
    size, largest = first, 1
    while True:
        after = "" if last is None else f"{key} > {literal(last)}"
        condition = " and ".join(f"({part})" for part in (after, where) if part) if after and where else after or where
        page = client.query(name, filter=condition, output_fields=fields, limit=size, iterator="True",
                            reduce_stop_for_best="True")
        if not page:
            return
        yield page
        last = max(row[key] for row in page)
        largest, size = _next_size(largest, page, most or READ_BATCH)


QUERY_WINDOW: Final = 16384
"""The most rows one query may return (Milvus's ``quota.maxQueryResultWindow`` default, Lite's too): the page of the
key scan. Each page is a query over the whole collection in Milvus Lite (its ``pk > last`` costs about the same at
any limit: 3.2 s at 1M rows, 0.6 s at 100k, measured for 16,384 rows), so the scan's time is its page count: 1,000-row
pages made the 1M-row key scan ~1,000 queries."""
KEY_PAGE_FIRST: Final = 256
"""Keys of the key scan's first page, whose largest key sizes the next pages (a VARCHAR key may hold up to 64 KB)."""
SAMPLED: Final = 64
"""Rows of an attached collection whose whole content :func:`attached_content` reads (besides every primary key)."""


@dataclass(frozen=True)
class KeyScan:
    """One pass over every primary key of a collection (keys only, page by page: memory one page and ``sample``):
    ``rows``, the count read, ``digest``, a :class:`RowDigest` of every key, ``sample``, the keys whose SHA-256
    (of their JSON) are smallest, that order: the same rows whichever process asks, spread over the collection as a
    uniform draw is; and ``named``, the keys of the rows whose doc id field holds one of the values the scan was
    given (the golden and conflicting documents' rows, then read by key), None when it was given none."""

    rows: int
    digest: str
    sample: tuple[Any, ...]
    named: tuple[Any, ...] | None = None


def _hashed(key: Any) -> bytes:
    return hashlib.sha256(json.dumps(key).encode("utf-8")).digest()


def key_scan(client: MilvusClient, name: str, key: str, reporter: Reporter, keep: int = SAMPLED,
             doc_field: str | None = None, docs: Sequence[Any] = ()) -> KeyScan:
    """:class:`KeyScan` of collection ``name`` (primary key field ``key``), keeping ``keep`` sampled keys; with
    ``doc_field``, each page also carries that field and the keys of the rows holding one of ``docs`` are kept
    (:attr:`KeyScan.named`): the pages are queries over the whole collection anyway (Milvus Lite materializes every
    field of a row it returns, so the doc id costs nothing more, measured), where a filter on the doc id field
    (``doc in [...]``, unindexed) is one or more queries over the whole collection of its own. Never a write."""
    load(client, name)
    keys, sample = RowDigest((key,), None), list[tuple[bytes, Any]]()
    wanted, named = set(docs), list[Any]()
    counted = client.query(name, filter="", output_fields=["count(*)"])
    read = 0
    fields = [key] if doc_field is None or doc_field == key else [key, doc_field]
    with reporter.task(f"engine: reading the primary keys of {name}", int(counted[0]["count(*)"]) if counted else 0) as task:
        for page in pages(client, name, key, fields, most=QUERY_WINDOW, first=KEY_PAGE_FIRST):
            keys.add(page)
            sample = heapq.nsmallest(keep, [*sample, *((_hashed(row[key]), row[key]) for row in page)])
            if doc_field is not None:
                named.extend(row[key] for row in page if row[doc_field] in wanted)
            read += len(page)
            task.advance(len(page))
    return KeyScan(read, keys.hexdigest(), tuple(k for _, k in sample), None if doc_field is None else tuple(named))


def attached_content(client: MilvusClient, name: str, key: str, fields: Sequence[str], vector: str,
                     reporter: Reporter, scan: KeyScan | None = None) -> dict[str, Any]:
    """What a study records of an attached collection's content, to refuse resuming on other rows (another file or
    cluster holding a collection of the same name, rows added or removed since): ``rows``, the row count, and
    ``content``, a digest of every primary key and of the whole rows (``fields``: text, doc id, metadata, vector) of
    the first :data:`SAMPLED` keys of ``scan`` (:func:`key_scan`, made here when not given), keys chosen by their own
    hashes. Never a write. A row edited in place under its key outside the sample is not seen: the team's collection
    has no digest of its own, and reading every row's text and vector is reading the whole collection."""
    scan = scan or key_scan(client, name, key, reporter)
    rows = RowDigest((key, *fields), vector)
    if scan.sample:
        rows.add(client.query(name, filter=keys_in(key, scan.sample[:SAMPLED]), output_fields=[key, *fields]))
    return {"rows": scan.rows, "content": content_key("attached-content", scan.digest, rows.hexdigest())[:24]}


def rows_by_keys(client: MilvusClient, schema: AttachedSchema, field: str, values: Sequence[Any],
                 fields: list[str]) -> list[dict[str, Any]]:
    """The rows whose ``field`` (the primary key, the doc id field, any scalar) holds one of ``values``, with
    ``fields``, in primary-key order: the read of the rows a trial needs (search hits, the golden documents' rows, the
    conflicting rows exposure reads) without the rest of the collection. By primary key, each batch is one plain
    ``key in [...]`` query of as many keys as fit :data:`PAGE_BYTES` by the largest row read so far (the first batch
    one key): Milvus Lite answers it by point reads, where a paged query (``iterator``, ``key > last``) is a pass over
    the whole collection per page (0.5 s and +170 MB at 100k rows against 0.09 s and +24 MB for 1,000 keys,
    measured). By another field, the rows are paged (:func:`pages`)."""
    rows: list[dict[str, Any]] = []
    if field == schema.key:
        keys = sorted(set(values))
        first, size, largest = 0, 1, 1
        while first < len(keys):
            batch = keys[first:first + size]
            found = client.query(schema.name, filter=f"{field} in [{', '.join(literal(v) for v in batch)}]",
                                 output_fields=fields)
            rows.extend(found)
            first += len(batch)
            largest, size = _next_size(largest, found, READ_BATCH)
        return sorted(rows, key=lambda row: row[schema.key])
    for first in range(0, len(values), READ_BATCH):  # an expression of at most READ_BATCH literals
        where = f"{field} in [{', '.join(literal(v) for v in values[first:first + READ_BATCH])}]"
        for page in pages(client, schema.name, schema.key, fields, where, first=KEY_PAGE_FIRST):
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


NOISE_ROWS: Final = 2048
"""Rows of an attached collection read as its sample (the keys of smallest hash, :func:`key_scan`): with the golden
documents' rows, the pool v1/v2/v4 draw their noise from and take their cosine bands' quantiles over, and the rows
:func:`check_model` embeds again are among them."""
FAMILY_BATCH: Final = 100
"""Families per query when their rows are read (one equality each on a JSON field: Milvus Lite refuses ``in`` there)."""


def named_documents(dataset: Dataset) -> list[str]:
    """The documents whose rows an attached study reads first: the golden set's relevant documents and those
    ``conflicts.jsonl`` names, sorted."""
    return sorted({doc for case in dataset.golden for doc in case.relevant_doc_ids} | {c.doc_id for c in dataset.conflicts})


def doc_values(docs: Sequence[str], doc_type: str) -> list[Any]:
    """Doc ids as values of a doc id field of type ``doc_type`` (an integer field's: those that are integers)."""
    if doc_type == "VARCHAR":
        return list(docs)
    return [int(doc) for doc in docs if doc.lstrip("-").isdigit()]


class AttachedStore:
    """The rows of an attached collection read so far, in the order they became known, and nothing else: first the
    rows of the golden set's relevant documents and of the documents ``conflicts.jsonl`` names (their keys found by
    the key scan, :attr:`KeyScan.named`), then :data:`NOISE_ROWS` sampled keys (:class:`KeyScan`), then each row a search returns, fetched by
    primary key the first time one does (:func:`rows_by_keys`: batched, escaped, paged by the row's size). A row's
    document's family (version metadata) is read whole with it, so that whether a document is a stale version
    (:func:`conflicting_documents`) is known when its row is: memory grows with the rows read (a study's golden set,
    sample and candidates), not with the collection's row count. Each row: its chunk (``chunk_id`` = the primary key,
    ``passage`` = the text, marked a conflict when its document is one), its unit vector, its document's metadata
    (its first row's). Nothing is written."""

    def __init__(self, client: MilvusClient, engine: MilvusConfig, schema: AttachedSchema, dataset: Dataset,
                 scan: KeyScan, key: str, reporter: Reporter) -> None:
        assert engine.fields is not None, "attach mode names its fields"
        assert scan.named is not None, "the key scan was given the named documents (named_documents) and kept their keys"
        if not scan.rows:
            raise UserError(f"engine: collection {schema.name} at {redact(engine.uri)} holds no rows: attach the "
                            "collection holding the team's chunks")
        self.total = scan.rows
        self.key = key
        self.keys: list[Any] = []
        self.chunks: list[Chunk] = []
        self.metadata: dict[str, dict[str, Any]] = {}
        self.conflicting: dict[str, tuple[str, str]] = {}
        self.fetched = 0
        """Rows read from the engine (a row is read once)."""
        self._client, self._schema, self._fields, self._dataset = client, schema, engine.fields, dataset
        self._output = [schema.key, self._fields.text, self._fields.doc_id, *self._fields.metadata_fields,
                        self._fields.vector]
        self._row: dict[Any, int] = {}
        self._vectors = np.zeros((0, schema.dim), dtype=np.float32)
        self._families: set[str] = set()
        not_objects: list[Any] = []
        with reporter.task(f"engine: reading the golden documents' rows and a sample of {schema.name}", 2) as task:
            self._read(rows_by_keys(client, schema, schema.key, scan.named, self._output), not_objects)
            task.advance()
            self._read(rows_by_keys(client, schema, schema.key, scan.sample[:NOISE_ROWS], self._output), not_objects)
            task.advance()
        if not_objects:
            reporter.stage(f"engine: collection {schema.name} field {self._fields.metadata} (fields.metadata) holds no "
                           f"JSON object in {len(not_objects)} document(s) (e.g. row {not_objects[0]!r}): read as no "
                           "metadata")

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, row: int) -> Any:
        return self.keys[row]

    @property
    def vectors(self) -> np.ndarray:
        """The unit vectors of the rows read, in row order."""
        return self._vectors[:len(self.keys)]

    def view(self) -> AttachedRows:
        """The rows read so far as :class:`AttachedRows` (sharing this store's lists: read it at once)."""
        return AttachedRows(self.chunks, self.vectors, tuple(self.keys), self.metadata, self.key)

    def rows(self, keys: Sequence[Any]) -> list[int]:
        """The rows of ``keys`` (the store's indices), those not read yet fetched by primary key first."""
        missing = sorted({key for key in keys if key not in self._row})
        if missing:
            self._read(rows_by_keys(self._client, self._schema, self._schema.key, missing, self._output), [])
        return [self._row[key] for key in keys]

    def texts(self) -> Iterator[str]:
        """Every text of the collection, page by page (memory one page): what BM25's document frequencies count."""
        for page in pages(self._client, self._schema.name, self._schema.key, [self._schema.key, self._fields.text]):
            yield from (str(row[self._fields.text] or "") for row in page)

    def _document(self, row: Mapping[str, Any]) -> dict[str, Any] | None:
        fields = self._fields
        return (_metadata(row[fields.metadata]) if isinstance(fields.metadata, str)
                else {field: row[field] for field in fields.metadata_fields})

    def _family_rows(self, families: Sequence[str]) -> list[dict[str, Any]]:
        """Every row of the documents of ``families`` (their metadata's ``family``), read by the metadata field."""
        fields, found = self._fields, list[dict[str, Any]]()
        if isinstance(fields.metadata, str):
            path = f"{fields.metadata}[{string_literal(FAMILY)}]"
            for first in range(0, len(families), FAMILY_BATCH):
                where = " or ".join(f"{path} == {literal(f)}" for f in families[first:first + FAMILY_BATCH])
                for page in pages(self._client, self._schema.name, self._schema.key, self._output, where,
                                  first=KEY_PAGE_FIRST):
                    found.extend(page)
        elif FAMILY in fields.metadata_fields:
            found = rows_by_keys(self._client, self._schema, FAMILY, families, self._output)
        return found

    def _read(self, found: list[dict[str, Any]], not_objects: list[Any]) -> None:
        """Add the rows of ``found`` not read yet, with every row of their documents' families, in primary-key
        order; mark the chunks of conflicting documents (:func:`conflicting_documents` over every document read)."""
        key, fields = self._schema.key, self._fields
        new = {row[key]: row for row in found if row[key] not in self._row}
        families = sorted({family for row in new.values() if isinstance(family := (self._document(row) or {}).get(FAMILY), str)}
                          - self._families)
        if families:
            self._families.update(families)
            new.update((row[key], row) for row in self._family_rows(families) if row[key] not in self._row)
        self.fetched += len(new)
        rows = [new[k] for k in sorted(new)]
        for row in rows:
            doc_id = str(row[fields.doc_id])
            if doc_id not in self.metadata:
                document = self._document(row)
                if document is None:
                    not_objects.append(row[key])
                self.metadata[doc_id] = document or {}
        self.conflicting = conflicting_documents(self.view(), self._dataset)
        first = len(self.keys)
        if first + len(rows) > len(self._vectors):  # room for twice the rows read
            grown = np.zeros((max(2 * len(self._vectors), first + len(rows)), self._schema.dim), dtype=np.float32)
            grown[:first] = self._vectors[:first]
            self._vectors = grown
        vectors = np.asarray([row[fields.vector] for row in rows], dtype=np.float32).reshape(len(rows), self._schema.dim)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._vectors[first:first + len(rows)] = vectors / np.where(norms > 0, norms, 1.0)  # unit vectors: what dedupe compares
        for row in rows:
            text, doc_id = str(row[fields.text] or ""), str(row[fields.doc_id])
            chunk = Chunk(chunk_id=str(row[key]), doc_id=doc_id, start=0, end=len(text), text=text)
            if doc_id in self.conflicting:
                kind, severity = self.conflicting[doc_id]
                chunk = replace(chunk, source=CONFLICT, kind=kind, severity=severity)
            self._row[row[key]] = len(self.keys)
            self.keys.append(row[key])
            self.chunks.append(chunk)


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


class AttachedTable:
    """An attached collection's chunk table under one chunking of the dataset: the rows read so far
    (:class:`AttachedStore`, vectors the collection's; the rows of conflicting documents marked as conflicts, which the
    clean view leaves out and the ``all`` view, exposure and v3 ``in_index`` search), followed by the chunks of the
    dataset's conflicting documents the collection does not hold (``conflicts``: tuner's chunk table of the dataset,
    whose conflicting chunks are embedded here by its encoder, the questions' model), which v3 ``inject`` draws from
    and which are never searched. :meth:`now` is the table as read so far: a row's index never changes (rows are
    appended; the dataset's chunks after them move down as rows are read, and are never a candidate)."""

    def __init__(self, store: AttachedStore, conflicts: ChunkTable, language: Language) -> None:
        self.store, self.encoder, self.language = store, conflicts.encoder, language
        self.injected = [chunk for chunk in conflicts.chunks if chunk.conflicting and chunk.doc_id not in store.metadata]
        self.vectors = conflicts.encoder.encode([chunk.passage for chunk in self.injected]).reshape(
            len(self.injected), store.vectors.shape[1])
        self.key = content_key(store.key, conflicts.key)  # the conflict marks follow from both
        self._now: ChunkTable | None = None

    def now(self) -> ChunkTable:
        """The table of the rows read so far, then the dataset's conflicting chunks (made again when rows were read)."""
        if self._now is None or len(self._now) != len(self.store) + len(self.injected):
            self._now = ChunkTable(self.store.chunks + self.injected, self.key, self.encoder, self.language,
                                   np.vstack([self.store.vectors, self.vectors]).astype(np.float32))
        return self._now


def attached_collection(client: MilvusClient, schema: AttachedSchema, table: AttachedTable, sparse: str | None,
                        vector: str) -> Collection:
    """The attached collection as the first stage searches it: its rows those of ``table`` (read on demand)."""
    return Collection(client, schema.name, table.now(), table.language, schema.dim, schema.index, schema.metric,
                      schema.key, vector, sparse or "", schema.analyzer, schema.bm25_k1, table.store)
