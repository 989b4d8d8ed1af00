"""Engine (indexes → candidates **in an engine**): the Milvus collections tuner builds, one per (corpus content,
chunking, embedding model): named by a hash of those, built once (upserts by chunk index, so two builders never
double a row), marked complete last, verified before any trial, listed and removed by ``tuner engine ls|gc``.

A collection's properties are its completion marker: ``tuner.state`` is ``building`` from its creation until every
row is in, then ``complete`` with ``tuner.rows`` and ``tuner.digest`` (:func:`content_digest` of every row written);
a collection still ``building`` is never searched. Its builder
writes ``tuner.heartbeat`` as it goes: a collection whose heartbeat is older than :data:`STALE_SECONDS` (a builder
stopped by Ctrl-C or a crash) is dropped and built again by the next run. On Milvus Lite only one process opens a
``.db`` at a time, so a collection found ``building`` there is always such a leftover.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np

from tuner.cache import content_key
from tuner.engine._config import MilvusConfig
from tuner.engine._literal import string_literal
from tuner.errors import UserError
from tuner.extras import import_extra
from tuner.progress import Reporter
from tuner.redaction import redact
from tuner.retrieval import ChunkTable
from tuner.text import Language, analyzer_stopwords, detect_language

if TYPE_CHECKING:
    from pymilvus import MilvusClient

PREFIX: Final = "tuner_"
"""Every collection tuner builds is named ``tuner_<hash>``; ``tuner engine ls|gc`` also require the marker."""
SCHEMA_VERSION: Final = "1"
"""The fields and analyzers of a built collection (part of its name): a new layout builds new collections."""
BM25_K1: Final = 1.5
BM25_B: Final = 0.75
"""tuner's own BM25 parameters (``tuner.retrieval.BM25Retriever``), given to Milvus's BM25 index."""
STALE_SECONDS: Final = 120.0
"""A ``building`` collection whose builder has not written its heartbeat for this long is a leftover."""
CLAIM_SETTLE: Final = 1.0
"""Seconds a builder waits after writing its claim before reading it back (two claims within this time: the last
written wins for both)."""
BATCH: Final = 256
"""Rows per upsert."""
TEXT_BYTES: Final = 65535
"""Milvus's largest VARCHAR."""
STATE, ROWS, BUILDER, HEARTBEAT, MODEL, DIM, CHUNKS, LANGUAGE, DATASET, CREATED, DIGEST = (
    "tuner.state", "tuner.rows", "tuner.builder", "tuner.heartbeat", "tuner.model", "tuner.dim", "tuner.chunks",
    "tuner.language", "tuner.dataset", "tuner.created", "tuner.digest")
BUILDING, COMPLETE = "building", "complete"
DENSE, SPARSE, TEXT = "dense", "sparse", "text"
SCALARS: Final = ("chunk_id", "doc_id", "title", "source", "kind", "severity", "family", "date", "version", "language")
"""The VARCHAR fields of a built collection beside ``text``: the chunk's own fields, the document's version
metadata (``family``, ``date``, ``version``) and the chunk's language; ``conflict`` (BOOL) and ``metadata`` (JSON, the
document's whole metadata) are the others."""

_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def analyzer_params(language: Language) -> dict[str, Any]:
    """The analyzer of the ``text`` field: jieba (precise mode, as tuner's own segmenter cuts) for a Chinese corpus,
    Milvus's ``standard`` tokenizer otherwise, chosen by the dataset's language (the rule tuner's BM25 keys by), with
    tuner's stopwords of both scripts (and, for jieba, which keeps punctuation as words, the punctuation): the rule
    tuner's in-memory BM25 tokenizes by too (:func:`tuner.text.analyzer_tokens`, one source of the stop list).

    >>> analyzer_params("zh")["tokenizer"]
    {'type': 'jieba', 'mode': 'exact'}
    """
    stop = sorted(analyzer_stopwords(language))
    tokenizer: str | dict[str, str] = {"type": "jieba", "mode": "exact"} if language == "zh" else "standard"
    return {"tokenizer": tokenizer, "filter": ["lowercase", {"type": "stop", "stop_words": stop}]}


