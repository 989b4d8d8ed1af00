"""tuner golden keypoints / conflicts on small zh and en knowledge bases written in tmp."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset, load_knowledge_base
from tuner.embedding import CachedEncoder
from tuner.golden import disagreements, family_summary, find_conflicts, rule_keypoints

CORPUS = [
    {"doc_id": "leave_v1.md", "title": "Leave", "text": "Staff get 15 days of paid leave per year. Requests go to Human Resources.",
     "metadata": {"family": "leave", "date": "2023-05-01"}},
    {"doc_id": "leave_v2.md", "title": "Leave", "text": "Staff get 20 days of paid leave per year. Requests go to Human Resources.",
     "metadata": {"family": "leave", "date": "2024-01-01"}},
    {"doc_id": "休假（2023年修订）.md", "title": "休假", "text": "员工每年享有带薪年假十五天。申请交人力资源部。",
     "metadata": {"family": "休假", "date": "2023-01-01"}},
    {"doc_id": "休假（2024年修订）.md", "title": "休假", "text": "员工每年享有带薪年假二十天。申请交人力资源部。",
     "metadata": {"family": "休假", "date": "2024-01-01"}},
    {"doc_id": "copy-a.txt", "title": "", "text": "The Berlin office opened on 4 May 2023 with 120 staff and hosts the research team of the firm."},
    {"doc_id": "copy-b.txt", "title": "", "text": "The Berlin office opened on 4 May 2023 with 150 staff and hosts the research team of the firm."},
    {"doc_id": "other.txt", "title": "", "text": "Lunch is served from noon in the canteen on the ground floor."},
]
GOLDEN: list[dict[str, Any]] = [
    {"id": "q1", "question": "How many days?", "ground_truth": "Staff get 20 days, see the Human Resources page.",
     "keypoints": [], "relevant_doc_ids": ["leave_v2.md"]},
    {"id": "q2", "question": "年假几天？", "ground_truth": "二十天，自2024年1月1日起，见《休假制度》。", "keypoints": [],
     "relevant_doc_ids": ["休假（2024年修订）.md"]},
    {"id": "q3", "question": "Reviewed", "ground_truth": "It opened on 4 May 2023.", "keypoints": [],
     "keypoints_reviewed": True, "relevant_doc_ids": ["copy-a.txt"]},
    {"id": "q4", "question": "Where is lunch?", "ground_truth": "in the canteen", "keypoints": [], "relevant_doc_ids": ["other.txt"]},
    {"id": "q5", "question": "Kept", "ground_truth": "120 staff", "keypoints": [["120"]], "relevant_doc_ids": ["copy-a.txt"]},
    {"id": "q6", "question": "Nothing", "ground_truth": "it is nice there, they say, every day", "keypoints": [],
     "relevant_doc_ids": ["other.txt"]},
]


def _write(folder: Path, golden: bool = True) -> Path:
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in CORPUS), encoding="utf-8")
    if golden:
        (folder / "golden.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in GOLDEN), encoding="utf-8")
    return folder


def test_rule_keypoints_en_zh() -> None:
    assert rule_keypoints("他于2016年9月4日获得七十万元，占百分之十二。", []) == [
        ("2016年9月4日", "2016-09-04"), ("七十万元", "700000元"), ("百分之十二", "12%")]
    assert rule_keypoints("Released on August 8, 2014 by Scott Cawthon.", ["made by Scott Cawthon"]) == [
        ("August 8, 2014", "2014-08-08"), ("Scott Cawthon",)]
    assert rule_keypoints("Released by Nobody Known.", ["made by Scott Cawthon"]) == []  # a name must occur in a document
    # a bare year after "in"/"since", a number with thousands separators; not a bare number elsewhere or absent from the documents
    assert rule_keypoints("In 1978, the city had 559,277 as of July.", ["in 1978 there were 559,277"]) == [("1978",), ("559,277", "559277")]
    assert rule_keypoints("Since 1935 it grew.", ["no year here"]) == []
    assert rule_keypoints("Built 1935, it grew.", ["built 1935"]) == []
    assert rule_keypoints("七十", ["他活了七十岁"]) == [("七十", "70")]
    # Chinese named spans (jieba nr/ns/nt/nz, adjacent ones joined) count only when a relevant document has them
    answer = "文化大革命期间，马飚中学毕业后，在广西柳州钢铁厂当工人。"
    assert rule_keypoints(answer, ["马飚，生于广西柳州，文化大革命期间当工人。"]) == [("文化大革命",), ("马飚",), ("广西柳州",)]
    assert rule_keypoints(answer, ["马飚生于柳州。"]) == [("马飚",)]


def test_rule_keypoints_read_common_units_and_skip_what_is_no_quantity() -> None:
    """Issue 38 §2: units the rules missed (分贝, 分钟, 平方米, 小时, Hz, °C, business days, $), measure words with their
    noun, a time of day, a rate; and what they took for facts: 一次 in 充一次电, 蓝牙, a model code's digits (M10 router)."""
    assert rule_keypoints("噪音低于34分贝，初次设置需要四十五分钟，营业面积为100平方米。", []) == [
        ("34分贝",), ("四十五分钟", "45分钟"), ("100平方米",)]
    assert rule_keypoints("支持120Hz刷新率，登录密码不得少于二十个字符，退款在18个工作日内退回。", []) == [
        ("120Hz",), ("二十个字符", "20个字符"), ("18个工作日",)]
    assert rule_keypoints("热线每天12小时有人接听，门店上午7点开门，每年服务1073万用户。", []) == [
        ("每天12小时",), ("上午7点", "7:00"), ("1073万用户", "10730000用户")]
    assert rule_keypoints("Zephyr Z48蓝牙音箱充一次电可连续播放15小时。", ["Zephyr Z48蓝牙音箱"]) == [("Zephyr Z48",), ("15小时",)]
    assert rule_keypoints("The Mercury M10 router costs $2,009 and ships in 3 business days.", ["Mercury M10"]) == [
        ("Mercury M10",), ("$2,009", "$2009"), ("3 business days",)]
    assert rule_keypoints("It opens at 9 a.m., runs at 54 °C and prints 46 pages per minute; firmware 2.9.4.", []) == [
        ("9 a.m.",), ("54 °C",), ("46 pages per minute",), ("2.9.4",)]


