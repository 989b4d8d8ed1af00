"""Cache (beside chunks → indexes → candidates): content-addressed on-disk cache for chunks, indexes and candidate
lists.

An entry lives at ``<root>/<namespace>/<key>/`` with its payload files and a ``MANIFEST.json``
holding the sha256 of each payload file. Entries are built in a staging folder and renamed into
place, so readers never see a partial entry; an entry whose files do not match its manifest
(a torn copy, a disk error, a hand edit) is discarded and rebuilt, never used. Builders of the
same key across processes are serialized with a file lock, so concurrent workers on one shared
filesystem build each entry once.

Keys name what an entry was built from (see ``tuner.retrieval._keys``); :func:`array_digest` gives the
content hash of an input such as an embedding matrix, so an entry built from other bytes has another key.
A damaged store (a SQLite file that is not a database any more, a damaged dataset folder) is moved aside
with :func:`move_aside`, one warning line, and rebuilt.

The stores that several machines share (the LLM call cache, the embedding store) are either a SQLite file
(:class:`SqliteFile`, one machine: SQLite's WAL mode is unsafe on network filesystems) or a table in a PostgreSQL
database (:class:`PostgresTable`), usually the study's storage.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from filelock import FileLock

from tuner.io import public_mode

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")
MANIFEST = "MANIFEST.json"
log = logging.getLogger(__name__)
# SQLite's result codes for a file that is damaged (SQLITE_CORRUPT) or not a database at all (SQLITE_NOTADB)
_DAMAGE_CODES = (11, 26)


def default_cache_root() -> Path:
    """``$TUNER_CACHE`` if set, else ``~/.cache/tuner``."""
    env = os.environ.get("TUNER_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "tuner"


def content_key(*parts: Any) -> str:
    """A stable sha256 key over JSON-serializable parts (dicts are key-sorted)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def array_digest(*arrays: np.ndarray) -> str:
    """sha256 over the shapes, dtypes and bytes of ``arrays``: the content hash of a derived entry's inputs."""
    digest = hashlib.sha256()
    for array in arrays:
        contiguous = np.ascontiguousarray(array)
        digest.update(f"{contiguous.dtype.str}{contiguous.shape}".encode())
        digest.update(contiguous.data)
    return digest.hexdigest()


def is_damaged(exc: sqlite3.DatabaseError) -> bool:
    """True when ``exc`` says the SQLite file itself is damaged (malformed, truncated, not a database), not
    that it is busy, locked or unreadable for another reason."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _DAMAGE_CODES


def move_aside(path: Path, what: str, reason: str) -> Path:
    """Rename a damaged store ``path`` (a file with its SQLite ``-wal``/``-shm`` companions, or a folder) to
    ``<name>.damaged-<UTC time>`` beside it and log one warning; the caller rebuilds ``path``. Kept, not
    deleted: the damage can be inspected, and a hand edit is not lost."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    tries = 1
    while aside.exists():
        tries += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{tries}")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            os.replace(source, aside.with_name(aside.name + suffix))
    log.warning("%s %s is damaged (%s): moved to %s and rebuilt", what, path, reason, aside)
    return aside


def add_missing_column(conn: sqlite3.Connection, table: str, column: str, kind: str) -> None:
    """Add ``column`` to ``table`` when a store written by an older tuner lacks it (its rows read NULL there)."""
    if column not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