CONNECT_SECONDS: Final = 10.0
"""How long the first call of a connection retries (pymilvus retries an RPC error 75 times by default, ~210 s, even one
that cannot heal)."""
LITE_OPEN_SECONDS: Final = 600.0
"""How long the first call waits on Milvus Lite, which opens its database in it: a file of 1M rows of 384 dimensions
(2.3 GB) took more than :data:`CONNECT_SECONDS` on this 2-core machine under load (bench/milvus_scale.py); a database
Lite cannot open fails at once with its reason."""


def connect(engine: MilvusConfig, create: bool = True) -> MilvusClient:
    """A client of ``engine``; an unreachable URI, a rejected token or an unknown database is a :class:`UserError`
    of one line, as is a missing ``pymilvus`` (the ``milvus`` extra). A Milvus Lite database that cannot be opened
    (another process holds it, a file where Lite keeps a folder, an unwritable folder, a damaged file in it) is one
    line with the reason, never milvus_lite's or pymilvus's tracebacks; without ``create`` (a command that only reads)
    a Lite path where no database is is one too, and nothing is created there."""
    MilvusClient = import_extra("pymilvus", "engine: milvus").MilvusClient
    token = engine.token()
    _quiet_milvus_logs()
    if engine.lite:
        _check_lite_path(Path(engine.uri), create)
    _LITE_FAILURE.clear()
    try:
        # an embedded Lite server in this process: no keepalive pings (its gRPC server answers them with GOAWAY
        # "too_many_pings", printed on stderr)
        options = {"grpc.keepalive_time_ms": 2**31 - 1, "grpc.keepalive_permit_without_calls": 0} if engine.lite else {}
        client = MilvusClient(uri=engine.uri, token=token, db_name=engine.db_name, timeout=10, grpc_options=options)
        client.list_collections(timeout=LITE_OPEN_SECONDS if engine.lite else CONNECT_SECONDS)
    except Exception as exc:  # pymilvus raises MilvusException, gRPC errors and OSErrors alike for a failed connection
        raise UserError(f"engine: cannot use Milvus at {redact(engine.uri)}: {_LITE_FAILURE.reason() or _reason(exc)}") from None
    return client


def _check_lite_path(path: Path, create: bool) -> None:
    """Refuse, before Lite is started, a database path it cannot open or (without ``create``) would create."""
    if path.is_file():
        raise UserError(f"engine: {path} is a file, not a Milvus Lite database (Milvus Lite keeps a folder of that name)")
    if not path.exists() and not create:
        raise UserError(f"engine: no Milvus Lite database at {path} (a command that only reads creates none; "
                        "check the path)")


class _LiteFailure(logging.Handler):
    """Keeps the reason of the last error milvus_lite logged, which pymilvus replaces by ``Open local milvus failed``
    (the Lite server manager logs the exception and returns nothing): ``another process holds …``, a permission."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.last: BaseException | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.last = record.exc_info[1]

    def clear(self) -> None:
        self.last = None

    def reason(self) -> str | None:
        """The logged failure in one line, said the way a user can act on it; None without one."""
        failure = self.last
        if failure is None:
            return None
        if type(failure).__name__ == "DataDirLockedError":
            return ("another process holds it (Milvus Lite opens a database in one process at a time): wait for that "
                    "process or stop it, or use another file")
        if isinstance(failure, PermissionError):
            return f"permission denied: {failure.filename or failure}"
        return _reason(failure)


_LITE_FAILURE = _LiteFailure()


@cache
def _quiet_milvus_logs() -> None:
    """Keep milvus_lite's and pymilvus's own error logs (a traceback per failed call, 12–100 lines) off stderr: each
    such error also reaches tuner as the exception of the call, which says it in one line; milvus_lite's last error is
    kept for :func:`connect`. The embedded server's gRPC log of each call pymilvus makes that Lite does not implement
    (AllocTimestamp, while pymilvus waits for an index) is none of the run's errors; the only gRPC server a tuner
    process runs is Lite's."""
    lite = logging.getLogger("milvus_lite")
    lite.addHandler(_LITE_FAILURE)
    lite.propagate = False
    logging.getLogger("pymilvus").setLevel(logging.CRITICAL)
    logging.getLogger("grpc._server").setLevel(logging.CRITICAL)