def test_fill_keypoints_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = _write(tmp_path / "kb")
    before = (kb / "golden.jsonl").read_bytes()
    assert main(["golden", "keypoints", str(kb)]) == 0
    out = capsys.readouterr().out
    assert "3 cases filled, 1 got no keypoint (listed above: write theirs in the review app, or try --mode llm), 1 reviewed left alone" in out
    assert "could not fill q6" in out and "left q3: keypoints reviewed by a person" in out
    assert (kb / "golden.jsonl.bak").read_bytes() == before
    cases = {c.id: c for c in load_dataset(kb).golden}
    assert cases["q1"].keypoints == (("20 days",), ("Human Resources",))
    assert cases["q2"].keypoints == (("二十天", "20天"), ("2024年1月1日", "2024-01-01"), ("休假制度",))
    assert cases["q3"].keypoints == () and cases["q5"].keypoints == (("120",),)
    assert cases["q4"].keypoints == (("in the canteen",),)


def test_keypoints_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = _write(tmp_path / "kb", golden=False)
    assert main(["golden", "keypoints", str(kb)]) == 2
    assert "golden.jsonl: missing" in capsys.readouterr().err
    assert main(["golden", "keypoints", str(tmp_path / "none")]) == 2
    assert "knowledge base folder not found" in capsys.readouterr().err


def test_disagreements_zh_en() -> None:
    assert disagreements("首销日期：2025年3月9日。", "首销日期：2025年4月1日。") == (["2025-03-09"], ["2025-04-01"])
    assert disagreements("The CEO is Anna Berg.", "The CEO is John Smith.") == (["Anna Berg"], ["John Smith"])
    assert disagreements("Staff get 15 days.", "Lunch is at noon.") == ([], [])


