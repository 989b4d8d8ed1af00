"""LLM plumbing (answers, verdicts → **chat endpoint**): on-disk cache of chat completions, keyed by the full request
(never the API key)."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tuner.cache import SqliteFile, content_key, default_cache_root

CACHE_FILE = "llm_calls.sqlite"
_FORMAT = "chat-v1"
log = logging.getLogger(__name__)


def request_key(request: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of a request: endpoint, model, messages and every sampling parameter."""
    return content_key(_FORMAT, request)


@dataclass(frozen=True)
class CachedReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


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
        values = (
            key,
            json.dumps(request, sort_keys=True, ensure_ascii=False),
            reply.text,
            reply.prompt_tokens,
            reply.completion_tokens,
            time.time(),
            _row_checksum(key, reply),
        )

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?)", values)
            conn.commit()

        self._file.run(write)

    def __len__(self) -> int:
        return int(self._file.run(lambda conn: conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]))

    def close(self) -> None:
        self._file.close()


def _prepare_calls(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, request TEXT, text TEXT, "
        "prompt_tokens INTEGER, completion_tokens INTEGER, created REAL, checksum BLOB)"
    )
    if "checksum" not in {row[1] for row in conn.execute("PRAGMA table_info(calls)")}:
        conn.execute("ALTER TABLE calls ADD COLUMN checksum BLOB")


def _row_checksum(key: str, reply: CachedReply) -> bytes:
    """The first 16 bytes of sha256 over a row's key and reply."""
    blob = json.dumps([key, reply.text, reply.prompt_tokens, reply.completion_tokens], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).digest()[:16]
