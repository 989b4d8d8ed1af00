"""Each validation error of load_dataset / ``tuner validate``: exit 2 and one ``file:line: what`` line per problem."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.dataset import CONFLICTS, CORPUS, GOLDEN, UNKNOWN_ORIGIN, load_dataset
from tuner.errors import DatasetError

DOCS = [{"doc_id": "d1", "text": "The Aurora A14 costs $1,299."}, {"doc_id": "d2", "text": "Returns within 30 days."}]
CASES = [{"id": "q1", "question": "Price of the A14?", "ground_truth": "$1,299", "keypoints": [["$1,299", "1299 USD"]], "relevant_doc_ids": ["d1"]}]
STALE = [{"doc_id": "d1-old", "text": "The Aurora A14 costs $1,199.", "conflicts_with": "d1", "wrong_values": ["$1,199"]}]


def _lines(records: list[Any]) -> bytes:
    return b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records)


def _write(folder: Path, corpus: list[Any] = DOCS, golden: list[Any] = CASES, conflicts: list[Any] = STALE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CORPUS).write_bytes(_lines(corpus))
    (folder / GOLDEN).write_bytes(_lines(golden))
    (folder / CONFLICTS).write_bytes(_lines(conflicts))
    return folder


def _problems(folder: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["validate", str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert lines[-1].startswith("tuner: ") and "problem(s)" in lines[-1]
    return lines[:-1]


def _expect_one(folder: Path, capsys: pytest.CaptureFixture[str], file: str, line: int, what: str) -> None:
    problems = _problems(folder, capsys)
    assert problems == [problems[0]], problems
    assert problems[0].startswith(f"{folder / file}:{line}: "), problems[0]
    assert what in problems[0]


def test_valid_dataset_prints_its_summary_and_version_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _write(tmp_path / "ok")
    assert main(["validate", str(folder)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [
        f"{folder}: ok: 2 documents, 1 golden questions, 1 conflicting documents, 1 keypoints, categories: uncategorized; "
        "language en (detected: 0% of letters are CJK, zh from 20%; dataset.yaml can declare it)",
        f"{folder}: version metadata: 0 of 3 documents (corpus and conflicting) have a family, 0 a date; "
        "0 families have more than one version",
        f"{folder}: {UNKNOWN_ORIGIN}",
    ]
    assert load_dataset(folder).golden[0].keypoints == (("$1,299", "1299 USD"),)


def test_malformed_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, corpus=[DOCS[0], b'{"doc_id": "d2", "text": ']), capsys, CORPUS, 2, "malformed JSON")


def test_not_an_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, golden=[["q1"]]), capsys, GOLDEN, 1, "expected a JSON object")


def test_missing_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = {k: v for k, v in CASES[0].items() if k != "ground_truth"}
    _expect_one(_write(tmp_path, golden=[case]), capsys, GOLDEN, 1, "missing field 'ground_truth'")


def test_empty_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, corpus=[DOCS[0], {"doc_id": "d2", "text": "  "}]), capsys, CORPUS, 2, "field 'text' is empty")


def test_empty_relevant_doc_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, golden=[{**CASES[0], "relevant_doc_ids": []}]), capsys, GOLDEN, 1, "'relevant_doc_ids' is empty")


def test_wrong_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, corpus=[DOCS[0], {"doc_id": "d2", "text": 7}]), capsys, CORPUS, 2, "field 'text' must be a string, got int")


def test_unknown_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, golden=[{**CASES[0], "answer": "x"}]), capsys, GOLDEN, 1, "unknown field 'answer'")


@pytest.mark.parametrize(
    ("file", "records", "what"),
    [
        (CORPUS, {"corpus": DOCS + [DOCS[0]]}, "duplicate doc_id 'd1'"),
        (GOLDEN, {"golden": CASES + CASES}, "duplicate id 'q1'"),
        (CONFLICTS, {"conflicts": STALE + STALE}, "duplicate doc_id 'd1-old'"),
    ],
)
def test_duplicate_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, records: dict[str, Any], what: str) -> None:
    line = len(DOCS) + 1 if file == CORPUS else 2
    problems = _problems(_write(tmp_path, **records), capsys)
    assert problems == [f"{tmp_path / file}:{line}: {what} (first at {tmp_path / file}:1)"]


def test_conflict_reusing_a_corpus_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, conflicts=[{**STALE[0], "doc_id": "d2"}]), capsys, CONFLICTS, 1, "also a corpus document")


def test_relevant_doc_ids_name_unknown_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, golden=[{**CASES[0], "relevant_doc_ids": ["d1", "nope"]}]), capsys, GOLDEN, 1, "unknown documents: nope")


def test_conflicts_with_names_unknown_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, conflicts=[{**STALE[0], "conflicts_with": "ghost"}]), capsys, CONFLICTS, 1, "unknown document 'ghost'")


def test_invalid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, corpus=[DOCS[0], b'{"doc_id": "d2", "text": "caf\xe9"}']), capsys, CORPUS, 2, "invalid UTF-8 at byte")


@pytest.mark.parametrize("keypoints", [[""], [[]], [3], [["$1,299", 5]]])
def test_bad_keypoint_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str], keypoints: list[Any]) -> None:
    _expect_one(_write(tmp_path, golden=[{**CASES[0], "keypoints": keypoints}]), capsys, GOLDEN, 1, "keypoints[0] must be")


def test_bad_wrong_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_one(_write(tmp_path, golden=[{**CASES[0], "wrong_answers": [""]}]), capsys, GOLDEN, 1, "'wrong_answers' must be a list of non-empty strings")


def test_missing_files_and_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "half"
    folder.mkdir()
    (folder / CORPUS).write_bytes(_lines(DOCS))
    problems = _problems(folder, capsys)
    assert problems == [f"{folder / GOLDEN}: missing (a dataset folder needs corpus.jsonl and golden.jsonl)"]
    assert main(["validate", str(tmp_path / "absent")]) == 2
    assert capsys.readouterr().err.strip() == f"tuner: error: {tmp_path / 'absent'}: dataset folder not found"


def test_every_problem_is_reported(tmp_path: Path) -> None:
    folder = _write(tmp_path, corpus=[DOCS[0], b"{", DOCS[0]], golden=[{**CASES[0], "relevant_doc_ids": ["zz"]}], conflicts=[{**STALE[0], "conflicts_with": "zz"}])
    with pytest.raises(DatasetError) as info:
        load_dataset(folder)
    assert [p.split(": ")[0] for p in info.value.problems] == [
        f"{folder / CORPUS}:2", f"{folder / CORPUS}:3", f"{folder / GOLDEN}:1", f"{folder / CONFLICTS}:1"
    ]


def test_validate_subprocess(tmp_path: Path) -> None:
    tuner = Path(sys.executable).parent / "tuner"  # the console script of the interpreter running the tests
    good = _write(tmp_path / "good")
    bad = _write(tmp_path / "bad", golden=[{**CASES[0], "keypoints": [[]]}])
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    ok = subprocess.run([tuner, "validate", str(good)], capture_output=True, text=True, env=env, timeout=60)
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ok.stdout.startswith(f"{good}: ok: 2 documents")
    failed = subprocess.run([tuner, "validate", str(bad)], capture_output=True, text=True, env=env, timeout=60)
    assert failed.returncode == 2 and failed.stdout == ""
    assert failed.stderr.splitlines()[0].startswith(f"{bad / GOLDEN}:1: keypoints[0] must be")
    assert "Traceback" not in failed.stderr
