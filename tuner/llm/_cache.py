"""LLM plumbing (answers, verdicts → **chat endpoint**): the cache of chat completions, keyed by the full request
(never the API key): a SQLite file on one machine, or a table in the study's PostgreSQL database, which every
worker of a study shares wherever it runs (SQLite's WAL mode is unsafe on network filesystems)."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tuner.cache import PostgresTable, SqliteFile, add_missing_column, content_key, default_cache_root

CACHE_FILE = "llm_calls.sqlite"
_FORMAT = "chat-v1"
_CLAIM_POLL = 0.05
log = logging.getLogger(__name__)


def request_key(request: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of a request: endpoint, model, messages and every sampling parameter."""
    return content_key(_FORMAT, request)


@dataclass(frozen=True)
class CachedReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


def _row(key: str, request: dict[str, Any], reply: CachedReply) -> tuple[str, str, str, int, int, float]:
    """A cache row: key, the request as canonical JSON (for a person to read), the reply, and when it was stored."""
    request_json = json.dumps(request, sort_keys=True, ensure_ascii=False)
    return key, request_json, reply.text, reply.prompt_tokens, reply.completion_tokens, time.time()


class CallStore(Protocol):
    """Where replies are kept: ``get`` a reply by request key, ``put`` one (written once per key); ``claim`` a key
    while its request is sent, so that another worker asking the same waits for the reply instead of sending."""

    def claim(self, key: str) -> AbstractContextManager[None]: ...

    def get(self, key: str) -> CachedReply | None: ...

    def put(self, key: str, request: dict[str, Any], reply: CachedReply) -> None: ...


class CallCache:
    """SQLite table ``calls(key, request, text, prompt_tokens, completion_tokens, created, checksum)``.

    WAL mode and a long busy timeout let several processes share one file; a row is written once
    per key and never changes meaning, so concurrent writers of the same key are harmless. The
    request is stored beside the reply so a person can see what was asked. A row's checksum covers its
    key and reply: a row that fails it is a miss (the call is made again and the row replaced); rows
    written before checksums existed have none and are served as they are, so no paid call is repeated.
    A damaged file is moved aside with one warning and started afresh (:class:`tuner.cache.SqliteFile`).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_root() / CACHE_FILE
        self._file = SqliteFile(self.path, "LLM call cache", _prepare_calls)

    def __repr__(self) -> str:
        return f"CallCache({str(self.path)!r})"

    def get(self, key: str) -> CachedReply | None:
        row = self._file.run(
            lambda conn: conn.execute(  # the text as bytes: a damaged one may not even be UTF-8
                "SELECT CAST(text AS BLOB), prompt_tokens, completion_tokens, checksum FROM calls WHERE key = ?", (key,)
            ).fetchone()
        )
        if row is None:
            return None
        reply = CachedReply((row[0] or b"").decode("utf-8", "replace"), row[1], row[2])
        if row[3] is not None and row[3] != _row_checksum(key, reply):
            log.warning("LLM call cache %s: the reply stored for one request failed its checksum: asking again", self.path)
            return None
        return reply

    def put(self, key: str, request: dict[str, Any], reply: CachedReply) -> None:
        values = (*_row(key, request, reply), _row_checksum(key, reply))

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)", values)
            conn.commit()

        self._file.run(write)

    def __len__(self) -> int:
        return int(self._file.run(lambda conn: conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]))

    def claim(self, key: str) -> AbstractContextManager[None]:
        """No claim: one machine's workers rarely ask the same request at the same moment."""
        return nullcontext()

    def close(self) -> None:
        self._file.close()


def _prepare_calls(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, request TEXT, text TEXT, "
        "prompt_tokens INTEGER, completion_tokens INTEGER, created REAL, checksum BLOB)"
    )
    add_missing_column(conn, "calls", "checksum", "BLOB")


def _row_checksum(key: str, reply: CachedReply) -> bytes:
    """The first 16 bytes of sha256 over a row's key and reply."""
    blob = json.dumps([key, reply.text, reply.prompt_tokens, reply.completion_tokens], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).digest()[:16]


class PostgresCallCache:
    """Table ``tuner_llm_calls`` with the columns of :class:`CallCache`, in a PostgreSQL database.

    Each ``put`` is one autocommitted ``INSERT … ON CONFLICT DO NOTHING``: a killed worker leaves either the whole
    row or none, and two workers that ask the same request at once keep the first reply.
    """

    _GET = "SELECT text, prompt_tokens, completion_tokens FROM tuner_llm_calls WHERE key = %s"
    _PUT = "INSERT INTO tuner_llm_calls VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING"

    def __init__(self, url: str) -> None:
        self.url = url
        self._table = PostgresTable(
            url, "LLM call cache",
            "CREATE TABLE IF NOT EXISTS tuner_llm_calls (key TEXT PRIMARY KEY, request TEXT, text TEXT, "
            "prompt_tokens INTEGER, completion_tokens INTEGER, created DOUBLE PRECISION)",
        )

    def __repr__(self) -> str:
        return f"PostgresCallCache({self._table.where!r})"

    def get(self, key: str) -> CachedReply | None:
        row = self._table.one(self._GET, (key,))
        return CachedReply(row[0], row[1], row[2]) if row is not None else None

    def put(self, key: str, request: dict[str, Any], reply: CachedReply) -> None:
        self._table.write(self._PUT, [_row(key, request, reply)])

    def __len__(self) -> int:
        row = self._table.one("SELECT COUNT(*) FROM tuner_llm_calls")
        return int(row[0]) if row is not None else 0

    def close(self) -> None:
        self._table.close()

    @contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold a PostgreSQL advisory lock on ``key`` (a worker that dies releases it with its session); while
        another worker holds it, wait, checking whether its reply has arrived."""
        while True:
            with self._table.advisory_locks([key]) as held:
                if held:
                    yield
                    return
            if self.get(key) is not None:
                yield
                return
            time.sleep(_CLAIM_POLL)
