"""``tuner golden from-log``: normalizing and merging logged questions, the stratified draw, and pools over a knowledge
base without a golden set (English and Chinese)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import load_knowledge_base
from tuner.embedding import CachedEncoder
from tuner.golden import (
    read_draft,
    LoggedQuestion, Sampling, build_pools, drafts_from_log, merge_questions, near_duplicate_groups, normalize_question,
    read_log, sample_questions,
)
from tuner.golden._log import strata


def test_normalizing_folds_width_case_spaces_and_edge_punctuation() -> None:
    assert normalize_question("  ＨＯＷ much is the  X200？ ") == "how much is the x200"
    assert normalize_question("退货运费谁出？") == normalize_question("退货运费谁出")


def test_near_duplicates_group_in_both_scripts() -> None:
    texts = [normalize_question(t) for t in (
        "How much does the Aurora X200 laptop cost?", "how much does the aurora x200 laptop costs",
        "What is the return policy?", "顺丰次日达要加多少运费？", "顺丰次日达需要加多少运费", "发票怎么开")]
    assert near_duplicate_groups(texts) == [0, 0, 2, 3, 3, 5]


def test_templated_questions_about_different_names_stay_apart() -> None:
    # CMRC 2018 asks the same question of seven plants: most characters match, the name they ask about does not
    texts = [normalize_question(t) for t in ("五月艾所生长的地区海拔约是多少米？", "锦地罗生长的地区海拔约是多少米？",
                                             "How much does the Aurora X200 cost?", "How much does the Aurora X210 cost?",
                                             "How long is the laptop warranty of the Aurora X200?", "How long is the laptop warrenty of the Aurora X200?",
                                             "Nimbus冬季固件更新的下载大小是多少？", "Nimbus夏季固件更新的下载大小是多少？")]
    assert near_duplicate_groups(texts) == [0, 1, 2, 3, 4, 4, 6, 7]


def test_merging_sums_counts_and_keeps_the_most_frequent_wording() -> None:
    rows = [("how much is the x200 laptop?", 2, "2026-01-03", None), ("How much is the X200 laptop?", 5, "2026-01-01", "thumbs_down"),
            ("What is the return policy?", 1, None, None), ("HOW MUCH IS THE X200 LAPTOP", 1, "2026-02-01", None)]
    merged = merge_questions(rows)
    assert [(q.question, q.count) for q in merged] == [("How much is the X200 laptop?", 8), ("What is the return policy?", 1)]
    first = merged[0]
    assert (first.first_seen, first.last_seen, first.feedback) == ("2026-01-01", "2026-02-01", ["thumbs_down"])
    assert set(first.variants) == {"how much is the x200 laptop?", "How much is the X200 laptop?", "HOW MUCH IS THE X200 LAPTOP"}


def _questions(*counts: int) -> list[LoggedQuestion]:
    return [LoggedQuestion(f"question {i}", count, [f"question {i}"]) for i, count in enumerate(counts)]


def test_strata_follow_traffic_shares() -> None:
    # total 100; traffic before each question: 0, 50, 80, 90, 95 → head < 0.5 ≤ torso < 0.8 ≤ tail
    groups = strata(_questions(50, 30, 10, 5, 5), Sampling())
    assert {name: [q.count for q in members] for name, members in groups.items()} == {"head": [50], "torso": [30], "tail": [10, 5, 5]}


def test_the_draw_is_seeded_keeps_known_bad_cases_and_carries_shortfalls() -> None:
    questions = _questions(50, 30, *([1] * 20))
    sampling = Sampling(sizes={"head": 3, "torso": 1, "tail": 2}, seed=7)
    chosen = sample_questions(questions, sampling, known_bad=["Question 5", "a question nobody logged"])
    assert [(s, q.question) for s, q in chosen[:2]] == [("known_bad", "question 5"), ("known_bad", "a question nobody logged")]
    drawn = [s for s, _ in chosen[2:]]
    # head has one question: its shortfall of 2 goes to torso (1 question: all of it), then on to tail (2 + 2)
    assert drawn == ["head", "torso", "tail", "tail", "tail", "tail"]
    assert len({id(q) for _, q in chosen}) == len(chosen)
    again = sample_questions(questions, sampling, known_bad=["Question 5", "a question nobody logged"])
    assert [q.question for _, q in again] == [q.question for _, q in chosen]
    other = sample_questions(questions, Sampling(sizes={"head": 3, "torso": 1, "tail": 2}, seed=8))
    assert [q.question for _, q in other] != [q.question for _, q in chosen[2:]]


def test_sampling_refuses_unknown_strata() -> None:
    with pytest.raises(ValueError, match="unknown stratum body"):
        Sampling(sizes={"body": 3})


def test_pools_hold_every_retriever_s_rank(kb_dir: Path, encoder: CachedEncoder) -> None:
    kb = load_knowledge_base(kb_dir)
    assert kb.golden == ()
    pools = build_pools(kb, ["How many days do customers have to return a product?", "顺丰次日达要加多少运费？"], 3, encoder=encoder)
    for pool, wanted in zip(pools, ("returns", "zh-shipping")):
        assert 3 <= len(pool) <= 9
        assert wanted in [c["doc_id"] for c in pool]
        for candidate in pool:
            assert set(candidate["ranks"]) == {"bm25", "dense", "hybrid"}
            assert any(r is not None for r in candidate["ranks"].values())
            assert all(r is None or 1 <= r <= 3 for r in candidate["ranks"].values())
        for name in ("bm25", "dense", "hybrid"):
            assert sorted(r for c in pool if (r := c["ranks"][name]) is not None) == [1, 2, 3]
        best = [min(r for r in c["ranks"].values() if r is not None) for c in pool]
        assert best == sorted(best)


def test_pools_of_other_questions_are_not_read_from_the_cache(kb_dir: Path, encoder: CachedEncoder) -> None:
    kb = load_knowledge_base(kb_dir)
    build_pools(kb, ["How many days do customers have to return a product?"], 2, encoder=encoder)
    pools = build_pools(kb, ["顺丰次日达要加多少运费？"], 2, encoder=encoder)
    assert next(c["ranks"]["bm25"] for c in pools[0] if c["doc_id"] == "zh-shipping") == 1
    assert "returns" not in [c["doc_id"] for c in pools[0]]


def _log(path: Path, rows: list[tuple[str, int]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "hits"])
        writer.writerows(rows)
    return path


LOG = [("How much does the Aurora X200 laptop cost?", 40), ("how much does the aurora x200 laptop cost", 12),
       ("顺丰次日达要加多少运费？", 20), ("顺丰次日达需要加多少运费", 3), ("How long is the laptop warranty?", 9),
       ("黄金会员的会费是多少？", 4), ("What does express shipping cost?", 2), ("礼品卡可以兑换现金吗？", 1)]


def test_drafts_from_log_write_one_pooled_case_per_drawn_question(kb_dir: Path, encoder: CachedEncoder, tmp_path: Path) -> None:
    log = _log(tmp_path / "log.csv", LOG)
    drafts = drafts_from_log(log, load_knowledge_base(kb_dir), Sampling(n=4, seed=1), columns={"count": "hits"}, depth=5,
                             known_bad=["礼品卡可以兑换现金吗"], encoder=encoder)
    assert (drafts.read, drafts.exact, drafts.merged) == (8, 7, 6)
    assert drafts.drawn["known_bad"] == 1 and sum(drafts.drawn.values()) == 5
    first = drafts.rows[0]
    assert (first["id"], first["stratum"], first["question"], first["count"]) == ("log-0001", "known_bad", "礼品卡可以兑换现金吗？", 1)
    by_question = {row["question"]: row for row in drafts.rows}
    x200 = by_question["How much does the Aurora X200 laptop cost?"]
    assert (x200["count"], x200["stratum"]) == (52, "head")
    for row in drafts.rows:
        assert row["review"] == {"status": "pending", "version": 0, "updated": None, "keypoints_reviewed": False}
        assert row["relevant_doc_ids"] == [] and row["pool"]
        assert all({"doc_id", "chunk_id", "text", "ranks"} <= c.keys() for c in row["pool"])
    assert "aurora-x200" in [c["doc_id"] for c in x200["pool"]]


def test_cli_writes_review_jsonl_and_refuses_to_overwrite(kb_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"query": q, "n": c}, ensure_ascii=False) + "\n" for q, c in LOG), "utf-8")
    out = tmp_path / "drafts"
    argv = ["golden", "from-log", str(log), str(out), "--dataset", str(kb_dir), "--n", "3", "--depth", "4", "--map", "count=n"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "8 rows, 7 distinct after normalizing, 6 after merging near duplicates" in printed
    assert f"{log}: columns: query from 'query', count from 'n' (timestamp, feedback: no such column)\n" in printed
    rows = [json.loads(line) for line in (out / "review.jsonl").read_text("utf-8").splitlines()]
    assert len(rows) == 3 and all(row["pool"] for row in rows)
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"tuner: error: {out / 'review.jsonl'}: already exists (it may hold reviews); pass --force to replace it"


def test_dense_leaves_the_pool_when_the_model_does_not_cover_the_language(kb_dir: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.csv"
    log.write_text("query\n顺丰次日达要加多少运费？\n礼品卡可以兑换现金吗\n", "utf-8")
    out = tmp_path / "drafts"
    argv = ["golden", "from-log", str(log), str(out), "--dataset", str(kb_dir), "--n", "2", "--depth", "3"]
    assert main(argv) == 0  # the knowledge base is mostly Chinese; MiniLM is English-only
    captured = capsys.readouterr()
    assert ("pool: bm25; dense and hybrid left out: all-MiniLM-L6-v2 does not cover this knowledge base's language (zh); "
            "--pool bm25,dense,hybrid puts them back") in " ".join(captured.err.split())
    rows = read_draft(out / "review.jsonl")
    assert all(row["pool_spec"] == {"retrievers": ["bm25"], "depth": 3} for row in rows)
    assert all(set(chunk["ranks"]) == {"bm25"} for row in rows for chunk in row["pool"])
    assert main([*argv, "--force", "--pool", "bm25,dnese"]) == 2
    assert capsys.readouterr().err.strip() == "tuner: error: --pool: unknown retriever 'dnese' (pool retrievers: bm25, dense, hybrid)"
    assert read_draft(out / "review.jsonl") == rows  # nothing written


def test_a_log_without_a_query_column_is_one_line(kb_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.csv"
    log.write_text("text,hits\nhello,1\n", "utf-8")
    assert main(["golden", "from-log", str(log), str(tmp_path / "out"), "--dataset", str(kb_dir)]) == 2
    assert capsys.readouterr().err.strip() == f"tuner: error: {log}:2: no query column (query or question); name it with --map query=COLUMN"
    assert not (tmp_path / "out").exists()


def test_parquet_logs_and_bad_counts(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"q": ["退货运费谁出？", "What is the return policy?"], "c": [3, 0]}), path)
    with pytest.raises(Exception, match=r"log.parquet: row 2: count must be from 1 to 9007199254740991, got 0"):
        read_log(path, {"query": "q", "count": "c"})
    pq.write_table(pa.table({"q": ["退货运费谁出？"], "c": [3]}), path)
    assert read_log(path, {"query": "q", "count": "c"}).rows == [("退货运费谁出？", 3, None, None)]


def test_a_knowledge_base_needs_only_a_valid_corpus(tmp_path: Path) -> None:
    from tuner.errors import DatasetError, UserError

    with pytest.raises(UserError, match="knowledge base folder not found"):
        load_knowledge_base(tmp_path / "missing")
    (tmp_path / "kb").mkdir()
    with pytest.raises(DatasetError, match=r"corpus.jsonl: missing \(a knowledge base needs corpus.jsonl\)"):
        load_knowledge_base(tmp_path / "kb")
    (tmp_path / "kb" / "corpus.jsonl").write_text('{"doc_id": "a", "text": "退货运费由买家承担。"}\n{"doc_id": "a", "text": "x"}\n', "utf-8")
    with pytest.raises(DatasetError, match=r"corpus.jsonl:2: duplicate doc_id 'a'"):
        load_knowledge_base(tmp_path / "kb")
    (tmp_path / "kb" / "corpus.jsonl").write_text('{"doc_id": "a", "text": "退货运费由买家承担。"}\n', "utf-8")
    kb = load_knowledge_base(tmp_path / "kb")
    assert (kb.golden, kb.language, kb.language_source, len(kb.corpus)) == ((), "zh", "detected", 1)
