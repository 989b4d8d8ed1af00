from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.dataset.importers._table import import_table, table_mapping
from tuner.errors import UserError

RETURNS = "顾客可在收货后30天内退货。"
AURORA = "The Aurora X200 costs $1,299.\nIts battery lasts 14 hours."


def _ctx(text: str) -> str:
    return "ctx-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def _csv(path: Path) -> Path:
    # row 1 spans lines 2-3 (a quoted newline and comma); line 4 is blank; the Chinese row on line 5 has an answer with two aliases
    path.write_text(
        "问题,答案,段落,类别\n"
        f'"How much does the Aurora X200 cost?","$1,299","{AURORA}",price\n'
        "\n"
        f"顾客收货后多少天内可以退货？,30天|三十天,{RETURNS},退货\n",
        "utf-8",
    )
    return path


def test_csv_with_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _csv(tmp_path / "golden.csv")
    assert main(["import", "table", str(source), str(tmp_path / "out"), "--map", "question=问题,answer=答案,contexts=段落,category=类别"]) == 0
    assert "imported table: 2 documents, 2 golden questions" in capsys.readouterr().out
    dataset = load_dataset(tmp_path / "out")
    assert [(d.doc_id, d.text) for d in dataset.corpus] == [(_ctx(AURORA), AURORA), (_ctx(RETURNS), RETURNS)]
    assert [(c.id, c.ground_truth, c.keypoints, c.relevant_doc_ids, c.category) for c in dataset.golden] == [
        ("row-1", "$1,299", (("$1,299",),), (_ctx(AURORA),), "price"),
        ("row-2", "30天", (("30天", "三十天"),), (_ctx(RETURNS),), "退货"),
    ]


def test_csv_bad_row_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _csv(tmp_path / "golden.csv")
    with source.open("a", encoding="utf-8") as handle:
        handle.write(f",42,{RETURNS},退货\n")
    assert main(["import", "table", str(source), str(tmp_path / "out"), "--map", "question=问题,answer=答案,contexts=段落"]) == 2
    assert capsys.readouterr().err.strip() == f"tuner: error: {source}:6: column '问题' (question) is empty"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("tail", "message"),
    [(b"q3,a,b,c,d\n", r"golden.csv:6: 5 cells but the header has 4 columns$"),
     (b'q3,"a\n\xff",b,c\n', r"golden.csv:7: invalid UTF-8$")],
)
def test_csv_malformed(tmp_path: Path, tail: bytes, message: str) -> None:
    source = _csv(tmp_path / "golden.csv")
    source.write_bytes(source.read_bytes() + tail)
    with pytest.raises(UserError, match=message):
        import_table(source, table_mapping(None, None, "question=问题,answer=答案,contexts=段落"))


def test_jsonl_with_yaml_mapping(tmp_path: Path) -> None:
    rows = [
        {"qid": "zh-1", "q": "退货期限是多久？", "facts": [["30天", "三十天"], "收货后"], "passage": RETURNS, "pid": "returns",
         "name": "退货政策", "level": "easy", "wrong": "14天/七天", "ids": None},
        {"qid": "en-1", "q": "Which policy covers returns?", "facts": "returns policy", "passage": None, "pid": "", "ids": "returns/returns",
         "name": None, "level": None, "wrong": None},
    ]
    source = _jsonl(tmp_path / "golden.jsonl", rows)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(
        "columns: {id: qid, question: q, keypoints: facts, contexts: passage, doc_id: pid, title: name, difficulty: level,\n"
        "          wrong_answers: wrong, relevant_doc_ids: nothing}\n"
        "separator: /\n"
    )
    # --map replaces the YAML's column for relevant_doc_ids ('nothing' is no column of the rows)
    result = import_table(source, table_mapping(None, mapping, "relevant_doc_ids=ids"))
    assert result.corpus == [{"doc_id": "returns", "title": "退货政策", "text": RETURNS}]
    assert result.golden == [
        {"id": "zh-1", "question": "退货期限是多久？", "ground_truth": "30天; 收货后", "keypoints": [["30天", "三十天"], ["收货后"]],
         "relevant_doc_ids": ["returns"], "difficulty": "easy", "wrong_answers": ["14天", "七天"]},
        {"id": "en-1", "question": "Which policy covers returns?", "ground_truth": "returns policy", "keypoints": [["returns policy"]],
         "relevant_doc_ids": ["returns"]},
    ]
    with pytest.raises(UserError, match=r"golden.jsonl:1: no column 'nothing' \(columns: qid, q, facts, passage, pid, name, level, wrong, ids\)"):
        import_table(source, table_mapping(None, mapping))
    rows[1]["passage"] = "Other text."
    rows[1]["pid"] = "returns"
    with pytest.raises(UserError, match=r"golden.jsonl:2: document id 'returns' already names another text \(first at .*golden.jsonl:1\)"):
        import_table(_jsonl(source, rows), table_mapping(None, mapping, "relevant_doc_ids=ids"))


