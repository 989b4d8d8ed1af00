from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.dataset.importers import import_beir
from tuner.dataset.importers._importing import NO_REFERENCE
from tuner.dataset.importers._conflictnq import import_conflictnq
from tuner.errors import UserError



def shared_dataset(relative: str) -> Path:
    """A file of the read-only shared/ folder, which lies beside the repository or a folder above a worktree
    of it (never copied into it); the first candidate when the file is nowhere."""
    candidates = [folder / "shared" / "datasets" / relative for folder in Path(__file__).resolve().parents[3:]]
    return next((path for path in candidates if path.is_file()), candidates[0])


CONFLICTNQ = shared_dataset("conflictnq/conflict_nq_val.jsonl")


def _beir(root: Path, qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\td3\t0\nq3\td3\t1\n") -> Path:
    (root / "qrels").mkdir(parents=True)
    docs = [{"_id": "d1", "title": "Aurora", "text": "The Aurora costs $1,299."}, {"_id": "d2", "title": "Returns", "text": "Returns within 30 days."},
            {"_id": "d3", "title": "Shipping", "text": "Express shipping costs $15."}]
    queries = [{"_id": "q1", "text": "aurora price and returns"}, {"_id": "q2", "text": "shipping"}, {"_id": "q3", "text": "express cost"}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (root / "qrels" / "test.tsv").write_text(qrels)
    return root


def test_beir_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _beir(tmp_path / "beir")
    assert main(["import", "beir", str(source), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "1 queries without relevant documents in qrels/test.tsv were skipped" in out
    assert "supports retrieval-only studies" in out
    dataset = load_dataset(tmp_path / "out")
    assert dataset.retrieval_only
    assert [(c.id, c.relevant_doc_ids, c.ground_truth) for c in dataset.golden] == [
        ("q1", ("d1", "d2"), NO_REFERENCE), ("q3", ("d3",), NO_REFERENCE)
    ]
    assert [d.title for d in dataset.corpus] == ["Aurora", "Returns", "Shipping"]
    assert main(["import", "beir", str(source), str(tmp_path / "out")]) == 2
    assert "--force" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("qrels", "message"),
    [("query-id\tcorpus-id\tscore\nq1\td1\n", "test.tsv:2: expected 3 tab-separated columns"),
     ("q1\td1\thigh\n", "test.tsv:1: score 'high' is not a number")],
)
def test_beir_malformed_qrels(tmp_path: Path, qrels: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        import_beir(_beir(tmp_path / "beir", qrels))


def test_beir_malformed_jsonl_and_missing_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _beir(tmp_path / "beir")
    with (source / "queries.jsonl").open("a") as handle:
        handle.write('{"_id": "q9"\n')
    with pytest.raises(UserError, match=r"queries.jsonl:4: malformed JSON"):
        import_beir(source)
    assert main(["import", "beir", str(source), str(tmp_path / "out"), "--split", "dev"]) == 2
    assert "dev.tsv: not found" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_conflictnq_malformed(tmp_path: Path) -> None:
    path = tmp_path / "nq.jsonl"
    path.write_text(json.dumps({"id": "1", "question": "q", "real_passages": "a passage"}) + "\n")
    with pytest.raises(UserError, match=r"nq.jsonl:1: 'real_passages' must be a list of objects"):
        import_conflictnq(path)


def _nq(record_id: str, **changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "id": record_id, "question": f"when did event {record_id} happen", "cleaned_question": None,
        "real_answer": f"Event {record_id} happened in 1990.", "real_short_answer": "1990",
        "real_passages": [{"passage": f"Event {record_id} happened in 1990 in Paris.", "summary": None}],
        "fake_short_answer": "1875", "fake_passages": [{"passage": f"Event {record_id} happened in 1875.", "summary": "Fake"}],
    }
    return {**record, **changes}


def test_conflictnq_null_fields_never_become_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [
        _nq("1"),
        _nq("2", question=None),
        _nq("3", real_short_answer=None),
        _nq("4", real_answer=None, fake_short_answer=None, fake_passages=None),
        _nq("5", real_passages=None),
        {key: value for key, value in _nq("6").items() if key != "id"},
    ]
    source = tmp_path / "nq.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    assert main(["import", "conflictnq", str(source), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    for line, key in ((2, "question"), (3, "real_short_answer"), (5, "real_passages"), (6, "id")):
        assert f"nq.jsonl:{line}: skipped: no value for '{key}'" in out
    written = "".join(path.read_text("utf-8") for path in (tmp_path / "out").glob("*.jsonl"))
    assert "None" not in written and "null" not in written
    dataset = load_dataset(tmp_path / "out")
    assert [c.id for c in dataset.golden] == ["1", "4"]
    first, fourth = dataset.golden
    assert first.wrong_answers == ("1875",)
    # a null long answer falls back to the short one; a null fake answer leaves no wrong answer and no conflict
    assert (fourth.ground_truth, fourth.wrong_answers) == ("1990", ())
    assert [c.conflicts_with for c in dataset.conflicts] == [first.relevant_doc_ids[0]]
    assert [d.title for d in dataset.corpus] == ["", ""]


def test_beir_null_ids_and_texts_are_skipped_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _beir(tmp_path / "beir")
    with (source / "corpus.jsonl").open("a") as handle:
        handle.write(json.dumps({"_id": None, "title": None, "text": "An orphan passage."}) + "\n")
        handle.write(json.dumps({"_id": "d4", "title": None, "text": None}) + "\n")
    with (source / "queries.jsonl").open("a") as handle:
        handle.write(json.dumps({"_id": "q3b", "text": None}) + "\n")
    assert main(["import", "beir", str(source), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "corpus.jsonl:4: skipped: no value for '_id'" in out
    assert "queries.jsonl:4: skipped: no value for 'text'" in out
    assert "1 documents with empty text and title were skipped" in out
    written = "".join(path.read_text("utf-8") for path in (tmp_path / "out").glob("*.jsonl"))
    assert "None" not in written
    assert [d.doc_id for d in load_dataset(tmp_path / "out").corpus] == ["d1", "d2", "d3"]


@pytest.mark.skipif(not CONFLICTNQ.is_file(), reason=f"ConflictNQ not available at {CONFLICTNQ} (outside data, never in the repo)")
def test_conflictnq_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "conflictnq", str(CONFLICTNQ), str(tmp_path / "nq")]) == 0
    assert "short answers occur verbatim" in capsys.readouterr().out
    dataset = load_dataset(tmp_path / "nq")
    records = [json.loads(line) for line in CONFLICTNQ.read_text("utf-8").splitlines() if line.strip()]
    assert len(dataset.golden) == len(records)
    first, case = records[0], dataset.golden[0]
    assert case.keypoints[0][0] == first["real_short_answer"]
    assert case.wrong_answers == (first["fake_short_answer"],)
    texts = {d.doc_id: d.text for d in dataset.corpus}
    assert texts[case.relevant_doc_ids[0]] == first["real_passages"][0]["passage"].strip()
    mine = [c for c in dataset.conflicts if c.conflicts_with == case.relevant_doc_ids[0]]
    assert {c.text for c in mine} >= {p["passage"].strip() for p in first["fake_passages"]}
    assert {c.kind for c in dataset.conflicts} == {"fabricated"}
    assert len(texts) == len(set(texts.values()))
