"""Issue 24 §5: import and dataset messages name the input a user gave, and a UTF-8 BOM is accepted everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset

BOM = "\ufeff"


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(("name", "content", "kind"), [
    ("empty_rows.csv", "question,answer,context\n", "table"),
    ("empty.jsonl", "", "conflictnq"),
])
def test_nothing_to_import_names_the_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                                content: str, kind: str) -> None:
    source = tmp_path / name
    source.write_text(content, "utf-8")
    extra = ["--map", "question=question,answer=answer,contexts=context"] if kind == "table" else []
    assert main(["import", kind, str(source), str(tmp_path / "out"), *extra]) == 2
    line = _error(capsys)
    assert f"{source}: no documents to import" in line and ".out" not in line.replace(str(tmp_path / "out"), "")
    assert not (tmp_path / "out").exists()


def test_short_csv_row_and_unknown_map_field_say_what_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "short.csv"
    source.write_text("question,answer,context\nHow long is the warranty?,two years\n", "utf-8")
    assert main(["import", "table", str(source), str(tmp_path / "out"), "--map", "question=question,answer=answer,contexts=context"]) == 2
    assert "short.csv:2: 2 cells but the header has 3 columns" in _error(capsys)
    assert main(["import", "table", str(source), str(tmp_path / "out"), "--map", "bogus=question,contexts=context"]) == 2
    assert "--map: unknown field 'bogus' (fields: question, id" in _error(capsys)


def test_a_utf8_bom_is_accepted_by_the_loader_and_every_importer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "bom"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(BOM + json.dumps({"doc_id": "d1", "text": "保修期为两年。"}, ensure_ascii=False) + "\n", "utf-8")
    (folder / "golden.jsonl").write_text(BOM + json.dumps(
        {"id": "q1", "question": "保修期多长？", "ground_truth": "两年", "keypoints": ["两年"], "relevant_doc_ids": ["d1"]},
        ensure_ascii=False) + "\n", "utf-8")
    assert main(["validate", str(folder)]) == 0
    assert [d.doc_id for d in load_dataset(folder).corpus] == ["d1"]
    nq = tmp_path / "nq.jsonl"
    nq.write_text(BOM + json.dumps({
        "id": "1", "question": "when was it built", "real_answer": "It was built in 1990.", "real_short_answer": "1990",
        "real_passages": [{"passage": "It was built in 1990."}], "fake_short_answer": "1875", "fake_passages": [],
    }) + "\n", "utf-8")
    assert main(["import", "conflictnq", str(nq), str(tmp_path / "nq")]) == 0
    table = tmp_path / "bom.csv"
    table.write_text(BOM + "question,answer,context\n保修期多长？,两年,保修期为两年。\n", "utf-8")
    assert main(["import", "table", str(table), str(tmp_path / "table"), "--map", "question=question,answer=answer,contexts=context"]) == 0
    capsys.readouterr()