def _ragas_rows() -> list[dict[str, Any]]:
    return [
        {"user_input": "What does the Aurora X200 cost?", "reference": "The Aurora X200 costs $1,299.",
         "reference_contexts": [AURORA], "synthesizer_name": "single_hop_specific_query_synthesizer"},
        {"user_input": "退货期限是多久，X200 多少钱？", "reference": "30天内可退货；X200 售价 $1,299。",
         "reference_contexts": [RETURNS, AURORA], "synthesizer_name": "multi_hop_abstract_query_synthesizer"},
        {"user_input": "Unanswered?", "reference": " ", "reference_contexts": [RETURNS], "synthesizer_name": "x"},
    ]


def _check_ragas(result_dir: Path, out: str) -> None:
    assert "1 rows with an empty 'reference' were skipped" in out
    assert "no keypoints: the dataset supports retrieval-only studies" in out
    dataset = load_dataset(result_dir)
    assert [d.doc_id for d in dataset.corpus] == [_ctx(AURORA), _ctx(RETURNS)]
    assert [(c.id, c.ground_truth, c.keypoints, c.relevant_doc_ids) for c in dataset.golden] == [
        ("row-1", "The Aurora X200 costs $1,299.", (), (_ctx(AURORA),)),
        ("row-2", "30天内可退货；X200 售价 $1,299。", (), (_ctx(RETURNS), _ctx(AURORA))),
    ]


def test_ragas_testset_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _jsonl(tmp_path / "testset.jsonl", _ragas_rows())
    assert main(["import", "table", str(source), str(tmp_path / "out"), "--preset", "ragas", "--map", "category=synthesizer_name"]) == 0
    _check_ragas(tmp_path / "out", capsys.readouterr().out)
    assert {c.category for c in load_dataset(tmp_path / "out").golden} == {
        "single_hop_specific_query_synthesizer", "multi_hop_abstract_query_synthesizer"}


def test_ragas_testset_csv_from_pandas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ragas's ``to_pandas().to_csv()`` writes list cells as Python literals; a YAML file names the preset."""
    rows = _ragas_rows()
    lines = ["user_input,reference,reference_contexts"] + [
        ",".join('"' + str(v).replace('"', '""') + '"' for v in (r["user_input"], r["reference"], r["reference_contexts"])) for r in rows]
    source = tmp_path / "testset.csv"
    source.write_text("\n".join(lines) + "\n", "utf-8")
    (tmp_path / "map.yaml").write_text("preset: ragas\n")
    assert main(["import", "table", str(source), str(tmp_path / "out"), "--mapping", str(tmp_path / "map.yaml")]) == 0
    _check_ragas(tmp_path / "out", capsys.readouterr().out)


def test_corpus_file_and_unknown_relevant_document(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "docs.jsonl", [{"doc_id": "returns", "text": RETURNS, "title": "退货"}, {"doc_id": "x200", "text": AURORA}])
    source = tmp_path / "golden.tsv"
    source.write_text("id\tquestion\tanswer\tdocs\nq1\t退货期限？\t30天\treturns\nq2\tBattery life?\t14 hours\tx200;returns\n", "utf-8")
    mapping = table_mapping(None, None, "id=id,question=question,answer=answer,relevant_doc_ids=docs")
    result = import_table(source, mapping, corpus)
    assert [c["relevant_doc_ids"] for c in result.golden] == [["returns"], ["x200", "returns"]]
    assert [d["title"] for d in result.corpus] == ["退货", ""]
    with pytest.raises(UserError, match=r"golden.tsv:3: relevant document 'x200' is not in the corpus"):
        import_table(source, mapping, _jsonl(corpus, [{"doc_id": "returns", "text": RETURNS}]))
    with pytest.raises(UserError, match=r"golden.tsv:2: relevant document 'returns' is not in the corpus"):
        import_table(source, mapping)


@pytest.mark.parametrize(
    ("preset", "yaml_text", "columns", "message"),
    [
        (None, None, "question=q,answr=a,contexts=c", r"^--map: unknown field 'answr' \(fields: question, id, answer"),
        (None, None, "question=q,answer=a", r"^--map: columns: map 'contexts' or 'relevant_doc_ids'"),
        (None, None, "question=q,contexts", r"^--map: expected FIELD=COLUMN entries separated by commas, got 'contexts'$"),
        ("nope", None, None, r"^--map: unknown preset 'nope' \(known: ragas, squad\)$"),
        (None, None, None, r"^table import: give a mapping with --map, --mapping or --preset$"),
        (None, "columns: {question: q, contexts: c}\nseparator: [1]\n", None, r"map.yaml: separator: Input should be a valid string$"),
    ],
)
def test_mapping_errors(tmp_path: Path, preset: str | None, yaml_text: str | None, columns: str | None, message: str) -> None:
    mapping = None
    if yaml_text is not None:
        mapping = tmp_path / "map.yaml"
        mapping.write_text(yaml_text)
    with pytest.raises(UserError, match=message):
        table_mapping(preset, mapping, columns)


