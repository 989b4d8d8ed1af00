"""Indexes (chunks → **indexes** → candidates): where sentence vectors are kept, per (model, prompt, text).

Embedding is the cold-start bottleneck, so vectors are stored per (model, prompt, text): a text that
appears under several chunk configurations, or in several runs, is embedded once. Two stores keep them, with one
row format and checksum: :class:`EmbeddingStore` (SQLite, one machine) and :class:`PostgresEmbeddingStore` (every
worker of a study); :class:`ServingStore` sits in front of either in a running service.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Protocol

import numpy as np

from tuner.cache import PostgresTable, SqliteFile, add_missing_column

log = logging.getLogger(__name__)

STORE_FILE = "embeddings.sqlite"


def vector_id(model: str, prompt: str, backend: str = "") -> str:
    """What a stored vector is keyed by besides its text: the model id, plus the prompt when there is one, plus
    the inference backend when its vectors are not the reference's (``onnx-int8``; see
    :class:`tuner.embedding.InferenceBackend`). An empty prompt and backend give the model id alone, the key
    vectors had before prompts and backends existed.

    >>> vector_id("all-MiniLM-L6-v2", "query: ", "onnx-int8")
    'all-MiniLM-L6-v2|prompt=query: |backend=onnx-int8'
    """
    key = f"{model}|prompt={prompt}" if prompt else model
    return f"{key}|backend={backend}" if backend else key



def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorStore(Protocol):
    """Where vectors are kept, keyed by (:func:`vector_id`, sha256 of the text). Every row carries a checksum of its
    key and vector (:func:`_row_checksum`), verified on read: a row that fails it is missing to the reader, so the
    vector is encoded again and replaced. ``claim`` takes texts about to be encoded, so that another worker embedding
    the same texts waits for these vectors instead of computing them again."""

    damaged_rows: int

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None: ...

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]: ...


_Row = tuple[str, str, int, bytes, bytes]


class _CheckedRows(ABC):
    """What both stores do with rows: build them with their checksum, verify them on read (a row that fails, or was
    written before checksums existed, is left out), and count and log the ones that failed."""

    where: str
    damaged_rows: int
    _BATCH = 500

    @abstractmethod
    def _select(self, model: str, hashes: list[str]) -> list[tuple[str, int, bytes | None, bytes | None]]:
        """``(text_hash, dim, vector, checksum)`` of the stored rows of ``hashes`` under ``model``."""

    @abstractmethod
    def _upsert(self, rows: list[_Row]) -> None:
        """Store ``(model, text_hash, dim, vector, checksum)`` rows, replacing rows of the same key, all or none."""

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The verified vectors of ``hashes`` stored under ``model``; missing and damaged rows are left out."""
        found: dict[str, np.ndarray] = {}
        damaged = 0
        for start in range(0, len(hashes), self._BATCH):
            for text_hash, dim, blob, checksum in self._select(model, list(hashes[start : start + self._BATCH])):
                vector = _verified(model, text_hash, dim, blob, checksum)
                if vector is not None:
                    found[text_hash] = vector
                else:
                    damaged += checksum is not None
        if damaged:
            self.damaged_rows += damaged
            log.warning("embedding store %s: %d stored vectors failed their checksum: encoding them again", self.where, damaged)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        rows = []
        for text_hash, vector in items.items():
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            rows.append((model, text_hash, len(blob) // 4, blob, _row_checksum(model, text_hash, blob)))
        if rows:
            self._upsert(rows)


class EmbeddingStore(_CheckedRows):
    """The vectors of one machine: a SQLite table, safe for several processes on that machine.

    The ``model`` column holds the vector id, so vectors stored before prompts existed are found again
    under an empty prompt. A file SQLite reports as damaged (truncated, a garbage header) is moved aside with
    one warning and the store starts empty (:func:`tuner.cache.move_aside`); a flipped byte in a BLOB, which
    SQLite's own integrity check does not see, fails the row's checksum."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.damaged_rows = 0
        self._file = SqliteFile(self.path, "embedding store", _prepare_embeddings)

    def _select(self, model: str, hashes: list[str]) -> list[tuple[str, int, bytes | None, bytes | None]]:
        marks = ",".join("?" * len(hashes))
        statement = f"SELECT text_hash, dim, vector, checksum FROM embeddings WHERE model = ? AND text_hash IN ({marks})"
        return self._file.run(lambda conn: conn.execute(statement, [model, *hashes]).fetchall())

    def _upsert(self, rows: list[_Row]) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
            conn.commit()

        self._file.run(write)

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]:
        """No claim: all of ``hashes`` are this process's to encode (one machine's workers share little work)."""
        return nullcontext(set(hashes))

    def close(self) -> None:
        """Write the log back into the file and close it (tests then read or damage the file itself)."""
        self._file.close()


class PostgresEmbeddingStore(_CheckedRows):
    """The vectors of every worker of a study, wherever it runs: table ``tuner_embeddings`` (the columns of
    :class:`EmbeddingStore`) in a PostgreSQL database, usually the study's storage.

    A ``put_many`` is one transaction, so a worker killed while writing leaves all of its rows or none. ``claim``
    takes a PostgreSQL advisory lock per text (without waiting) while the text is encoded: a second worker
    embedding the same texts encodes only the ones nobody holds and waits for the others' vectors (see
    :meth:`CachedEncoder.encode`); a worker that dies releases its claims with its session."""

    def __init__(self, url: str) -> None:
        self.damaged_rows = 0
        self._table = PostgresTable(
            url, "embedding store",
            "CREATE TABLE IF NOT EXISTS tuner_embeddings (model TEXT, text_hash TEXT, dim INTEGER, vector BYTEA, "
            "checksum BYTEA, PRIMARY KEY (model, text_hash))",
        )
        self.where = self._table.where

    def __repr__(self) -> str:
        return f"PostgresEmbeddingStore({self.where!r})"

    def _select(self, model: str, hashes: list[str]) -> list[tuple[str, int, bytes | None, bytes | None]]:
        return self._table.all(
            "SELECT text_hash, dim, vector, checksum FROM tuner_embeddings WHERE model = %s AND text_hash = ANY(%s)",
            (model, hashes),
        )

    def _upsert(self, rows: list[_Row]) -> None:
        self._table.write(
            "INSERT INTO tuner_embeddings VALUES (%s, %s, %s, %s, %s) ON CONFLICT (model, text_hash) DO UPDATE "
            "SET dim = EXCLUDED.dim, vector = EXCLUDED.vector, checksum = EXCLUDED.checksum",
            rows,
        )

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]:
        return self._table.advisory_locks(list(hashes), f"tuner:embedding:{model}\0")

    def close(self) -> None:
        self._table.close()


class ServingStore:
    """The store of a running service, in front of the study's ``backing`` store.

    While the indexes are built it is ``backing`` itself (reads, writes and claims pass through), so chunk and
    sentence vectors are stored for the next start. After :meth:`serve`, vectors computed on a request (the
    question's) are kept here in memory, the last ``capacity`` of them, and never written to ``backing``: a request
    does not wait on a store write, and a service does not grow the store by a row for every question it is asked.
    Reads look here first, then in ``backing`` (a question a study already embedded is found there)."""

    def __init__(self, backing: VectorStore, capacity: int = 10_000) -> None:
        self.backing = backing
        self.capacity = capacity
        self._memory: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._serving = False

    @property
    def damaged_rows(self) -> int:
        """``backing``'s count: every row read from a store is read there."""
        return self.backing.damaged_rows

    @damaged_rows.setter
    def damaged_rows(self, value: int) -> None:
        self.backing.damaged_rows = value

    def serve(self) -> None:
        """From now on keep new vectors in memory only."""
        self._serving = True

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text_hash in hashes:
                vector = self._memory.get((model, text_hash))
                if vector is not None:
                    self._memory.move_to_end((model, text_hash))
                    found[text_hash] = vector
        rest = [h for h in hashes if h not in found]
        if rest:
            found.update(self.backing.get_many(model, rest))
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        if not self._serving:
            self.backing.put_many(model, items)
            return
        with self._lock:
            for text_hash, vector in items.items():
                self._memory[(model, text_hash)] = vector
                self._memory.move_to_end((model, text_hash))
            while len(self._memory) > self.capacity:
                self._memory.popitem(last=False)

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]:
        """``backing``'s claim while building; once serving, every text is this request's to encode."""
        return nullcontext(set(hashes)) if self._serving else self.backing.claim(model, hashes)


def _prepare_embeddings(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, text_hash TEXT, dim INTEGER, vector BLOB, "
        "checksum BLOB, PRIMARY KEY (model, text_hash))"
    )
    add_missing_column(conn, "embeddings", "checksum", "BLOB")  # a store from before checksums: its rows verify as missing


def _verified(model: str, text_hash: str, dim: int, blob: object, checksum: object) -> np.ndarray | None:
    """The vector of a stored row, or None when the row is not whole: its bytes do not match its dimension or its
    checksum, or it has no checksum (written before checksums existed)."""
    if not isinstance(blob, bytes) or not isinstance(checksum, bytes) or dim != len(blob) // 4:
        return None
    return np.frombuffer(blob, dtype=np.float32) if checksum == _row_checksum(model, text_hash, blob) else None


def _row_checksum(model: str, text_hash: str, blob: bytes) -> bytes:
    """The first 16 bytes of sha256 over a row's key and vector bytes: a flipped byte in the vector, or a
    vector copied under another key, fails it."""
    return hashlib.sha256(f"{model}\0{text_hash}\0".encode() + blob).digest()[:16]

