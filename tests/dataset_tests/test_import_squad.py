from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.dataset_tests.test_import import shared_dataset
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.dataset.importers._squad import import_squad
from tuner.errors import UserError

CMRC = shared_dataset("cmrc2018/cmrc2018_trial.json")
AURORA = "The Aurora X200 costs $1,299. Its battery lasts 14 hours."
RETURNS = "顾客可在收货后30天内退货。退货运费由顾客承担。"


def _squad() -> dict[str, Any]:
    """Two articles: an English paragraph without id (v2: one unanswerable question) and a Chinese one with id."""
    return {"version": "v2.0", "data": [
        {"title": "Aurora", "paragraphs": [{"context": AURORA, "qas": [
            {"id": "en-1", "question": "How much does the Aurora X200 cost?",
             "answers": [{"text": "$1,299", "answer_start": 21}, {"text": " $1,299", "answer_start": 21}, {"text": "1,299", "answer_start": 22}]},
            {"id": "en-2", "question": "Who designed it?", "answers": [], "is_impossible": True,
             "plausible_answers": [{"text": "Aurora", "answer_start": 4}]},
        ]}]},
        {"title": "退货政策", "paragraphs": [{"id": "returns", "context": RETURNS, "qas": [
            {"id": 7, "question": "顾客收货后多少天内可以退货？", "answers": [{"text": "30天", "answer_start": 5}]},
            {"id": "zh-2", "question": " ", "answers": [{"text": "顾客", "answer_start": 19}]},
        ]}]},
    ]}


def _write(path: Path, payload: Any) -> Path:
    path.write_text(json.dumps(payload, ensure_ascii=False), "utf-8")
    return path


def test_squad_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _write(tmp_path / "squad.json", _squad())
    assert main(["import", "squad", str(source), str(tmp_path / "out"), "--category", "faq"]) == 0
    out = capsys.readouterr().out
    assert "1 unanswerable questions (is_impossible, or no answer text) were skipped" in out
    assert "1 questions with empty text were skipped" in out
    dataset = load_dataset(tmp_path / "out")
    aurora_id = "squad-" + hashlib.sha256(AURORA.encode()).hexdigest()[:12]
    assert [(d.doc_id, d.title, d.text) for d in dataset.corpus] == [(aurora_id, "Aurora", AURORA), ("returns", "退货政策", RETURNS)]
    assert [(c.id, c.ground_truth, c.keypoints, c.relevant_doc_ids, c.category) for c in dataset.golden] == [
        ("en-1", "$1,299", (("$1,299", "1,299"),), (aurora_id,), "faq"),
        ("7", "30天", (("30天",),), ("returns",), "faq"),
    ]
    assert import_squad(source).golden[0]["category"] == "squad"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["data"][0]["paragraphs"][0].update(qas={"id": "x"}), r"squad.json: data\[0\].paragraphs\[0\]: 'qas' must be a list of objects"),
        (lambda d: d["data"][1]["paragraphs"][0]["qas"][0].update(id="en-1"),
         r"data\[1\].paragraphs\[0\].qas\[0\]: duplicate question id 'en-1' \(first at .*squad.json: data\[0\].paragraphs\[0\].qas\[0\]\)"),
        (lambda d: d["data"][1]["paragraphs"].append({"id": "returns", "context": "其他文字", "qas": []}),
         r"data\[1\].paragraphs\[1\]: document id 'returns' already names another text"),
        (lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(text=None), r"qas\[0\].answers\[0\]: 'text' must be a string"),
        (lambda d: d.pop("data"), r"squad.json: 'data' must be a list of objects"),
    ],
)
def test_squad_malformed(tmp_path: Path, edit: Any, message: str) -> None:
    payload = _squad()
    edit(payload)
    with pytest.raises(UserError, match=message):
        import_squad(_write(tmp_path / "squad.json", payload))


def test_squad_malformed_json_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "squad.json"
    source.write_text('{"data": [\n  {"title": "x",\n   "paragraphs": [}\n]}\n')
    assert main(["import", "squad", str(source), str(tmp_path / "out")]) == 2
    assert "squad.json:3: malformed JSON" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not CMRC.is_file(), reason=f"CMRC 2018 not available at {CMRC} (outside data, never in the repo)")
def test_cmrc_trial_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "squad", str(CMRC), str(tmp_path / "cmrc")]) == 0
    # the trial split has 1,002 questions, two of them with empty text (TRIAL_20_QUERY_0, TRIAL_776_QUERY_4)
    assert "2 questions with empty text were skipped" in capsys.readouterr().out
    dataset = load_dataset(tmp_path / "cmrc")
    assert (len(dataset.corpus), len(dataset.golden)) == (256, 1000)
    assert {"TRIAL_20_QUERY_0", "TRIAL_776_QUERY_4"}.isdisjoint(c.id for c in dataset.golden)
    texts = {d.doc_id: d.text for d in dataset.corpus}
    first = dataset.golden[0]
    assert (first.id, first.question, first.keypoints, first.relevant_doc_ids) == ("TRIAL_800_QUERY_0", "生命数耗完即算为什么？", (("踢爆",),), ("TRIAL_800",))
    assert texts["TRIAL_800"].startswith("基于《跑跑卡丁车》与《泡泡堂》上所开发的游戏")
    # extractive answers: every keypoint occurs verbatim in its paragraph
    assert all(any(a in texts[c.relevant_doc_ids[0]] for a in c.keypoints[0]) for c in dataset.golden)