def _reason(exc: BaseException) -> str:
    """One line of what went wrong, without a token."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return redact(" ".join(str(message).split()))[:300]


def collection_name(table: ChunkTable, language: Language, engine: MilvusConfig) -> str:
    """The collection of ``table``'s chunks (its key: dataset content, language, chunking, chunker version) with the
    vectors of its encoder (model, document prompt, inference backend), under ``engine``'s index built with its
    ``index_params`` (an HNSW of ``M`` 16 is not one of ``M`` 32: the completion marker would reuse the wrong one)."""
    key = content_key("milvus-collection", SCHEMA_VERSION, table.key, language, table.encoder.vector_id,
                      engine.index, engine.index_params)
    return PREFIX + key[:24]


def keys_in(field: str, keys: Sequence[Any], negate: bool = False) -> str:
    """The rows whose primary key ``field`` is one of ``keys`` (strings or integers) as a Milvus expression.

    >>> keys_in("pk", ["a", "b"]), keys_in("id", [0, 3], negate=True)
    ('pk in ["a", "b"]', 'id not in [0, 3]')
    """
    literals = ", ".join(string_literal(k) if isinstance(k, str) else str(int(k)) for k in keys)
    return f"{field} {'not in' if negate else 'in'} [{literals}]"


class KeyedRows(Protocol):
    """The rows of an attached collection tuner has read (:class:`tuner.engine._attach.AttachedStore`): the first
    ``len()`` rows of its table, each row's primary key by index, fetched by key on demand; ``total`` the entities
    the collection holds."""

    total: int

    def __len__(self) -> int: ...

    def __getitem__(self, row: int) -> Any: ...

    def rows(self, keys: Sequence[Any]) -> list[int]:
        """The table rows of the entities of ``keys``, the rows not read yet fetched (appended) first."""
        ...

    def texts(self) -> Iterator[str]:
        """Every text of the collection, page by page (what BM25's document frequencies count)."""
        ...


@dataclass(frozen=True)
class Collection:
    """A complete, verified collection of one chunk table: its rows are the table's chunks. ``index`` is its dense
    field's index type (which search knobs act, :func:`tuner.engine.index_knobs`) and ``metric`` its metric (``COSINE``,
    or ``IP`` on an attached collection of unit vectors).

    A collection tuner built has the fields of :func:`_schema`, ``id`` = chunk index; an attached one (attach mode,
    :func:`tuner.engine.attach`) names its primary ``key``, ``vector`` and ``sparse`` fields ('' = no BM25), its text
    field's ``analyzer`` and BM25 ``bm25_k1``, and ``ids``, the rows read of it (:class:`KeyedRows`: the table's
    first rows, each a primary key; ``table`` is its key, the rows read when it was attached and the dataset's
    conflicting documents after them)."""

    client: MilvusClient
    name: str
    table: ChunkTable
    language: Language
    dim: int
    index: str
    metric: str = "COSINE"
    key: str = "id"
    vector: str = DENSE
    sparse: str = SPARSE
    analyzer: Mapping[str, Any] | None = None
    bm25_k1: float = BM25_K1
    ids: KeyedRows | None = None

    @property
    def analyzer_params(self) -> Mapping[str, Any]:
        """The analyzer of the text field: the attached collection's, or :func:`analyzer_params` of the language."""
        return analyzer_params(self.language) if self.analyzer is None else self.analyzer

    @property
    def rows(self) -> int:
        """The entities of the collection: its table's rows, or an attached collection's count (of which the table
        holds those read so far)."""
        return len(self.table) if self.ids is None else self.ids.total

    @property
    def known(self) -> int:
        """The table rows that are entities of the collection: every one of a built collection, the rows read of an
        attached one (its table also holds the dataset's conflicting documents, which the collection never does)."""
        return len(self.table) if self.ids is None else len(self.ids)

    def table_rows(self, keys: Sequence[Any]) -> list[int]:
        """The table rows of the entities whose primary keys are ``keys`` (an attached collection's fetched first when
        not read yet)."""
        return [int(key) for key in keys] if self.ids is None else self.ids.rows(keys)

    def texts(self) -> Iterator[str]:
        """Every text of the collection: the table's, or an attached collection's read page by page."""
        return iter(self.table.passages[:self.rows]) if self.ids is None else self.ids.texts()

    def keys_expression(self, rows: Sequence[int], negate: bool = False) -> str:
        """The entities of table ``rows`` as an expression over the primary key: ``id in [0, 3]``."""
        ids = self.ids
        return keys_in(self.key, rows if ids is None else [ids[row] for row in rows], negate)


@dataclass(frozen=True)
class CollectionInfo:
    """A collection tuner made, as ``tuner engine ls`` shows it."""

    name: str
    state: str
    rows: int
    model: str
    dataset: str
    created: str
    heartbeat_age: float | None

    def line(self) -> str:
        age = "" if self.state == COMPLETE or self.heartbeat_age is None else f", heartbeat {self.heartbeat_age:.0f} s ago"
        return f"{self.name}  {self.state}{age}  {self.rows} rows  {self.model}  {self.dataset}  {self.created}"


def _properties(client: MilvusClient, name: str) -> dict[str, str] | None:
    if not client.has_collection(name):
        return None
    properties = client.describe_collection(name).get("properties") or {}
    return {str(k): str(v) for k, v in properties.items()}


@contextmanager
def _process_lock(engine: MilvusConfig, name: str) -> Iterator[None]:
    """One builder per collection in this process (threads of one worker); processes claim through the marker."""
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault((engine.uri, name), threading.Lock())
    with lock:
        yield


def ensure_collection(client: MilvusClient, engine: MilvusConfig, table: ChunkTable, language: Language,
                      vectors: Callable[[], np.ndarray], metadata_of: Callable[[str], dict[str, Any]],
                      dataset: str, reporter: Reporter) -> Collection:
    """The complete collection of ``table``, built here when no one has (``vectors``: the table's chunk vectors,
    asked for only then; ``metadata_of``: a document's metadata), waited for while another live builder builds it,
    built again when a builder left it half-done; verified (:func:`verify`) before it is returned."""
    name = collection_name(table, language, engine)
    dim = table.encoder.inner.dim
    with _process_lock(engine, name):
        while True:
            properties = _properties(client, name)
            if properties is not None and properties.get(STATE) == COMPLETE:
                verify(client, name, table, dim, lambda: _rows(table, vectors(), metadata_of, 0, len(table)), reporter)
                return Collection(client, name, table, language, dim, engine.index)
            if properties is not None and (engine.lite or _stale(properties)):
                reporter.stage(f"engine: {name} was left half-built (builder gone): dropping it and building it again")
                client.drop_collection(name)
                continue
            if properties is None:
                me = uuid.uuid4().hex
                if _claim(client, engine, name, table, language, dim, dataset, me):
                    _build(client, name, table, vectors(), metadata_of, me, reporter)
                    continue
            reporter.stage(f"engine: {name} is being built by another worker: waiting")
            time.sleep(2.0)


def _stale(properties: dict[str, str]) -> bool:
    try:
        return time.time() - float(properties.get(HEARTBEAT, "0")) > STALE_SECONDS
    except ValueError:
        return True


def _claim(client: MilvusClient, engine: MilvusConfig, name: str, table: ChunkTable, language: Language, dim: int,
           dataset: str, me: str) -> bool:
    """Create the collection marked ``building`` by ``me``; whether ``me`` is its builder (another worker creating
    it at the same moment may be)."""
    try:
        client.create_collection(name, schema=_schema(client, language, dim), index_params=_indexes(client, engine),
                                 properties={STATE: BUILDING, BUILDER: me, HEARTBEAT: str(time.time()),
                                             MODEL: table.encoder.model_id, DIM: str(dim), CHUNKS: table.key,
                                             LANGUAGE: language, DATASET: dataset,
                                             CREATED: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    except Exception as exc:
        if client.has_collection(name):  # another worker created it first
            return False
        raise UserError(f"engine: cannot create collection {name}: {_reason(exc)}") from None
    if not engine.lite:
        client.alter_collection_properties(name, properties={BUILDER: me})
        time.sleep(CLAIM_SETTLE)
    return (_properties(client, name) or {}).get(BUILDER) == me


def _schema(client: MilvusClient, language: Language, dim: int) -> Any:
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False,
                                  description="tuner: chunks of one corpus, chunking and embedding model")
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field(TEXT, DataType.VARCHAR, max_length=TEXT_BYTES, enable_analyzer=True,
                     analyzer_params=analyzer_params(language))
    for field in SCALARS:
        schema.add_field(field, DataType.VARCHAR, max_length=TEXT_BYTES if field == "title" else 1024)
    schema.add_field("conflict", DataType.BOOL)
    schema.add_field("metadata", DataType.JSON)
    schema.add_field(DENSE, DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field(SPARSE, DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=[TEXT],
                                 output_field_names=[SPARSE]))
    return schema


def _indexes(client: MilvusClient, engine: MilvusConfig) -> Any:
    indexes = client.prepare_index_params()
    indexes.add_index(DENSE, index_type=engine.index, metric_type="COSINE", params=dict(engine.index_params))
    indexes.add_index(SPARSE, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                      params={"bm25_k1": BM25_K1, "bm25_b": BM25_B})
    return indexes


def _clipped(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes (metadata fields only; passages are checked whole)."""
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def _rows(table: ChunkTable, vectors: np.ndarray, metadata_of: Callable[[str], dict[str, Any]],
          first: int, last: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(first, last):
        chunk, metadata = table.chunks[i], metadata_of(table.chunks[i].doc_id)
        passage = table.passages[i]
        fields = {"chunk_id": chunk.chunk_id, "doc_id": chunk.doc_id, "title": chunk.title, "source": chunk.source,
                  "kind": chunk.kind, "severity": chunk.severity, "language": detect_language([passage]),
                  **{key: "" if metadata.get(key) is None else str(metadata[key]) for key in ("family", "date", "version")}}
        rows.append({"id": i, TEXT: passage, **{k: _clipped(v, TEXT_BYTES if k == "title" else 1024) for k, v in fields.items()},
                     "conflict": chunk.conflicting, "metadata": dict(metadata), DENSE: vectors[i].tolist()})
    return rows


def _build(client: MilvusClient, name: str, table: ChunkTable, vectors: np.ndarray,
           metadata_of: Callable[[str], dict[str, Any]], me: str, reporter: Reporter) -> None:
    """Upsert every chunk (by its index: a second builder rewrites rows, never adds), then mark it complete."""
    too_long = next((i for i, p in enumerate(table.passages) if len(p.encode("utf-8")) > TEXT_BYTES), None)
    if too_long is not None:
        client.drop_collection(name)
        raise UserError(f"engine: chunk {table.chunks[too_long].chunk_id} is longer than Milvus's {TEXT_BYTES} bytes "
                        "of VARCHAR: use a smaller chunk_size")
    beat = time.monotonic()
    digest = RowDigest()
    with reporter.task(f"engine: building {name} ({len(table)} chunks)", len(table)) as task:
        for first in range(0, len(table), BATCH):
            last = min(first + BATCH, len(table))
            rows = _rows(table, vectors, metadata_of, first, last)
            client.upsert(name, rows)
            digest.add(rows)
            task.advance(last - first)
            if time.monotonic() - beat > STALE_SECONDS / 4:
                client.alter_collection_properties(name, properties={HEARTBEAT: str(time.time())})
                beat = time.monotonic()
    client.flush(name)
    if (_properties(client, name) or {}).get(BUILDER) != me:
        return  # taken over after a stall: the other builder marks it
    client.alter_collection_properties(name, properties={STATE: COMPLETE, ROWS: str(len(table)),
                                                         DIGEST: digest.hexdigest(), HEARTBEAT: str(time.time())})


DIGESTED: Final = ("id", TEXT, *SCALARS, "conflict", "metadata", DENSE)
"""The fields of a built collection :func:`content_digest` covers: all but ``sparse``, which Milvus's BM25 function
computes from ``text``."""
READ_BATCH: Final = 1000
"""Rows per page when a collection is read back for its digest."""


class RowDigest:
    """A digest of a set of rows that does not depend on their order (Milvus returns a collection's rows in no fixed
    order): the sum, modulo 2²⁵⁶, of each row's SHA-256 over its ``fields`` (the scalars as canonical JSON, the
    ``vector`` field as float32 bytes, exactly what Milvus stores). A row swapped, edited, deleted and replaced under
    another id, or given other vectors or conflict flags changes it; the id is part of each row's hash, so two rows
    trading ids do too.

    >>> a, b = RowDigest(("id", "text", "dense")), RowDigest(("id", "text", "dense"))
    >>> rows = [{"id": i, "text": str(i), "dense": [0.5, float(i)]} for i in range(3)]
    >>> a.add(rows); b.add(rows[::-1])
    >>> a.hexdigest() == b.hexdigest(), len(a.hexdigest())
    (True, 64)
    """

    def __init__(self, fields: Sequence[str] = DIGESTED, vector: str | None = DENSE) -> None:
        self._scalars = [field for field in fields if field != vector]
        self._vector = vector
        self._sum = 0

    def add(self, rows: Sequence[Mapping[str, Any]]) -> None:
        for row in rows:
            scalars = json.dumps([row.get(field) for field in self._scalars], ensure_ascii=False, sort_keys=True)
            vector = b"" if self._vector is None else np.asarray(row.get(self._vector, ()), dtype=np.float32).tobytes()
            self._sum = (self._sum + int.from_bytes(hashlib.sha256(scalars.encode("utf-8") + vector).digest(), "big")) % 2**256

    def hexdigest(self) -> str:
        return f"{self._sum:064x}"


def content_digest(client: MilvusClient, name: str, reporter: Reporter) -> str:
    """:class:`RowDigest` of every row of the built collection ``name``, read back page by page (memory stays one
    page whatever the collection's size)."""
    digest = RowDigest()
    rows = int((client.query(name, filter="", output_fields=["count(*)"], consistency_level="Strong") or [{"count(*)": 0}])[0]["count(*)"])
    logging.getLogger("pymilvus.client.iterator.query_iterator").setLevel(logging.ERROR)  # Lite: no server timestamp
    iterator = client.query_iterator(name, batch_size=READ_BATCH, filter="", output_fields=list(DIGESTED))
    try:
        with reporter.task(f"engine: verifying {name} ({rows} rows)", rows) as task:
            while batch := iterator.next():
                digest.add(batch)
                task.advance(len(batch))
    finally:
        iterator.close()
    return digest.hexdigest()


def verify(client: MilvusClient, name: str, table: ChunkTable, dim: int,
           expected_rows: Callable[[], Sequence[Mapping[str, Any]]], reporter: Reporter) -> None:
    """Refuse (:class:`UserError`) a complete collection that does not hold ``table``: fields or dimension other than
    a built one's, a row count other than its marker's and the table's, or a :func:`content_digest` of its rows other
    than the one its builder recorded (every row's text, fields, conflict flag, metadata and vector, read back once
    per process). A collection completed before tuner recorded digests is compared with ``expected_rows`` (the rows
    its build would write, from the table) and, when equal, given its digest."""
    described = client.describe_collection(name)
    fields = {f["name"]: f for f in described.get("fields", [])}
    missing = [f for f in ("id", TEXT, DENSE, SPARSE, "conflict", "metadata", *SCALARS) if f not in fields]
    if missing:
        raise UserError(f"engine: collection {name} lacks the field(s) {', '.join(missing)}: it was changed underneath; "
                        f"{REBUILD}")
    found_dim = int((fields[DENSE].get("params") or {}).get("dim", 0))
    if found_dim != dim:
        raise UserError(f"engine: collection {name} holds {found_dim}-dimensional vectors, the model "
                        f"{table.encoder.model_id} gives {dim}")
    load(client, name)
    counted = client.query(name, filter="", output_fields=["count(*)"], consistency_level="Strong")
    rows = int(counted[0]["count(*)"]) if counted else 0
    properties = described.get("properties") or {}
    marked = int(properties.get(ROWS, -1))
    if not rows == marked == len(table):
        raise UserError(f"engine: collection {name} holds {rows} rows, its completion marker says {marked} and the "
                        f"chunk table has {len(table)}: it was changed underneath; {REBUILD}")
    recorded = properties.get(DIGEST)
    if recorded is None:
        written = RowDigest()
        written.add(expected_rows())
        recorded = written.hexdigest()
    found = content_digest(client, name, reporter)
    if found != recorded:
        raise UserError(f"engine: collection {name} holds {rows} rows whose content (text, fields, conflict flags, "
                        f"metadata or vectors) differs from what tuner built there: it was changed underneath; {REBUILD}")
    if DIGEST not in properties:
        client.alter_collection_properties(name, properties={DIGEST: found})


REBUILD: Final = ("drop it (tuner engine gc URI --yes drops every collection tuner built there) and run again: tuner "
                  "builds it anew from the dataset")


def load(client: MilvusClient, name: str) -> None:
    """Load ``name`` for search when it is not (a cluster serves only loaded collections). One the engine cannot load
    (a damaged index file of a Lite database) is a :class:`UserError` naming it and the engine's reason."""
    from pymilvus import MilvusException

    state = client.get_load_state(name).get("state")
    if str(state).rsplit(".", 1)[-1] != "Loaded":
        try:
            client.load_collection(name)
        except MilvusException as exc:
            remedy = "tuner engine gc --yes removes it, a run builds it again" if name.startswith(PREFIX) else "rebuild it"
            raise UserError(f"engine: collection {name} cannot be loaded (its files damaged?): {_reason(exc)}; "
                            f"{remedy}") from None


def tuner_collections(client: MilvusClient) -> list[CollectionInfo]:
    """The collections tuner made at the client's URI and database: named ``tuner_…`` and carrying the marker."""
    infos = []
    for name in sorted(client.list_collections()):
        if not name.startswith(PREFIX):
            continue
        properties = _properties(client, name) or {}
        if STATE not in properties:
            continue
        try:
            age: float | None = time.time() - float(properties.get(HEARTBEAT, ""))
        except ValueError:
            age = None
        infos.append(CollectionInfo(name, properties[STATE], int(properties.get(ROWS, 0)), properties.get(MODEL, ""),
                                    properties.get(DATASET, ""), properties.get(CREATED, ""), age))
    return infos
