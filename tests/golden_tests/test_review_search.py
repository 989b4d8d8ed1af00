"""Labels beyond the pool: the review app's search over the whole knowledge base, chunks found by search, the
"no answer in the knowledge base" outcome, and the labels' provenance the export writes and the dataset reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.golden_tests.drafts import chunk, review_client, write_case_draft
from tests.text_tests.zh_fixture import DOCS as ZH_DOCS
from tuner.dataset import (
    PROVENANCE, UNKNOWN_ORIGIN, DraftLabels, LabelProvenance, labels_json, labels_line, load_dataset, load_knowledge_base,
)
from tuner.cli import main
from tuner.embedding import CachedEncoder
from tuner.errors import DatasetError
from tuner.evaluation import label_caveat
from tuner.golden import KnowledgeSearch, ReviewStore, build_pools, default_pool, draft_case, embedding_covers, parse_pool, read_draft, write_draft
from tuner.io import write_jsonl
from tuner.metrics import recall_lower_bound
from tuner.progress import NullTask


@pytest.fixture
def zh_draft(tmp_path: Path) -> Path:
    """A Chinese knowledge base naming MiniLM (which does not cover it: search is BM25 only) and one case whose pool
    misses the answer."""
    kb = tmp_path / "zh"
    kb.mkdir()
    write_jsonl(kb / "corpus.jsonl", [{"doc_id": f"zh-{d}", "text": x} for d, x in ZH_DOCS])
    (kb / "dataset.yaml").write_text("embedding_model: all-MiniLM-L6-v2\n")
    row = draft_case("log-0001", "礼品卡能换成现金吗？", [chunk("zh-member", 1, None, 1)], kb, source="log", stratum="head",
                     pool_spec={"retrievers": ["bm25", "hybrid"], "depth": 1})
    write_draft(kb / "review.jsonl", [row])
    return kb / "review.jsonl"


def test_recall_lower_bound_counts_no_answer_cases_as_misses() -> None:
    # 18 of 20 answered cases found (recall 0.9), 5 more marked no answer: 18 / 25 = 0.72
    assert recall_lower_bound(0.9, 20, 5) == pytest.approx(0.72)
    assert recall_lower_bound(0.5, 4, 0) == 0.5
    with pytest.raises(ValueError):
        recall_lower_bound(1.0, 0, 0)


def test_embedding_coverage_decides_the_pool_and_pool_names_are_checked() -> None:
    assert embedding_covers("all-MiniLM-L6-v2", "en") and not embedding_covers("sentence-transformers/all-MiniLM-L6-v2", "zh")
    assert not embedding_covers("BAAI/bge-small-en-v1.5", "zh") and embedding_covers("BAAI/bge-m3", "zh")
    assert parse_pool("hybrid, bm25") == ("bm25", "hybrid")
    with pytest.raises(ValueError, match=r"--pool: unknown retriever 'splade' \(pool retrievers: bm25, dense, hybrid\)"):
        parse_pool("bm25,splade")
    with pytest.raises(ValueError, match="name at least one"):
        parse_pool(" , ")


def test_the_search_line_names_the_model_and_the_language_html_escaped(zh_draft: Path) -> None:
    (zh_draft.parent / "dataset.yaml").write_text('embedding_model: "models/<b>team</b>/all-MiniLM-L6-v2"\n')
    page = review_client(ReviewStore(zh_draft), "en").get("/").text
    assert ("Search: BM25 only (models/&lt;b&gt;team&lt;/b&gt;/all-MiniLM-L6-v2 does not cover this knowledge base&#x27;s "
            "language, zh)") in page, page
    assert "<b>team" not in page


def test_search_api_returns_chunks_of_the_whole_knowledge_base_and_refuses_bad_input(zh_draft: Path) -> None:
    store = ReviewStore(zh_draft)
    assert default_pool(store.knowledge_base()) == ("bm25",) and store.searcher().retrievers == ("bm25",)
    client = review_client(store, "zh")
    page = client.get("/")
    assert 'id="search"' in page.text and "搜索：仅 BM25（all-MiniLM-L6-v2 不支持该知识库的语言：zh）" in page.text and ">知识库中无答案<" in page.text
    hits = client.get("/api/search", params={"q": "礼品卡 现金", "k": 3})
    assert hits.status_code == 200
    assert hits.json()[0] == {"rank": 1, "chunk_id": "zh-gift-card#0-27", "doc_id": "zh-gift-card", "title": "",
                              "text": "礼品卡有效期三年，余额可以分多次使用，但不能兑换现金。"}
    assert len(hits.json()) <= 3
    # only chunks sharing a term: BM25's zero-score padding (arbitrary chunks of the corpus) is not a search result
    everything = client.get("/api/search", params={"q": "礼品卡 现金", "k": 50}).json()
    assert everything and all("礼品卡" in hit["text"] or "现金" in hit["text"] for hit in everything)
    assert client.get("/api/search", params={"q": "潜水艇"}).json() == []
    # nothing to read once normalized (a zero-width space, NUL characters, an ideographic space) is blank too (issue 38 §1)
    blank = [({"q": q, "k": 3}, "q: give the text to search for") for q in ("  ", "\u200b", "\x00\x00", "\u3000\ufeff")]
    for params, error in (({"k": 3}, "q: give the text to search for"), *blank,
                          ({"q": "礼品卡", "k": "many"}, "k: an integer from 1 to 50, got 'many'"),
                          ({"q": "礼品卡", "k": 0}, "k: an integer from 1 to 50, got '0'"),
                          ({"q": "x" * 1001}, "q: at most 1000 characters")):
        refused = client.get("/api/search", params=params)
        assert refused.status_code == 400 and refused.json()["error"].startswith(error), refused.text


def test_a_chunk_found_by_search_joins_the_pool_checked_and_marked(zh_draft: Path) -> None:
    client = review_client(ReviewStore(zh_draft), "en")
    saved = client.post("/api/cases/log-0001", json={"version": 0, "found_chunk_ids": ["zh-gift-card#0-27"]})
    assert saved.status_code == 200, saved.text
    assert "found by search" in saved.json()["pool_html"]
    row = read_draft(zh_draft)[0]
    assert row["pool"][-1] == {"doc_id": "zh-gift-card", "chunk_id": "zh-gift-card#0-27", "title": "",
                               "text": "礼品卡有效期三年，余额可以分多次使用，但不能兑换现金。", "ranks": {}, "found_by": "search"}
    assert (row["relevant_chunk_ids"], row["relevant_doc_ids"]) == (["zh-gift-card#0-27"], ["zh-gift-card"])
    # found again: already in the pool, nothing added; an id the knowledge base lacks is refused
    assert len(client.post("/api/cases/log-0001", json={"version": 1, "found_chunk_ids": ["zh-gift-card#0-27"]}).json()["row"]["pool"]) == 2
    refused = client.post("/api/cases/log-0001", json={"version": 1, "found_chunk_ids": ["zh-nothing#0-5"]})
    assert refused.status_code == 422 and refused.json()["error"] == "no chunk zh-nothing#0-5 in the knowledge base"


def test_no_answer_is_a_third_outcome_counted_in_the_provenance(draft: Path, kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = review_client(ReviewStore(draft), "en")
    assert client.post("/api/cases/log-0001", json={"version": 0, "relevant_chunk_ids": ["aurora-x200#0-145"]}).status_code == 200
    client.post("/api/cases/log-0001", json={"version": 1, "action": "accept"})
    marked = client.post("/api/cases/log-0002", json={"action": "no_answer", "version": 0})
    assert marked.status_code == 200 and marked.json()["row"]["review"]["status"] == "no_answer"
    client.post("/api/cases/log-0003", json={"version": 0, "action": "reject"})
    progress = client.get("/api/progress").json()
    assert (progress["reviewed"], progress["by_status"]["no_answer"]) == (3, 1)
    exported = client.post("/api/export", json={})
    assert exported.status_code == 200 and "1 marked no answer in the knowledge base, 1 rejected" in exported.json()["labels"]
    assert [c.id for c in load_dataset(kb).golden] == ["log-0001"]
    written = json.loads((kb / PROVENANCE).read_text("utf-8"))
    assert written == {"pool_retrievers": ["bm25", "dense", "hybrid"], "pool_depth": None, "cases": 1, "cases_found_by_search": 0,
                       "labels_found_by_search": 0, "no_answer": 1, "rejected": 1, "unreviewed": 0,
                       "drafts": [{"draft": str(draft.resolve()), "pool_retrievers": ["bm25", "dense", "hybrid"], "pool_depth": None,
                                   "case_ids": ["log-0001"], "found_by_search": {}, "no_answer": 1, "rejected": 1}]}
    assert load_dataset(kb).provenance == LabelProvenance.of_drafts(
        [DraftLabels(str(draft.resolve()), ("bm25", "dense", "hybrid"), None, ("log-0001",), no_answer=1, rejected=1)])
    assert main(["validate", str(kb)]) == 0
    assert (f"{kb}: labels from a review of a bm25+dense+hybrid pool (depth ?): 1 cases, 0 with labels found by search outside "
            "the pool (0 chunks), 1 marked no answer in the knowledge base, 1 rejected") in capsys.readouterr().out


def test_provenance_is_validated_on_load_and_said_when_absent(kb: Path, tiny_dataset_dir: Path) -> None:
    assert load_dataset(tiny_dataset_dir).provenance is None
    assert labels_json(None) == {"known": False, "note": UNKNOWN_ORIGIN} and labels_line(None) == UNKNOWN_ORIGIN
    write_jsonl(kb / "golden.jsonl", [{"id": "q1", "question": "Price?", "ground_truth": "$1,299", "keypoints": [["$1,299"]],
                                       "relevant_doc_ids": ["aurora-x200"]}])
    (kb / PROVENANCE).write_text('{"pool_retrievers": ["bm25"], "pool_depth": 10, "cases": 1, "no_answer": -1}', "utf-8")
    with pytest.raises(DatasetError) as error:
        load_dataset(kb)
    assert error.value.problems == [f"{kb / PROVENANCE}: no_answer must be a non-negative integer"]
    (kb / PROVENANCE).write_text('{"pool_retrievers": ["bm25"], "pool_depth": 10, "cases": 1, "no_answer": 2}', "utf-8")
    provenance = load_dataset(kb).provenance
    assert provenance is not None and provenance.pooled("bm25", 10) and not provenance.pooled("bm25", 11)
    assert not provenance.pooled("dense", 5) and provenance.pool_note("dense", 5) is None
    assert "bm25 at top_k 5 is measured on questions bm25 helped label (pool depth 10)" in str(provenance.pool_note("bm25", 5))
    assert labels_json(provenance)["no_answer"] == 2 and "2 marked no answer in the knowledge base" in labels_line(provenance)


def _reviewed(kb: Path, folder: Path, cases: list[tuple[str, str, str]], pool: list[str], depth: int) -> ReviewStore:
    """A draft in ``folder`` of ``cases`` (id, relevant document, status), its pool ``pool`` at ``depth``; a case id ending
    in ``*`` has its relevant chunk found by search."""
    rows = []
    for case_id, doc_id, status in cases:
        found = case_id.endswith("*")
        row = draft_case(case_id.rstrip("*"), f"Question {case_id}?", [{**chunk(doc_id, 1, 1, 1), **({"found_by": "search"} if found else {})}],
                         kb, source="log", stratum="head", relevant_doc_ids=[doc_id], pool_spec={"retrievers": pool, "depth": depth})
        row["review"]["status"] = status
        rows.append(row)
    folder.mkdir()
    write_draft(folder / "review.jsonl", rows)
    return ReviewStore(folder / "review.jsonl")


def test_the_provenance_describes_every_case_of_a_golden_set_made_of_several_drafts(kb: Path, tmp_path: Path) -> None:
    # a hand-written case, under a provenance file written before drafts were recorded: it names no case
    write_jsonl(kb / "golden.jsonl", [{"id": "hand-1", "question": "Price?", "ground_truth": "$1,299", "keypoints": [["$1,299"]],
                                       "relevant_doc_ids": ["aurora-x200"]}])
    (kb / PROVENANCE).write_text('{"pool_retrievers": ["bm25"], "pool_depth": 3, "cases": 1}', "utf-8")
    first = _reviewed(kb, tmp_path / "a", [("log-0001*", "warranty", "accepted"), ("log-0002", "returns", "accepted"),
                                           ("log-0003", "returns", "no_answer")], ["bm25", "hybrid"], 5)
    second = _reviewed(kb, tmp_path / "b", [("synth-0001", "aurora-x210", "accepted"), ("synth-0002", "warranty", "rejected"),
                                            ("log-0002", "aurora-x200", "accepted")], ["bm25", "dense", "hybrid"], 10)
    first.export()
    second.export()  # its log-0002 replaces the first draft's
    dataset = load_dataset(kb)
    assert [c.id for c in dataset.golden] == ["hand-1", "log-0001", "synth-0001", "log-0002"]
    labels = dataset.provenance
    assert labels is not None and [(d.draft, d.case_ids) for d in labels.drafts] == [
        (str(first.path.resolve()), ("log-0001",)), (str(second.path.resolve()), ("synth-0001", "log-0002"))]
    assert (labels.cases, labels.unreviewed, labels.cases_found_by_search, labels.no_answer, labels.rejected) == (3, 1, 1, 1, 1)
    assert labels.summary() == (
        "labels from reviews of 2 drafts: a bm25+hybrid pool (depth 5) for 1 cases, a bm25+dense+hybrid pool (depth 10) for 2 cases: "
        "3 cases, 1 with labels found by search outside the pool (1 chunk), 1 marked no answer in the knowledge base, 1 rejected, "
        "and 1 cases no review made (origin unknown)")
    # each draft's pool: dense labelled only the second draft's cases (depth 10); bm25 both, at depth 5 and 10
    assert labels.pooled("dense", 10) and not labels.pooled("dense", 11) and labels.pooled("hybrid", 8)
    assert "(pool depth 10)" in str(labels.pool_note("hybrid", 8)) and "(pool depth 5/10)" in str(labels.pool_note("bm25", 3))
    # recall over the 4 cases of golden.jsonl, the 1 no-answer case as a miss: 0.8 · 4 / 5
    caveat = label_caveat(labels, "bm25", 3, 0.8)
    assert caveat is not None and caveat.lower_bound == pytest.approx(0.64)
    # the first draft exported again: its part replaced whole (log-0002 is its own again), the second keeps synth-0001
    first.export()
    labels = load_dataset(kb).provenance
    assert labels is not None and [(d.draft, d.case_ids) for d in labels.drafts] == [
        (str(second.path.resolve()), ("synth-0001",)), (str(first.path.resolve()), ("log-0001", "log-0002"))]
    assert (labels.cases, labels.unreviewed, labels.answered) == (3, 1, len(load_dataset(kb).golden))
    # golden.jsonl edited by hand afterwards (log-0001 removed, hand-2 added): loading describes the set as it is
    edited = [json.loads(line) for line in (kb / "golden.jsonl").read_text("utf-8").splitlines()]
    edited = [case for case in edited if case["id"] != "log-0001"] + [{**edited[0], "id": "hand-2"}]
    write_jsonl(kb / "golden.jsonl", edited)
    labels = load_dataset(kb).provenance
    assert labels is not None and [d.case_ids for d in labels.drafts] == [("synth-0001",), ("log-0002",)]
    assert (labels.cases, labels.unreviewed, labels.cases_found_by_search, labels.no_answer) == (2, 2, 0, 1)
    write_jsonl(kb / "golden.jsonl", [case for case in edited if case["id"].startswith("hand-")])
    assert load_dataset(kb).provenance is None  # no case left that a recorded draft made: origin unknown
    # sums that are not the drafts' are refused on load
    written = json.loads((kb / PROVENANCE).read_text("utf-8"))
    (kb / PROVENANCE).write_text(json.dumps({**written, "cases": 4}), "utf-8")
    with pytest.raises(DatasetError, match="the pool and counts are not those of its drafts"):
        load_dataset(kb)


def test_search_with_dense_when_the_model_covers_the_language(kb: Path, tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder) -> None:
    (tmp_path / "drafts").mkdir()
    store = ReviewStore(write_case_draft(kb, tmp_path / "drafts"), tiny_dataset_dir, encoder=encoder)  # English: MiniLM covers it
    search = store.searcher()
    assert isinstance(search, KnowledgeSearch) and search.retrievers == ("bm25", "dense")
    assert "Search: BM25 and dense retrieval" in review_client(store, "en").get("/").text
    assert search.search("How long is the laptop warranty?", 2)[0]["doc_id"] == "warranty"


class _Lines:
    """A reporter keeping its stage lines (bars are no-ops), as a log or a pipe shows them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def stage(self, message: str) -> None:
        self.lines.append(message)

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[NullTask]:
        yield NullTask()


def test_pool_building_and_embedding_print_progress_lines_without_a_terminal(
        tmp_path: Path, encoder: CachedEncoder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tuner.progress.PROGRESS_EVERY", 0.0)
    kb = tmp_path / "kb"
    kb.mkdir()
    words = tmp_path.name  # texts no other test embedded
    write_jsonl(kb / "corpus.jsonl", [{"doc_id": f"d{i}", "text": f"Document {i} about {words} and item {i}."} for i in range(3)])
    reporter = _Lines()
    build_pools(load_knowledge_base(kb), ["item 1?"], 2, encoder=encoder, reporter=reporter)
    assert "embedding: 3 of 3 chunks" in reporter.lines  # one batch here: one line
    assert [line for line in reporter.lines if line.startswith("pool:")] == [
        f"pool: {name} top 2 of 1 questions over 3 chunks" for name in ("bm25", "dense", "hybrid")]
