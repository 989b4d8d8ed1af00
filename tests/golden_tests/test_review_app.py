"""``tuner golden review``: the review store (versions, atomic saves, review log, export) and the app's pages and API,
through FastAPI's test client; the real browser test is test_review_browser.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.golden_tests.drafts import review_client, write_conflict_candidates
from tuner.cli import main
from tuner.dataset import load_dataset, load_knowledge_base
from tuner.dataset.importers import NO_REFERENCE
from tuner.embedding import CachedEncoder
from tuner.errors import DatasetError
from tuner.golden import DraftCase, ReviewStore, Sampling, StaleVersion, drafts_from_log, highlight, read_draft, write_draft
from tuner.io import write_jsonl


def test_highlight_marks_question_terms_and_aliases_in_both_scripts() -> None:
    assert highlight("顺丰次日达需要另付１５元运费。", "顺丰次日达要加多少运费？", ["15元"]) == [
        ("顺丰次日", "q"), ("达需要另付", ""), ("１５元", "k"), ("运费", "q"), ("。", "")]
    # a Latin term marks word starts only; an alias that is also a term gets both marks
    assert highlight("Accost the costs", "cost", ["the"]) == [("Accost ", ""), ("the", "k"), (" ", ""), ("cost", "q"), ("s", "")]
    assert highlight("X200 price", "x200", ["X200"]) == [("X200", "qk"), (" price", "")]


def test_first_page_shows_the_first_case_not_yet_reviewed(draft: Path) -> None:
    client = review_client(ReviewStore(draft), "en")
    page = client.get("/")
    assert page.status_code == 200
    assert "How much does the Aurora X200 laptop cost?" in page.text and "ships with 16 GB of memory" in page.text
    assert '<mark class="k">$1,299</mark>' in page.text and '<mark class="q">Aurora</mark>' in page.text
    assert "reviewed 0/3 (head 0/1 · torso 0/1 · tail 0/1)" in page.text
    assert "http://" not in page.text.replace("http://www.w3.org", "") and "<link" not in page.text and "src=" not in page.text
    assert client.post("/api/cases/log-0001", json={"version": 0, "action": "accept"}).status_code == 200
    page = client.get("/")
    assert "顺丰次日达要加多少运费？" in page.text and "reviewed 1/3 (head 1/1" in page.text


def test_every_change_is_saved_with_a_version_and_logged(draft: Path) -> None:
    client = review_client(ReviewStore(draft), "en")
    saved = client.post("/api/cases/log-0002", json={"version": 0, "relevant_chunk_ids": ["zh-shipping#0-41"]})
    assert saved.status_code == 200, saved.text
    row = {r["id"]: r for r in read_draft(draft)}["log-0002"]
    assert (row["relevant_doc_ids"], row["review"]["version"], row["review"]["status"]) == (["zh-shipping"], 1, "pending")
    edited = client.post("/api/cases/log-0002", json={"version": 1, "ground_truth": " 15元 ", "keypoints": [["15元", " 十五元 ", ""], []]})
    assert edited.status_code == 200
    assert '<mark class="k">１５元</mark>' in edited.json()["pool_html"] and "found in chunks 1" in edited.json()["keypoint_html"]
    row = {r["id"]: r for r in read_draft(draft)}["log-0002"]
    assert (row["ground_truth"], row["keypoints"], row["review"]["keypoints_reviewed"]) == ("15元", [["15元", "十五元"]], True)
    # a second tab still holding version 1 is refused, and nothing changes
    before = draft.read_bytes()
    stale = client.post("/api/cases/log-0002", json={"version": 1, "action": "reject"})
    assert stale.status_code == 409
    assert stale.json()["error"] == ("case log-0002 was changed elsewhere (saved version 2, this page has version 1): "
                                     "nothing was saved; reload to see the current version")
    assert draft.read_bytes() == before
    lines = [json.loads(line) for line in (draft.parent / "review.log.jsonl").read_text("utf-8").splitlines()]
    assert "draft" in lines[0]  # the marker naming the draft file the saves replay onto
    log = [e for e in lines if "id" in e]
    assert [(e["id"], e["version"], sorted(e["changes"])) for e in log] == [
        ("log-0002", 1, ["relevant_chunk_ids", "relevant_doc_ids"]), ("log-0002", 2, ["ground_truth", "keypoints", "keypoints_reviewed"])]
    assert log[1]["changes"]["ground_truth"] == ["", "15元"] and log[0]["time"].endswith("+00:00")
    assert client.post("/api/cases/log-0002", json={"version": 2, "relevant_chunk_ids": ["elsewhere#0-1"]}).status_code == 422
    assert client.post("/api/cases/log-0009", json={"version": 0, "action": "accept"}).status_code == 404


def test_a_second_process_on_the_same_file_sees_the_saved_version(draft: Path) -> None:
    first, second = ReviewStore(draft), ReviewStore(draft)
    first.update("log-0003", 0, "skip")
    with pytest.raises(StaleVersion):
        second.update("log-0003", 0, "accept")
    assert second.update("log-0003", 1, "accept").review.status == "accepted"
    assert first.row("log-0003").review.version == 2  # type: ignore[union-attr]


def test_steps_follow_the_status_filter(draft: Path) -> None:
    client = review_client(ReviewStore(draft), "en", follow_redirects=False)
    client.post("/api/cases/log-0002", json={"version": 0, "action": "skip"})
    assert client.get("/step/log-0001?dir=next&filter=all").headers["location"] == "/case/log-0002?filter=all"
    assert client.get("/step/log-0001?dir=next&filter=pending").headers["location"] == "/case/log-0003?filter=pending"
    assert client.get("/step/log-0003?dir=back&filter=skipped").headers["location"] == "/case/log-0002?filter=skipped"
    assert "Nothing left to review" in client.get("/step/log-0003?dir=next&filter=all").text
    assert client.get("/step/log-0001?dir=back&filter=all").headers["location"] == "/case/log-0001?filter=all"


def test_export_writes_accepted_cases_only_and_validates(draft: Path, kb: Path) -> None:
    store = ReviewStore(draft)
    assert store.dataset == kb.resolve()
    client = review_client(store, "en")
    refused = client.post("/api/export", json={})
    assert refused.status_code == 400 and refused.json()["error"].endswith("no accepted rows to export yet")
    client.post("/api/cases/log-0001", json={"version": 0, "relevant_chunk_ids": ["aurora-x200#0-145"]})
    client.post("/api/cases/log-0001", json={"version": 1, "action": "accept"})
    client.post("/api/cases/log-0003", json={"version": 0, "action": "accept"})  # accepted with no relevant chunk checked
    invalid = client.post("/api/export", json={})
    # the case is named, not a line of a golden.jsonl that was never written (issue 38 §1)
    assert invalid.status_code == 400 and invalid.json()["error"] == (
        f"{draft}: accepted case log-0003 has no checked chunk; check the chunks that answer it, or reopen it, or mark it "
        "no answer (1 such case: log-0003)")
    assert not (kb / "golden.jsonl").exists()
    client.post("/api/cases/log-0003", json={"version": 1, "relevant_chunk_ids": ["warranty#0-155"]})
    client.post("/api/cases/log-0002", json={"version": 0, "action": "reject"})
    done = client.post("/api/export", json={})
    assert done.status_code == 200, done.text
    golden = [json.loads(line) for line in (kb / "golden.jsonl").read_text("utf-8").splitlines()]
    assert [case["id"] for case in golden] == ["log-0001", "log-0003"]
    assert golden[0]["keypoints"] == [["$1,299"]] and golden[0]["keypoints_reviewed"] is True
    assert golden[1]["ground_truth"] == NO_REFERENCE and golden[1]["keypoints"] == [] and "keypoints_reviewed" not in golden[1]
    assert [c.relevant_doc_ids for c in load_dataset(kb).golden] == [("aurora-x200",), ("warranty",)]
    # each case keeps the stratum it was drawn from, for the confirmation split
    assert [case["stratum"] for case in golden] == ["head", "tail"]
    assert [c.stratum for c in load_dataset(kb).golden] == ["head", "tail"]
    # a second export replaces this draft's cases and keeps the others
    (kb / "golden.jsonl").write_text((kb / "golden.jsonl").read_text("utf-8").replace('"log-0003"', '"hand-1"'), "utf-8")
    assert client.post("/api/export", json={}).json()["kept"] == 1
    assert [c.id for c in load_dataset(kb).golden] == ["hand-1", "log-0001", "log-0003"]
    assert (kb / "golden.jsonl.bak").is_file()


def test_a_golden_stratum_is_validated_on_load(kb: Path) -> None:
    case = {"id": "q1", "question": "Price?", "ground_truth": "$1,299", "keypoints": [["$1,299"]], "relevant_doc_ids": ["aurora-x200"]}
    write_jsonl(kb / "golden.jsonl", [case])
    assert load_dataset(kb).golden[0].stratum is None
    for stratum, problem in ((" ", "field 'stratum' is empty (leave it out for a case not drafted)"),
                             (3, "field 'stratum' must be a string, got int")):
        write_jsonl(kb / "golden.jsonl", [{**case, "stratum": stratum}])
        with pytest.raises(DatasetError) as error:
            load_dataset(kb)
        assert error.value.problems == [f"{kb / 'golden.jsonl'}:1: {problem}"]


def test_conflict_candidates_are_reviewed_and_exported(kb: Path) -> None:
    candidates = write_conflict_candidates(kb)
    client = review_client(ReviewStore(candidates), "zh")
    page = client.get("/")
    assert '<mark class="w">$1,199</mark>' in page.text and "ships with 16 GB of memory" in page.text and "通过" in page.text
    assert "类型: 过期版本 · 错误值" in page.text and "(过期版本 0/2)" in page.text and "stale_version" not in page.text.split("<script")[0]
    assert client.post("/api/cases/aurora-x200-2023", json={"version": 0, "keypoints": []}).status_code == 422
    client.post("/api/cases/aurora-x200-2023", json={"version": 0, "action": "reject"})
    client.post("/api/cases/zh-shipping-old", json={"version": 0, "action": "accept"})
    assert client.post("/api/export", json={}).status_code == 200
    conflicts = [json.loads(line) for line in (kb / "conflicts.jsonl").read_text("utf-8").splitlines()]
    assert conflicts == [{"doc_id": "zh-shipping-old", "text": "顺丰次日达需要另付１０元运费。", "conflicts_with": "zh-shipping",
                          "kind": "stale_version", "wrong_values": ["１０元"]}]


def test_the_language_cookie_switches_the_interface(draft: Path) -> None:
    client = review_client(ReviewStore(draft))
    assert ">Accept<" in client.get("/").text  # the drafts are mostly English
    client.cookies.set("lang", "zh")
    page = client.get("/")
    assert ">通过<" in page.text and ">黄金集审核<" in page.text and '<html lang="zh-CN">' in page.text
    assert "(高频 0/1 · 中频 0/1 · 低频 0/1)" in page.text and "分层 高频" in page.text and "未分类" in page.text
    assert "WenQuanYi Micro Hei" in page.text  # a CJK fallback that Linux desktops have, not only macOS and Windows ones


def test_cli_refuses_a_missing_or_mixed_draft(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["golden", "review", str(tmp_path / "nothing.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == f"tuner: error: {tmp_path / 'nothing.jsonl'}: draft file not found"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"question": "q", "pool": []}\n{"doc_id": "d", "text": "t", "conflicts_with": "x"}\n', "utf-8")
    assert main(["golden", "review", str(mixed)]) == 2
    assert "one kind per file" in capsys.readouterr().err


def test_log_to_validated_golden_set(kb: Path, tmp_path: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.csv"
    log.write_text("query\n顺丰次日达要加多少运费？\nHow long is the laptop warranty?\n", "utf-8")
    drafts = drafts_from_log(log, load_knowledge_base(kb), Sampling(n=2), encoder=encoder)
    write_draft(tmp_path / "review.jsonl", drafts.rows)
    store = ReviewStore(tmp_path / "review.jsonl")
    for row in store.rows():
        assert isinstance(row, DraftCase)
        wanted = "zh-shipping" if "顺丰" in row.question else "warranty"
        chosen = [c.chunk_id for c in row.pool if c.doc_id == wanted]
        store.update(row.id, 0, None, relevant_chunk_ids=chosen)
        store.update(row.id, 1, "accept")
    assert store.export().written == 2
    assert main(["validate", str(kb)]) == 0
    assert "2 golden questions" in capsys.readouterr().out
