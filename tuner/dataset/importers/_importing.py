"""Importers (outside data → **dataset**): what every importer shares: its result, a JSON Lines reader and a collector
that checks rows where they are read.

An importer reads outside records, hands documents and golden cases to a :class:`Collector` together
with their source location (``file:line``, ``file: row N`` or a JSON path), and returns the collector's
:class:`ImportResult`. Problems that only the source can explain — a document id reused for other
text, a repeated question id, a relevant document that no row provides — are reported there, as one
:class:`UserError` line, before :func:`~tuner.dataset.write_dataset` validates the written files.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuner.errors import UserError
from tuner.io import jsonl_objects

NO_REFERENCE = "(retrieval-only: no reference answer)"


@dataclass
class ImportResult:
    """Records ready for :func:`write_dataset` plus one human-readable note per thing that was skipped."""

    corpus: list[dict[str, Any]]
    golden: list[dict[str, Any]]
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_jsonl(path: Path, required: tuple[str, ...] = ()) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(file:line, record)`` for each JSON object line of ``path`` (blank lines skipped); a malformed
    line or a record without one of the ``required`` keys is a :class:`UserError` naming the line."""
    if not path.is_file():
        raise UserError(f"{path}: not found")
    for number, record in jsonl_objects(path):
        where = f"{path}:{number}"
        missing = [key for key in required if key not in record]
        if missing:
            raise UserError(f"{where}: missing field '{missing[0]}'")
        yield where, record


def cell_text(where: str, column: str, value: Any) -> str:
    """A value as stripped text: "" for a missing value (None, NaN: never the text "None"), a number as written;
    any other value is a :class:`UserError` naming ``where`` and ``column``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise UserError(f"{where}: column '{column}' must hold text, got {type(value).__name__}")


def field_text(where: str, record: dict[str, Any], key: str) -> str:
    """``record[key]`` as :func:`cell_text` (absent or null: "")."""
    return cell_text(where, key, record.get(key))


def skipped_line(where: str, missing: str) -> str:
    """The note of a record skipped for a missing required value: it names the record and the value."""
    return f"{where}: skipped: no value for '{missing}'"


def content_id(prefix: str, text: str) -> str:
    """A document id that follows the text, so the same passage gets the same id in every import:
    ``prefix-`` and the first 12 hex digits of sha256(text)."""
    return f"{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def unique_texts(values: Iterable[str]) -> list[str]:
    """The non-empty stripped values, first occurrence kept, in order."""
    return list(dict.fromkeys(v.strip() for v in values if v.strip()))


class Collector:
    """Corpus documents and golden cases of one import, each remembered with where it was read.

    A document id seen again with the same text is the same document (a paragraph shared by several
    rows); with other text it is an error. Case ids must be unique. :meth:`result` checks that every
    relevant document id of every case names a collected document.
    """

    def __init__(self) -> None:
        self._documents: dict[str, dict[str, Any]] = {}
        self._document_where: dict[str, str] = {}
        self._cases: list[dict[str, Any]] = []
        self._case_where: dict[str, str] = {}

    def document(self, where: str, doc_id: str, text: str, title: str = "", metadata: dict[str, Any] | None = None) -> str:
        """Add (or find again) corpus document ``doc_id`` read at ``where``, with its ``metadata`` (family, date, status…)
        the first time; returns ``doc_id``."""
        known = self._documents.get(doc_id)
        if known is None:
            self._documents[doc_id] = {"doc_id": doc_id, "title": title, "text": text, **({"metadata": metadata} if metadata else {})}
            self._document_where[doc_id] = where
        elif known["text"] != text:
            raise UserError(f"{where}: document id '{doc_id}' already names another text (first at {self._document_where[doc_id]})")
        return doc_id

    def text_document(self, where: str, prefix: str, text: str, title: str = "", metadata: dict[str, Any] | None = None) -> str:
        """Add a document identified by its content (:func:`content_id`): repeated texts are stored once."""
        return self.document(where, content_id(prefix, text), text, title, metadata)

    def has_document(self, doc_id: str) -> bool:
        return doc_id in self._documents

    def case(self, where: str, case: dict[str, Any]) -> None:
        """Add golden case ``case`` (a ``golden.jsonl`` record) read at ``where``."""
        first = self._case_where.get(case["id"])
        if first is not None:
            raise UserError(f"{where}: duplicate question id '{case['id']}' (first at {first})")
        self._case_where[case["id"]] = where
        self._cases.append(case)

    def result(self, notes: list[str], conflicts: list[dict[str, Any]] | None = None) -> ImportResult:
        """The collected records; a case naming a relevant document nobody provided is an error at its row."""
        for case in self._cases:
            for doc_id in case["relevant_doc_ids"]:
                if doc_id not in self._documents:
                    raise UserError(f"{self._case_where[case['id']]}: relevant document '{doc_id}' is not in the corpus")
        return ImportResult(list(self._documents.values()), self._cases, conflicts or [], notes)
