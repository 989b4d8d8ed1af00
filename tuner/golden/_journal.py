"""Golden set (golden drafts → **review**): the review log ``<draft>.log.jsonl`` as the draft's journal. A save is one
line appended to the log and flushed to disk (``fsync``) before it is acknowledged; the draft file itself is rewritten
(atomically) only now and then (:meth:`Journal.compact`), each rewrite followed by a marker line naming the rewritten
file by its SHA-256. Reading a draft (:meth:`Journal.load`) replays the saves after the last marker onto the file when
the marker names the file as it is, so whatever the app acknowledged is read back after a ``kill -9``; a draft the
marker does not name (a new ``from-log`` run, a hand edit) is read as it is.

Log lines: a save ``{"time", "id", "version", "action", "changes": {field: [old, new]}}`` (``status`` and
``keypoints_reviewed`` are fields of the row's review state); a marker ``{"time", "draft": SHA-256}``. A last line
without its newline is the tail of an append that was killed midway, never acknowledged: it is ignored, and cut off
before the next append."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tuner.errors import UserError
from tuner.golden._draft import DraftRow, draft_rows, draft_text, parse_row
from tuner.io import MalformedLine, atomic_write_text, jsonl_text, parse_jsonl_line

REVIEW_FIELDS = ("status", "keypoints_reviewed")
"""Fields of a save's ``changes`` that belong to the row's review state."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def log_path(draft: Path) -> Path:
    return draft.with_name(f"{draft.stem}.log.jsonl")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Loaded:
    """A draft as the review left it: its typed rows, their kind, the SHA-256 of the file, whether the log's last
    marker names that file (saves appended now replay onto it) and how many saves the log holds beyond the file."""

    rows: list[DraftRow]
    kind: str
    digest: str
    marked: bool
    pending: int


class Journal:
    """The draft file ``draft`` and its review log (module doc)."""

    def __init__(self, draft: Path) -> None:
        self.draft = draft
        self.log = log_path(draft)

    def stamp(self) -> tuple[tuple[int, int, int], ...]:
        """What changes when either file does (inode, modification time, size of each)."""
        stamps = []
        for path in (self.draft, self.log):
            try:
                stat = path.stat()
            except FileNotFoundError:
                stamps.append((0, 0, -1))
                continue
            stamps.append((stat.st_ino, stat.st_mtime_ns, stat.st_size))
        return tuple(stamps)

    def load(self) -> Loaded:
        try:
            data = self.draft.read_bytes()
        except FileNotFoundError:
            raise UserError(f"{self.draft}: draft file not found") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{self.draft}: not UTF-8 (byte {exc.start})") from None
        kind, rows = draft_rows(text, str(self.draft))
        digest = _digest(data)
        entries = self._entries()
        last = max((i for i, (_, entry) in enumerate(entries) if "draft" in entry), default=None)
        if last is None or entries[last][1]["draft"] != digest:
            return Loaded(rows, kind, digest, marked=False, pending=0)
        replayed = self._replay(rows, kind, entries[last + 1:])
        return Loaded(rows, kind, digest, marked=True, pending=replayed)

    def _entries(self) -> list[tuple[int, dict[str, Any]]]:
        """The log's complete lines, numbered (a torn last line left out)."""
        try:
            text = self.log.read_text("utf-8", errors="replace")
        except FileNotFoundError:
            return []
        lines = text.split("\n")[:-1]  # JSONL lines end at \n only (U+2028 in a saved answer is text)
        entries = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = parse_jsonl_line(line)
            except MalformedLine as exc:
                raise UserError(f"{self.log}:{number}: {exc} (the review log of {self.draft.name})") from None
            if not isinstance(entry, dict):
                raise UserError(f"{self.log}:{number}: expected a JSON object")
            entries.append((number, entry))
        return entries

    def _replay(self, rows: list[DraftRow], kind: str, entries: list[tuple[int, dict[str, Any]]]) -> int:
        """Apply the saves ``entries`` (those after the marker naming the file) to ``rows``; how many applied."""
        index = {row.key: i for i, row in enumerate(rows)}
        applied = 0
        for number, entry in entries:
            where = f"{self.log}:{number}"
            case_id, version, changes = entry.get("id"), entry.get("version"), entry.get("changes")
            if not isinstance(case_id, str) or not isinstance(version, int) or not isinstance(changes, dict):
                raise UserError(f"{where}: a save needs id, version and changes")
            if case_id not in index:
                raise UserError(f"{where}: {case_id} is not a row of {self.draft}")
            row = rows[index[case_id]]
            if version <= row.review.version:
                continue
            if version != row.review.version + 1:
                raise UserError(f"{where}: version {version} of {case_id} follows version {row.review.version}: saves are missing")
            record = row.record()
            for name, change in changes.items():
                if not isinstance(change, list) or len(change) != 2:
                    raise UserError(f"{where}: changes.{name} must be [old, new]")
                (record["review"] if name in REVIEW_FIELDS else record)[name] = change[1]
            record["review"].update(version=version, updated=entry.get("time"))
            try:
                rows[index[case_id]] = parse_row(record, kind)
            except ValueError as exc:
                raise UserError(f"{where}: {exc}") from None
            applied += 1
        return applied

    def append(self, entry: dict[str, Any]) -> None:
        """Append ``entry`` as one line and flush it to disk; a torn last line left by a killed append is cut off first."""
        line = jsonl_text([entry]).encode("utf-8")
        with self.log.open("a+b") as log:
            size = log.seek(0, os.SEEK_END)
            if size:
                log.seek(size - 1)
                if log.read(1) != b"\n":
                    log.seek(0)
                    kept = log.read().rfind(b"\n") + 1
                    log.truncate(kept)
            log.write(line)
            log.flush()
            os.fsync(log.fileno())

    def mark(self, digest: str) -> None:
        """Name the draft file as it is now (SHA-256 ``digest``): saves appended after this replay onto it."""
        self.append({"time": now(), "draft": digest})

    def compact(self, rows: list[DraftRow]) -> str:
        """Rewrite the draft file with ``rows`` (atomic), then mark it; its SHA-256. A kill between the two leaves a
        file the last marker does not name, which holds every save the log had: nothing is replayed twice or lost."""
        text = draft_text(rows)
        atomic_write_text(self.draft, text)
        digest = _digest(text.encode("utf-8"))
        self.mark(digest)
        return digest


def load_draft(path: Path) -> list[DraftRow]:
    """The typed rows of the draft file ``path`` as the review left them: the file, then the saves its review log holds
    that are not in it yet."""
    return Journal(path).load().rows


def read_draft(path: Path) -> list[dict[str, Any]]:
    """The rows of a draft file as the review left them (:func:`load_draft`), each with a review state
    (:class:`ReviewState`'s defaults where a row has none yet, as in the candidates ``tuner golden conflicts``
    writes); a problem is one line naming ``file:line``."""
    return [row.record() for row in load_draft(path)]
