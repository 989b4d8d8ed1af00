"""One JSON Lines rule for every file tuner reads and writes (issue 38): lines end at "\\n" only, so U+2028, U+2029 and
U+0085 inside a string are text (``str.splitlines()`` cut there), written as ``\\u`` escapes so other tools' readers
stay whole too; and a hostile line (nesting past the parser's recursion, an integer past Python's digit limit) is one
``file:line`` error, exit 2, not an internal error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.golden_tests.drafts import write_case_draft
from tests.tiny_dataset import CORPUS
from tuner.cli import main
from tuner.golden import read_draft
from tuner.io import MalformedLine, jsonl_text, line_safe_json, parse_jsonl_line, write_jsonl

BREAKS = "\u2028\u2029\x85"


def test_line_safe_json_escapes_the_three_line_breaks_and_keeps_chinese() -> None:
    text = line_safe_json({"a": f"保修{BREAKS}两年"})
    assert text == '{"a": "保修\\u2028\\u2029\\u0085两年"}'
    assert json.loads(text) == {"a": f"保修{BREAKS}两年"}
    assert jsonl_text([{"a": "\u2028"}, {"b": 1}]).splitlines() == ['{"a": "\\u2028"}', '{"b": 1}']


@pytest.mark.parametrize("line, problem", [
    (b"[" * 200_000, "malformed JSON: nested too deeply"),
    (b'{"version": ' + b"7" * 5000 + b"}", "malformed JSON: a number too long (Exceeds the limit (4300 digits) for integer string conversion)"),
    (b'{"a": "\xff"}', "invalid UTF-8 at byte 7"),
    (b'{"a": ', "malformed JSON: Expecting value (column 7)"),
])
def test_a_hostile_line_is_malformed_not_a_crash(line: bytes, problem: str) -> None:
    with pytest.raises(MalformedLine) as caught:
        parse_jsonl_line(line)
    assert str(caught.value) == problem


def test_import_validate_eval_with_a_line_separator_in_a_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the repro: a document pasted from a PDF (U+2028) imports and validates, and eval used to exit 3
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "w.txt").write_bytes("Warranty\u2028is 24 months.\n".encode())
    (docs / "n.txt").write_bytes("Shipping\u2029is free\x85over $50.\n".encode())
    kb = tmp_path / "kb"
    assert main(["import", "files", str(docs), str(kb)]) == 0
    write_jsonl(kb / "golden.jsonl", [{"id": "q1", "question": "How long is the warranty?", "ground_truth": "24 months",
                                       "keypoints": ["24 months"], "relevant_doc_ids": ["w.txt"]}])
    assert main(["validate", str(kb)]) == 0
    capsys.readouterr()
    assert main(["eval", str(kb), "--retriever", "bm25", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["recall_at_k"] == 1.0
    assert not any(ch in (kb / "corpus.jsonl").read_text("utf-8") for ch in BREAKS)


def test_a_draft_with_raw_line_separators_reads_whole(kb: Path, tmp_path: Path) -> None:
    (tmp_path / "drafts").mkdir()
    path = write_case_draft(kb, tmp_path / "drafts")
    rows = [json.loads(line) for line in path.read_text("utf-8").split("\n") if line]
    rows[0]["ground_truth"] = "It costs\u2028$1,299."
    # another tool wrote it raw (legal JSON): tuner reads it whole
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    assert read_draft(path)[0]["ground_truth"] == "It costs\u2028$1,299."


def test_from_log_with_a_line_separator_writes_a_draft_that_reads(kb_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(jsonl_text([{"query": "How long is the laptop\u2028warranty?", "count": 3},
                               {"query": "退货\u2029运费谁出？", "count": 1}]), "utf-8")
    out = tmp_path / "out"
    assert main(["golden", "from-log", str(log), str(out), "--dataset", str(kb_dir), "--pool", "bm25", "--n", "2"]) == 0
    text = (out / "review.jsonl").read_text("utf-8")
    assert not any(ch in text for ch in BREAKS)
    assert {row["question"] for row in read_draft(out / "review.jsonl")} == {"How long is the laptop\u2028warranty?", "退货\u2029运费谁出？"}


def test_hostile_draft_lines_are_one_line_naming_file_and_line(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "drafts").mkdir()
    draft = write_case_draft(kb, tmp_path / "drafts")
    good = draft.read_text("utf-8")
    for bad, problem in (("[" * 200_000, "nested too deeply"), ('{"version": ' + "9" * 5000 + "}", "a number too long")):
        draft.write_text(good + bad + "\n", "utf-8")
        assert main(["golden", "review", str(draft), "--dataset", str(kb), "--port", "1"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"tuner: error: {draft}:4: malformed JSON: {problem}"), err


def test_a_from_log_count_of_5000_digits_is_one_line(kb_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"query": "How long is the warranty?", "count": 1}\n{"query": "Price?", "count": ' + "9" * 5000 + "}\n", "utf-8")
    assert main(["golden", "from-log", str(log), str(tmp_path / "out"), "--dataset", str(kb_dir), "--pool", "bm25"]) == 2
    assert capsys.readouterr().err.strip().startswith(f"tuner: error: {log}:2: malformed JSON: a number too long")
    assert not (tmp_path / "out").exists()


def test_the_tiny_corpus_is_unchanged_by_the_rule() -> None:
    # no line-break character in ordinary text: the rule writes what json.dumps(ensure_ascii=False) writes
    rows = [{"doc_id": d, "title": t, "text": x} for d, t, x in CORPUS]
    assert jsonl_text(rows) == "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