def test_unknown_extension(tmp_path: Path) -> None:
    (tmp_path / "golden.xlsx").write_text("x")
    with pytest.raises(UserError, match=r"golden.xlsx: unknown table format \(expected .csv, .tsv, .jsonl, .parquet or a save_to_disk folder\)"):
        import_table(tmp_path / "golden.xlsx", table_mapping("ragas"))


def test_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    rows = _ragas_rows()
    parquet.write_table(pa.Table.from_pylist(rows), tmp_path / "testset.parquet")
    assert main(["import", "table", str(tmp_path / "testset.parquet"), str(tmp_path / "out"), "--preset", "ragas"]) == 0
    _check_ragas(tmp_path / "out", capsys.readouterr().out)
    rows[1]["user_input"] = ""
    parquet.write_table(pa.Table.from_pylist(rows), tmp_path / "bad.parquet")
    with pytest.raises(UserError, match=r"bad.parquet: row 2: column 'user_input' \(question\) is empty$"):
        import_table(tmp_path / "bad.parquet", table_mapping("ragas"))


def test_saved_huggingface_dataset(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    squad = [
        {"id": "zh-1", "title": "退货政策", "context": RETURNS, "question": "退货期限是多久？",
         "answers": {"text": ["30天", "30天"], "answer_start": [7, 7]}},
        {"id": "en-1", "title": "Aurora", "context": AURORA, "question": "What does it cost?",
         "answers": {"text": ["$1,299", "1,299"], "answer_start": [22, 23]}},
    ]
    split = datasets.Dataset.from_list(squad)
    split.save_to_disk(str(tmp_path / "one"))
    datasets.DatasetDict({"train": split, "validation": split.select([1])}).save_to_disk(str(tmp_path / "two"))
    result = import_table(tmp_path / "one", table_mapping("squad"))
    assert [(d["doc_id"], d["title"]) for d in result.corpus] == [(_ctx(RETURNS), "退货政策"), (_ctx(AURORA), "Aurora")]
    assert [(c["id"], c["ground_truth"], c["keypoints"]) for c in result.golden] == [
        ("zh-1", "30天", [["30天"]]), ("en-1", "$1,299", [["$1,299", "1,299"]])]
    assert [c["id"] for c in import_table(tmp_path / "two", table_mapping("squad"), split="validation").golden] == ["en-1"]
    with pytest.raises(UserError, match=r"two: pick one of the splits train, validation with --split$"):
        import_table(tmp_path / "two", table_mapping("squad"))


def test_date_family_and_status_columns_become_the_context_documents_metadata(tmp_path: Path) -> None:
    source = tmp_path / "kb.csv"
    source.write_text("q,a,ctx,published,doc,state\n"
                      "How long is the warranty?,2 years,All laptops carry a 2-year warranty.,2024年3月1日,warranty,current\n"
                      "How long was the warranty?,1 year,All laptops carry a 1-year warranty.,2022-01-05,warranty,\n", "utf-8")
    mapping = table_mapping(columns="question=q,answer=a,contexts=ctx,date=published,family=doc,status=state")
    result = import_table(source, mapping)
    assert [doc["metadata"] for doc in result.corpus] == [
        {"date": "2024-03-01", "family": "warranty", "status": "current"}, {"date": "2022-01-05", "family": "warranty"}]
    corpus = tmp_path / "corpus.csv"
    corpus.write_text("doc_id,text,date\nw,All laptops carry a 2-year warranty.,2024-03-01\n", "utf-8")
    (tmp_path / "q.csv").write_text("q,a,rel\nHow long?,2 years,w\n", "utf-8")
    named = import_table(tmp_path / "q.csv", table_mapping(columns="question=q,answer=a,relevant_doc_ids=rel"), corpus)
    assert named.corpus[0]["metadata"] == {"date": "2024-03-01"}


def test_a_bad_date_is_one_line_naming_the_row_and_nothing_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "kb.csv"
    source.write_text("q,a,ctx,published\nX?,y,some text,2024-02-30\n", "utf-8")
    assert main(["import", "table", str(source), str(tmp_path / "out"), "--map", "question=q,answer=a,contexts=ctx,date=published"]) == 2
    assert capsys.readouterr().err.strip() == (f"tuner: error: {source}:2: column 'published' (date): '2024-02-30' is not a date "
                                               "(ISO 8601 such as 2024-03-01, or 2024年3月1日)")
    assert not (tmp_path / "out").exists()
