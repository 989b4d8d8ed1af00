"""Indexes (chunks → **filter** → candidates): which chunks a metadata filter lets the first stage search, the one rule
of the deployed Retriever's per-request ``filters`` and of the ``metadata_filter`` setting a study turns, and the one
mask both search within (:func:`first_stage_mask`); and the comparison operators of Dify's External Knowledge API
``metadata_condition`` (:data:`OPERATORS`, :func:`condition_mask`), over the same fields and document metadata."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tuner.chunking import Chunk
from tuner.retrieval._table import ChunkTable
from tuner.settings import RetrievalSettings
from tuner.text import parse_date

FILTER_FIELDS = ("doc_id", "title", "source", "kind", "severity")
"""Chunk fields a filter may name; any other key is looked up in the document's metadata."""


def filter_mask(chunks: Sequence[Chunk], metadata_of: Callable[[str], Mapping[str, Any]], filters: Mapping[str, Any]) -> np.ndarray:
    """Per chunk, whether it passes ``filters``: for every key, the chunk's field (``FILTER_FIELDS``) or else its
    document's metadata value (``metadata_of(doc_id)``; absent = None) equals the key's value, or one of the values
    of a list. No key: every chunk passes."""
    allowed = np.ones(len(chunks), dtype=bool)
    for key, wanted in filters.items():
        values = wanted if isinstance(wanted, list) else [wanted]
        allowed &= np.array([value in values for value in _column(chunks, metadata_of, key)], dtype=bool)
    return allowed


def _column(chunks: Sequence[Chunk], metadata_of: Callable[[str], Mapping[str, Any]], key: str) -> list[Any]:
    """Per chunk, the value a filter on ``key`` reads: the chunk's field (``FILTER_FIELDS``), else its document's
    metadata value (absent = None)."""
    if key in FILTER_FIELDS:
        return [getattr(chunk, key) for chunk in chunks]
    return [metadata_of(chunk.doc_id).get(key) for chunk in chunks]


ValueKind = Literal["text", "texts", "number", "date", "none"]
"""What a comparison's ``value`` must be: a string, a list of strings (or one comma-separated string), a number (or a
string holding one), a date (ISO 8601, Chinese 2024年3月1日, or Unix seconds), or nothing."""


def _texts(value: Any) -> list[str]:
    """A metadata value as the strings it holds: a list's elements, a scalar's text, none for None."""
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def as_date(value: Any) -> dt.datetime | None:
    """A date value as a naive UTC datetime: a string :func:`tuner.text.parse_date` reads (a date is its midnight), or
    a number of Unix seconds (Dify's time metadata); else None.

    >>> as_date("2024年3月1日"), as_date(0)
    (datetime.datetime(2024, 3, 1, 0, 0), datetime.datetime(1970, 1, 1, 0, 0))
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value, dt.timezone.utc).replace(tzinfo=None)
    parsed = parse_date(value) if isinstance(value, str) else None
    if parsed is None:
        return None
    if isinstance(parsed, dt.datetime):
        return parsed.astimezone(dt.timezone.utc).replace(tzinfo=None) if parsed.tzinfo else parsed
    return dt.datetime(parsed.year, parsed.month, parsed.day)


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not (value.strip() if isinstance(value, str) else value))


def _compare_numbers(test: Callable[[float, float], bool]) -> Callable[[Any, Any], bool]:
    def compare(value: Any, wanted: Any) -> bool:
        number = _number(value)
        return number is not None and test(number, float(wanted))
    return compare


def _compare_dates(test: Callable[[dt.datetime, dt.datetime], bool]) -> Callable[[Any, Any], bool]:
    def compare(value: Any, wanted: Any) -> bool:
        date = as_date(value)
        return date is not None and test(date, wanted)
    return compare


@dataclass(frozen=True)
class Operator:
    """A comparison of ``metadata_condition``: what its ``value`` must be (:data:`ValueKind`) and ``test(metadata
    value, value)``, the value already read as its kind (a list of strings, a float, a datetime)."""

    value: ValueKind
    test: Callable[[Any, Any], bool]


OPERATORS: dict[str, Operator] = {
    # strings: a list-valued metadata field (tags) passes when one of its elements does
    "contains": Operator("text", lambda v, w: any(w in t for t in _texts(v))),
    "not contains": Operator("text", lambda v, w: not any(w in t for t in _texts(v))),
    "start with": Operator("text", lambda v, w: any(t.startswith(w) for t in _texts(v))),
    "end with": Operator("text", lambda v, w: any(t.endswith(w) for t in _texts(v))),
    "is": Operator("text", lambda v, w: w in _texts(v)),
    "is not": Operator("text", lambda v, w: w not in _texts(v)),
    "in": Operator("texts", lambda v, w: bool(set(_texts(v)) & set(w))),
    "not in": Operator("texts", lambda v, w: not set(_texts(v)) & set(w)),
    "empty": Operator("none", lambda v, _w: _is_empty(v)),
    "not empty": Operator("none", lambda v, _w: not _is_empty(v)),
    "=": Operator("number", _compare_numbers(lambda a, b: a == b)),
    "≠": Operator("number", _compare_numbers(lambda a, b: a != b)),
    ">": Operator("number", _compare_numbers(lambda a, b: a > b)),
    "<": Operator("number", _compare_numbers(lambda a, b: a < b)),
    "≥": Operator("number", _compare_numbers(lambda a, b: a >= b)),
    "≤": Operator("number", _compare_numbers(lambda a, b: a <= b)),
    "before": Operator("date", _compare_dates(lambda a, b: a < b)),
    "after": Operator("date", _compare_dates(lambda a, b: a > b)),
}
"""The comparison operators of Dify's External Knowledge API, by the name Dify sends. A chunk whose value cannot be
read as the operator's kind (a number operator on text, an undated document under ``before``) does not pass it."""