class SqliteFile:
    """One SQLite file shared by threads and processes (WAL mode, a long busy timeout), created by ``prepare``.

    :meth:`run` runs an operation on the connection; when SQLite reports the file damaged (truncated, a
    garbage header, a malformed page) the file is moved aside with one warning (:func:`move_aside`, once
    across processes: a file another process already replaced is left alone), created again, and the
    operation runs once more on the empty store. Other errors (busy, locked, permissions) are raised."""

    def __init__(self, path: str | Path, what: str, prepare: Callable[[sqlite3.Connection], None]) -> None:
        self.path = Path(path)
        self.what = what
        self._prepare = prepare
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._inode = self.path.stat().st_ino if self.path.exists() else -1
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):
                raise
            self._move_aside(exc)
            self._conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        # Switching to WAL takes an exclusive lock and SQLite answers "database is locked" at once, without its
        # busy handler, when another process creates the same file: creation is serialized across processes.
        with FileLock(str(self.path) + ".lock"):
            conn = sqlite3.connect(self.path, timeout=120, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                self._prepare(conn)
                conn.commit()
            except BaseException:
                conn.close()
                raise
            self._inode = self.path.stat().st_ino
        return conn

    def _move_aside(self, exc: sqlite3.DatabaseError) -> None:
        with FileLock(str(self.path) + ".lock"):
            if self.path.exists() and self.path.stat().st_ino == self._inode:
                move_aside(self.path, self.what, str(exc))

    def run(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """``operation(connection)`` under this file's lock; on a damaged file, once more on a fresh one."""
        with self._lock:
            try:
                return operation(self._conn)
            except sqlite3.DatabaseError as exc:
                if not is_damaged(exc):
                    raise
                self._conn.close()
                self._move_aside(exc)
                self._conn = self._connect()
                return operation(self._conn)

    def close(self) -> None:
        """Write the log back into the file and close it."""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()


def psycopg_url(url: str) -> str:
    """A libpq URL for a SQLAlchemy one (``postgresql+psycopg://`` → ``postgresql://``)."""
    scheme, _, rest = url.partition("://")
    return f"{scheme.split('+', 1)[0]}://{rest}"


def advisory_key(text: str) -> int:
    """The PostgreSQL advisory lock key of ``text``: the first 8 bytes of its sha256 as a signed bigint."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big", signed=True)


class PostgresTable:
    """One table in a PostgreSQL database, shared by threads (one autocommitted connection, used under a lock) and by
    workers on any machine. ``create`` (``CREATE TABLE IF NOT EXISTS …``) runs under an advisory lock, since two
    workers creating one table at the same moment would otherwise collide in PostgreSQL's catalog. A URL may choose
    the schema with libpq's options (``?options=-csearch_path%3Dname``)."""

    def __init__(self, url: str, what: str, create: str) -> None:
        import psycopg

        from tuner.errors import UserError
        from tuner.redaction import redact

        self.url = url
        self.what = what
        self._lock = threading.Lock()
        try:
            self._conn = psycopg.connect(psycopg_url(url), autocommit=True)
        except psycopg.OperationalError as exc:
            raise UserError(redact(f"{what} {url}: cannot connect: {str(exc).strip().splitlines()[0]}")) from None
        with self._lock, self._conn.transaction():
            self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(f"tuner:create:{create}"),))
            self._conn.execute(create)

    @property
    def where(self) -> str:
        """The URL with its credentials redacted: what messages and ``repr`` show."""
        from tuner.redaction import redact

        return redact(self.url)

    def run(self, operation: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``operation(connection)`` under this table's lock."""
        with self._lock:
            return operation(self._conn)

    def one(self, statement: str, params: tuple[Any, ...] | list[Any] = ()) -> Any:
        """The first row of ``statement``, or None."""
        return self.run(lambda conn: conn.execute(statement, params).fetchone())

    def all(self, statement: str, params: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
        return self.run(lambda conn: conn.execute(statement, params).fetchall())

    def write(self, statement: str, rows: list[tuple[Any, ...]]) -> None:
        """``statement`` for every row, in one transaction: a worker killed on the way leaves all rows or none."""

        def write(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction(), conn.cursor() as cursor:
                cursor.executemany(statement, rows)

        self.run(write)

    @contextmanager
    def advisory_locks(self, names: list[str], namespace: str = "") -> Iterator[set[str]]:
        """Take, without waiting, the advisory lock of each of ``names`` (under ``namespace``) that no other session
        holds; yield the names taken and release them on exit. A worker that dies releases its locks with its
        session."""
        keys = {advisory_key(namespace + name): name for name in names}
        rows = self.all("SELECT k FROM unnest(%s::bigint[]) AS k WHERE pg_try_advisory_lock(k)", (list(keys),))
        held = [row[0] for row in rows]
        try:
            yield {keys[key] for key in held}
        finally:
            if held:
                self.all("SELECT pg_advisory_unlock(k) FROM unnest(%s::bigint[]) AS k", (held,))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class CacheStats:
    hits: int = 0
    builds: int = 0
    rebuilt_corrupt: int = 0
    by_namespace: dict[str, int] = field(default_factory=dict)


class DiskCache:
    """Folder-per-entry cache. ``build(folder)`` writes payload files into ``folder``; ``read(folder)`` loads them."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_root()
        self.stats = CacheStats()

    def entry_dir(self, namespace: str, key: str) -> Path:
        return self.root / namespace / key

    def _valid(self, folder: Path) -> bool:
        manifest_path = folder / MANIFEST
        try:
            manifest = json.loads(manifest_path.read_text("utf-8"))
            files: dict[str, str] = manifest["files"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        present = {p.name for p in folder.iterdir() if p.is_file()} - {MANIFEST}
        if present != set(files):  # a file added beside the payload could change what ``read`` sees
            return False
        return all(_file_digest(folder / name) == digest for name, digest in files.items())

    def get_or_build(
        self,
        namespace: str,
        key: str,
        build: Callable[[Path], None],
        read: Callable[[Path], T],
        keep_damaged: bool = False,
    ) -> T:
        """The entry ``namespace/key``, built by ``build`` unless a valid one exists. An entry that fails its
        checksums is dropped with a warning and rebuilt; with ``keep_damaged`` (entries a person may have edited
        by hand, such as a dataset) it is moved aside instead (:func:`move_aside`)."""
        folder = self.entry_dir(namespace, key)
        if self._valid(folder):
            self.stats.hits += 1
            return read(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        locks = self.root / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        with FileLock(str(locks / f"{namespace}-{key}.lock")):
            if self._valid(folder):
                self.stats.hits += 1
                return read(folder)
            if folder.exists():
                self.stats.rebuilt_corrupt += 1
                if keep_damaged:
                    move_aside(folder, f"{namespace} cache entry", "its files do not match their checksums")
                else:
                    log.warning("%s cache entry %s does not match its checksums: dropped and rebuilt", namespace, folder)
                    shutil.rmtree(folder, ignore_errors=True)
            staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{key}."))
            public_mode(staging, folder=True)  # a team-shared cache: the umask decides, not mkdtemp's 0700
            try:
                build(staging)
                for path in staging.rglob("*"):  # what a builder's library wrote 0600 (safetensors' save_file does)
                    public_mode(path, folder=path.is_dir())
                names = sorted(p.name for p in staging.iterdir() if p.is_file())
                manifest = {"files": {name: _file_digest(staging / name) for name in names}}
                (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), "utf-8")
                os.replace(staging, folder)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            self.stats.builds += 1
            self.stats.by_namespace[namespace] = self.stats.by_namespace.get(namespace, 0) + 1
        return read(folder)
