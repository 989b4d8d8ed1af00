"""LLM plumbing (answers, verdicts → **chat endpoint**): on-disk cache of chat completions, keyed by the full request
(never the API key)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tuner.cache import content_key, default_cache_root

CACHE_FILE = "llm_calls.sqlite"
_FORMAT = "chat-v1"


def request_key(request: dict[str, Any]) -> str:
    """sha256 over the canonical JSON of a request: endpoint, model, messages and every sampling parameter."""
    return content_key(_FORMAT, request)


@dataclass(frozen=True)
class CachedReply:
    text: str
    prompt_tokens: int
    completion_tokens: int


class CallCache:
    """SQLite table ``calls(key, request, text, prompt_tokens, completion_tokens, created)``.

    WAL mode and a long busy timeout let several processes share one file; a row is written once
    per key and never changes meaning, so concurrent writers of the same key are harmless. The
    request is stored beside the reply so a person can see what was asked.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_root() / CACHE_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=120, check_same_thread=False)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, request TEXT, text TEXT, "
                "prompt_tokens INTEGER, completion_tokens INTEGER, created REAL)"
            )
            self._conn.commit()

    def __repr__(self) -> str:
        return f"CallCache({str(self.path)!r})"

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT text, prompt_tokens, completion_tokens FROM calls WHERE key = ?", (key,)
            ).fetchone()
        return CachedReply(row[0], row[1], row[2]) if row is not None else None

    def put(self, key: str, request: dict[str, Any], reply: CachedReply) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key,
                    json.dumps(request, sort_keys=True, ensure_ascii=False),
                    reply.text,
                    reply.prompt_tokens,
                    reply.completion_tokens,
                    time.time(),
                ),
            )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