def operator_value(operator: str, value: Any) -> Any:
    """``value`` read as ``operator``'s kind (a list of strings for ``in``, a float, a datetime); a ``ValueError`` with
    one line for an unknown operator or a value of the wrong type.

    >>> operator_value("in", "hr, 客服"), operator_value("≥", "3"), operator_value("after", "2024-03-01")
    (['hr', '客服'], 3.0, datetime.datetime(2024, 3, 1, 0, 0))
    """
    if operator not in OPERATORS:
        raise ValueError(f"unknown comparison_operator {operator!r} (known: {', '.join(OPERATORS)})")
    kind = OPERATORS[operator].value
    if kind == "none":
        return None
    if kind == "text" and isinstance(value, str):
        return value
    if kind == "texts":
        if isinstance(value, str):  # one string: its comma-separated items (ASCII or full-width commas)
            return [item.strip() for item in value.replace("，", ",").split(",") if item.strip()]
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
    if kind == "number" and (number := _number(value)) is not None and not isinstance(value, list):
        return number
    if kind == "date" and (date := as_date(value)) is not None:
        return date
    wanted = {"text": "a string", "texts": "a list of strings", "number": "a number",
              "date": "a date (ISO 8601 such as 2024-03-01, Chinese such as 2024年3月1日, or Unix seconds)"}[kind]
    raise ValueError(f"comparison_operator {operator!r} needs {wanted} as value, got {value!r}")


@dataclass(frozen=True)
class Condition:
    """One condition: the fields it reads (a chunk field of ``FILTER_FIELDS`` or a document metadata key; it holds
    when it holds on any of them), the operator's name and its value as :func:`operator_value` read it."""

    names: tuple[str, ...]
    operator: str
    value: Any


def condition_mask(chunks: Sequence[Chunk], metadata_of: Callable[[str], Mapping[str, Any]],
                   conditions: Sequence[Condition], logical: Literal["and", "or"] = "and") -> np.ndarray:
    """Per chunk, whether it passes ``conditions``, all of them (``and``) or any (``or``); no condition: every chunk."""
    if not conditions:
        return np.ones(len(chunks), dtype=bool)
    masks = []
    for condition in conditions:
        test = OPERATORS[condition.operator].test
        passing = np.zeros(len(chunks), dtype=bool)
        for name in condition.names:
            passing |= np.array([test(value, condition.value) for value in _column(chunks, metadata_of, name)], dtype=bool)
        masks.append(passing)
    joined: np.ndarray = np.logical_and.reduce(masks) if logical == "and" else np.logical_or.reduce(masks)
    return joined


def first_stage_mask(table: ChunkTable, metadata_of: Callable[[str], Mapping[str, Any]], settings: RetrievalSettings,
                     view: str = "clean", filters: Mapping[str, Any] | None = None,
                     where: np.ndarray | None = None) -> np.ndarray | None:
    """The chunks the first stage searches, for a study's pipeline and the deployed Retriever alike: those of index
    ``view`` (:meth:`ChunkTable.mask`) that pass ``settings``' ``metadata_filter`` and ``filters`` (a request's own),
    each through :func:`filter_mask` over ``metadata_of``, and ``where`` (a request's own mask, e.g.
    :func:`condition_mask`). None means every chunk. A new first-stage mask is added here and reaches both."""
    searched = table.mask(view)
    masks = [filter_mask(table.chunks, metadata_of, wanted) for wanted in (settings.active_filter, filters or {}) if wanted]
    for passing in masks + ([] if where is None else [where]):
        searched = passing if searched is None else searched & passing
    return searched
