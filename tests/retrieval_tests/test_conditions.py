"""Dify's metadata_condition operators over chunk fields and document metadata (tuner.retrieval.condition_mask)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tuner.chunking import Chunk
from tuner.retrieval import OPERATORS, Condition, condition_mask, operator_value

METADATA: dict[str, dict[str, Any]] = {
    "a": {"team": "客服部", "date": "2024-03-01", "price": 10, "tags": ["退货", "warranty"]},
    "b": {"team": "hr", "date": "2023年12月31日", "price": "25.5"},
    "c": {"team": "", "price": "n/a", "tags": []},
}
CHUNKS = [Chunk(f"{d}#0", d, 0, 1, "x", title=f"Title {d}") for d in ("a", "b", "c")]


def passing(operator: str, value: Any, name: str = "team", logical: str = "and") -> list[str]:
    condition = Condition((name,), operator, operator_value(operator, value))
    mask = condition_mask(CHUNKS, lambda doc_id: METADATA[doc_id], [condition], logical)  # type: ignore[arg-type]
    return [chunk.doc_id for chunk, keep in zip(CHUNKS, mask) if keep]


@pytest.mark.parametrize("operator,value,name,expected", [
    ("contains", "客服", "team", ["a"]),
    ("not contains", "客服", "team", ["b", "c"]),
    ("start with", "h", "team", ["b"]),
    ("end with", "部", "team", ["a"]),
    ("is", "hr", "team", ["b"]),
    ("is not", "hr", "team", ["a", "c"]),
    ("in", ["hr", "客服部"], "team", ["a", "b"]),
    ("in", "hr，客服部", "team", ["a", "b"]),  # one string: its comma-separated items, full-width commas too
    ("not in", ["hr"], "team", ["a", "c"]),
    ("contains", "退", "tags", ["a"]),  # a list-valued field passes when one element does
    ("empty", None, "team", ["c"]),
    ("empty", None, "tags", ["b", "c"]),  # absent and [] are both empty
    ("not empty", None, "team", ["a", "b"]),
    ("=", 10, "price", ["a"]),
    ("≠", 10, "price", ["b"]),  # "n/a" is no number: it passes no number operator
    (">", "20", "price", ["b"]),
    ("<", 20, "price", ["a"]),
    ("≥", 25.5, "price", ["b"]),
    ("≤", 25.5, "price", ["a", "b"]),
    ("before", "2024-01-01", "date", ["b"]),
    ("after", "2024年1月1日", "date", ["a"]),
    ("after", 1704067200, "date", ["a"]),  # Unix seconds, Dify's time metadata (2024-01-01T00:00:00Z)
    ("is", "Title b", "title", ["b"]),  # chunk fields read as filters read them
])
def test_every_operator_of_the_contract(operator: str, value: Any, name: str, expected: list[str]) -> None:
    assert passing(operator, value, name) == expected


def test_the_contract_lists_exactly_these_operators() -> None:
    assert set(OPERATORS) == {"contains", "not contains", "start with", "end with", "is", "is not", "in", "not in", "empty",
                              "not empty", "=", "≠", ">", "<", "≥", "≤", "before", "after"}


def test_conditions_join_with_and_or_or() -> None:
    team = Condition(("team",), "is", "hr")
    cheap = Condition(("price",), "<", 20.0)
    both = condition_mask(CHUNKS, lambda d: METADATA[d], [team, cheap], "and")
    either = condition_mask(CHUNKS, lambda d: METADATA[d], [team, cheap], "or")
    assert both.tolist() == [False, False, False] and either.tolist() == [True, True, False]
    assert condition_mask(CHUNKS, lambda d: METADATA[d], [], "and").all()


@pytest.mark.parametrize("operator,value,message", [
    ("like", "x", "unknown comparison_operator 'like'"),
    ("contains", 3, "needs a string"),
    (">", "abc", "needs a number"),
    ("=", [1], "needs a number"),
    ("in", [1, 2], "needs a list of strings"),
    ("before", "yesterday", "needs a date"),
])
def test_an_unknown_operator_or_a_value_of_the_wrong_type_is_one_line(operator: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        operator_value(operator, value)
    assert "\n" not in str(info.value)


def test_dates_compare_as_utc() -> None:
    assert operator_value("after", "2024-03-01T08:00:00+08:00") == dt.datetime(2024, 3, 1, 0, 0)