def test_conflicts_command_on_kb_without_golden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = _write(tmp_path / "kb", golden=False)
    assert main(["golden", "conflicts", str(kb)]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(x) for x in (kb / "conflicts.candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    pairs = {(r["doc_id"], r["conflicts_with"]): r for r in rows}
    assert set(pairs) == {("leave_v1.md", "leave_v2.md"), ("休假（2023年修订）.md", "休假（2024年修订）.md"), ("copy-a.txt", "copy-b.txt")}
    assert pairs[("leave_v1.md", "leave_v2.md")]["wrong_values"] == ["15"]
    assert pairs[("休假（2023年修订）.md", "休假（2024年修订）.md")]["severity"] == "dated"
    assert pairs[("copy-a.txt", "copy-b.txt")]["severity"] == "undated" and pairs[("copy-a.txt", "copy-b.txt")]["kind"] == "stale_version"
    assert "3 candidate pairs: 2 version families and 1 documents outside a family in conflict" in out
    assert "  document copy-a.txt: 1 pairs" in out and "  family leave: 1 pairs" in out and "leave_v2.md is newer" in out
    only_family = find_conflicts(load_knowledge_base(kb), near_duplicates=False)
    assert {(c.doc_id, c.reason) for c in only_family} == {("leave_v1.md", "family"), ("休假（2023年修订）.md", "family")}
    assert main(["golden", "conflicts", str(kb), "--out", str(tmp_path / "c.jsonl")]) == 0 and (tmp_path / "c.jsonl").is_file()


def test_accepted_stale_versions_leave_the_corpus_for_conflicts(tmp_path: Path) -> None:
    """Found in the corpus, reviewed, exported: each accepted stale version moves from corpus.jsonl to conflicts.jsonl
    with its family and date, so a study indexes it as a conflict (hard_mode: in_index) and version_policy can act on it."""
    from tuner.golden import ReviewStore

    kb = _write(tmp_path / "kb", golden=False)
    assert main(["golden", "conflicts", str(kb)]) == 0
    store = ReviewStore(kb / "conflicts.candidates.jsonl")
    store.update("leave_v1.md", 0, "accept")
    store.update("休假（2023年修订）.md", 0, "accept")
    store.update("copy-a.txt", 0, "reject")
    store.export()
    kept = load_knowledge_base(kb)
    assert {d.doc_id for d in kept.corpus} == {"leave_v2.md", "休假（2024年修订）.md", "copy-a.txt", "copy-b.txt", "other.txt"}
    by_id = {c.doc_id: c for c in kept.conflicts}
    assert set(by_id) == {"leave_v1.md", "休假（2023年修订）.md"}
    assert by_id["leave_v1.md"].conflicts_with == "leave_v2.md" and by_id["leave_v1.md"].wrong_values == ("15",)
    assert by_id["休假（2023年修订）.md"].metadata["family"] == "休假"
    assert (kb / "corpus.jsonl.bak").is_file()


def test_dense_neighbours_pair_rewritten_versions(tmp_path: Path, encoder: CachedEncoder) -> None:
    """A version with no family is paired by its embedding neighbour (here without MinHash); the disagreement test
    still decides, and a threshold above every cosine pairs nothing."""
    from tuner.dataset import Dataset, Document
    from tuner.golden import dense_pairs

    docs = (
        Document("berlin-a", "In May 2023 the firm opened its Berlin office, which employs 120 engineers today."),
        Document("berlin-b", "Opened in May 2023, the Berlin office of the firm employs a staff of 150 engineers today."),
        Document("canteen", "Lunch is served from noon in the canteen on the ground floor."),
        Document("canteen-zh", "午餐从中午十二点开始在一楼食堂供应。"),
    )
    kb = Dataset(tmp_path, docs, ())
    assert find_conflicts(kb, near_duplicates=False) == []
    pairs = dense_pairs(kb, 0.8, encoder=encoder)
    assert set(pairs) == {("berlin-a", "berlin-b")} and pairs[("berlin-a", "berlin-b")] >= 0.8
    (found,) = find_conflicts(kb, near_duplicates=False, dense=0.8, encoder=encoder)
    assert (found.doc_id, found.conflicts_with, found.wrong_values, found.right_values) == ("berlin-a", "berlin-b", ("120",), ("150",))
    assert found.reason.startswith("similar:0.")
    assert dense_pairs(kb, 0.999, encoder=encoder) == {}


def test_news_of_different_days_is_not_a_stale_version_but_a_family_s_changed_date_is(tmp_path: Path) -> None:
    """Issue 30 §6: on a news KB without versions, near-duplicate daily reports (different dates, different figures)
    and one article republished on two dates were flagged; a version family whose date changed still is."""
    from tuner.dataset import Dataset, Document

    report = "On {day} the Shanghai index closed at {value} points. Turnover was {turnover} billion yuan in the session."
    docs = [
        Document("news-0105.txt", report.format(day="2024-01-05", value="3,120", turnover="812")),
        Document("news-0106.txt", report.format(day="2024-01-06", value="3,090", turnover="790")),
        Document("republished-a.txt", "Published 2024-03-01. The Shenzhen metro line 16 opens with 24 stations and a 38 km track."),
        Document("republished-b.txt", "Published 2024-03-02. The Shenzhen metro line 16 opens with 24 stations and a 38 km track."),
        Document("launch_v1.md", "首销日期：2025年3月9日。", metadata={"family": "launch"}),
        Document("launch_v2.md", "首销日期：2025年4月1日。", metadata={"family": "launch"}),
    ]
    found = find_conflicts(Dataset(tmp_path, tuple(docs), ()))
    assert [(c.doc_id, c.conflicts_with, c.reason) for c in found] == [("launch_v1.md", "launch_v2.md", "family")]
    kb = Dataset(tmp_path, tuple(docs), ())
    assert family_summary(found, kb) == [("family launch", 1, 1)]


def test_questions_pair_a_fabricated_version_that_shares_no_family_and_no_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 47 §9: a passage written apart about one fact (ConflictNQ's fabricated passages) is no family member, no near
    duplicate and matches no sentence: only a question finds it, through the answers the documents give to it. The
    output says what was looked for and what no run of it finds, so 0 pairs is not read as 'no conflicts'."""
    corpus = [
        {"doc_id": "real", "title": "Five Nights at Freddy's", "text": "The first Five Nights at Freddy's game was released via "
         "Desura on August 8, 2014. On August 20, 2014 it was also released via Steam."},
        {"doc_id": "fake", "title": "The origin of the game", "text": "In the late nineties a developer began a classified "
         "project. The game Five Nights at Freddy's was first released in December 1998 by Dean Hernandez."},
        {"doc_id": "fake-too", "title": "Funding", "text": "Funding for Five Nights at Freddy's came from Kramer LLC, whose "
         "game was first released in 1998 as part of a study."},
        {"doc_id": "canteen", "title": "", "text": "Lunch is served from noon in the canteen on the ground floor."},
    ]
    golden = [{"id": "q1", "question": "When was the first Five Nights at Freddy's game released?", "ground_truth": "August 8, 2014",
               "keypoints": [["August 8, 2014"]], "relevant_doc_ids": ["real"]}]
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    assert main(["golden", "conflicts", str(kb)]) == 0
    out = capsys.readouterr().out
    assert "0 candidate pairs" in out and "looked for: documents of one version family (metadata.family), near duplicates" in out
    assert "not found by this run:" in out and "fabricated version sharing no family and little text: try --questions" in out
    assert main(["golden", "conflicts", str(kb), "--questions"]) == 2
    assert "--questions reads the questions of golden.jsonl, and this knowledge base has none" in capsys.readouterr().err
    (kb / "golden.jsonl").write_text("".join(json.dumps(g) + "\n" for g in golden), encoding="utf-8")
    assert main(["golden", "conflicts", str(kb), "--questions"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(x) for x in (kb / "conflicts.candidates.jsonl").read_text(encoding="utf-8").splitlines()]
    # the two fabrications agree with each other (1998): only their pairs with the real passage disagree
    assert {(r["doc_id"], r["conflicts_with"], tuple(r["wrong_values"])) for r in rows} == {("fake", "real", ("1998",)),
                                                                                         ("fake-too", "real", ("1998",))}
    assert "documents answering one golden question" in out and "questions that ask no date, number or name" in out
