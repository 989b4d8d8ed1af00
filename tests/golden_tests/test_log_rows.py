"""``tuner golden from-log``'s reading of a query log (issue 30 §3): columns named like the fields are used without
--map, every count that is not a whole number from 1 to 2^53-1 is one line, and a query that is not text is refused
while a blank one skips its row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.errors import UserError
from tuner.golden import read_log


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def test_columns_named_like_the_fields_are_used_without_a_mapping(tmp_path: Path) -> None:
    log = tmp_path / "log.csv"
    log.write_text("query,count,timestamp,feedback\nWhat is the warranty?,50,2026-01-02,up\n,3,,\n退货运费谁出？,4,2026-01-01,\n"
                   "\u200b\u3000,9,,\n", "utf-8")
    read = read_log(log, {})
    assert read.rows == [("What is the warranty?", 50, "2026-01-02", "up"), ("退货运费谁出？", 4, "2026-01-01", None)]
    assert read.columns == {"query": "query", "count": "count", "timestamp": "timestamp", "feedback": "feedback"}
    assert read.blank == 2  # the empty query and the one of only a zero-width space and U+3000
    question = tmp_path / "q.csv"
    question.write_text("question,hits\nWhat is the warranty?,7\n", "utf-8")
    assert read_log(question, {}).columns == {"query": "question", "count": None, "timestamp": None, "feedback": None}
    assert read_log(question, {"count": "hits"}).rows == [("What is the warranty?", 7, None, None)]


@pytest.mark.parametrize("count", ["3", "3.0", 3, 3.0, " 3 "])
def test_whole_counts_in_any_spelling_are_read(tmp_path: Path, count: object) -> None:
    assert read_log(_jsonl(tmp_path / "log.jsonl", [{"query": "q", "count": count}]), {}).rows[0][1] == 3


@pytest.mark.parametrize("raw,message", [
    ('"inf"', "count must be a whole number, got 'inf'"),
    ('"1e400"', "count must be a whole number, got '1e400'"),
    ("1e400", "count must be a whole number, got 'inf'"),
    ('"10**400"', "count must be a whole number, got '10**400'"),
    ("1" + "0" * 400, "count must be from 1 to 9007199254740991, got 1000000000"),
    ("1.5", "count must be a whole number, got '1.5'"),
    ('"1.5"', "count must be a whole number, got '1.5'"),
    ("true", "count must be a whole number, got 'True'"),
    ("12345678901234567890123456789012345678", "count must be from 1 to 9007199254740991, got 1234567890"),
    ("0", "count must be from 1 to 9007199254740991, got 0"),
])
def test_a_count_that_is_not_a_whole_number_in_range_is_one_line(tmp_path: Path, raw: str, message: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"query": "ok", "count": 2}\n{"query": "q", "count": ' + raw + "}\n", "utf-8")
    with pytest.raises(UserError) as error:
        read_log(log, {})
    assert str(error.value).startswith(f"{log}:2: {message}")


@pytest.mark.parametrize("raw,message", [
    ('{"a": 1}', "the query must be text, got dict {'a': 1}"),
    ('["x", "y"]', "the query must be text, got list ['x', 'y']"),
    ("42", "the query must be text, got int 42"),
    ('"\\ud800 lone"', "the query holds a lone surrogate (U+D800), not text"),
])
def test_a_query_that_is_not_text_is_one_line(tmp_path: Path, raw: str, message: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"query": ' + raw + "}\n", "utf-8")
    with pytest.raises(UserError, match="^") as error:
        read_log(log, {})
    assert str(error.value) == f"{log}:1: {message}"
