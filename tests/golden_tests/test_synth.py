"""``tuner golden synth`` against the loopback OpenAI-compatible server: prompts in the chunk's language, every filter
exercised in English and Chinese, multi-hop pairs, the token budget and the resume, dry runs and the missing model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.dataset import load_knowledge_base
from tuner.embedding import CachedEncoder
from tuner.golden import PROGRESS, SynthPlan, Synthesizer, plan_sources, synth_drafts
from tuner.golden._synth import PASSAGE_BOUND, answer_in_question, parse_synthesis, verbatim
from tuner.io import write_jsonl
from tuner.llm import CallCache, ChatClient, LLMConfig
from tuner.llm.testing import FakeChatServer

DOCS = [
    ("aurora-x200", "Aurora X200 laptop", "The Aurora X200 laptop costs $1,299 and ships with 16 GB of memory."),
    ("aurora-x210", "Aurora X210 laptop", "The Aurora X210 laptop costs $1,499 and ships with 32 GB of memory."),
    ("warranty", "Warranty policy", "All laptops carry a 2-year limited warranty covering manufacturing defects."),
    ("returns", "Return policy", "Customers may return any product within 30 days of delivery for a full refund."),
    ("shipping", "Shipping", "Express shipping takes 1 business day and costs $15."),
    ("mercury", "Mercury Logistics", "Mercury Logistics is our delivery partner and delivers to 28 countries."),
    ("security", "Security policy", "Passwords must be at least 12 characters long and are rotated every 90 days."),
    ("geography", "Head office", "Our head office is in Paris, the capital of France."),
    ("zh-return", "退货政策", "本店支持七天无理由退货，退货运费由买家承担。"),
    ("zh-member", "黄金会员", "黄金会员每年收取99元会费，可享受全场九五折。"),
    ("zh-hotline", "客服热线", "客服热线的服务时间是每天早上九点到晚上九点，节假日照常服务。"),
    ("zh-invoice", "发票", "电子发票在订单完成后七天内发送到您的邮箱。"),
    ("zh-coupon", "优惠券", "优惠券不能与会员折扣叠加使用，每个订单最多使用一张。"),
    ("zh-gift", "礼品卡", "礼品卡有效期三年，余额可以分多次使用，但不能兑换现金。"),
    ("zh-store", "北京旗舰店", "北京旗舰店位于朝阳区建国路88号，营业时间为上午十点至晚上十点。"),
    ("zh-store-weekend", "周末营业", "旗舰店周末的营业时间与平日相同，为上午十点至晚上十点。"),
    ("zh-capital", "总部", "公司总部设在首都北京。"),
]

# the model's reply per document (single passage), chosen to exercise each filter once
REPLIES: dict[str, dict[str, Any] | str] = {
    "aurora-x200": {"question": "How much does the Aurora X200 laptop cost?", "answer": "$1,299.", "keypoints": [["$1,299", "1299 dollars"]]},
    "aurora-x210": {"question": "How much does the Aurora X200 laptop costs?", "answer": "$1,499.", "keypoints": [["$1,499"]]},
    "warranty": {"question": "How long is the laptop warranty?", "answer": "Two years.", "keypoints": [["2-year", "two years"]]},
    "returns": {"question": "How many days do customers have to return a product?", "answer": "45 days.", "keypoints": [["45 days"]]},
    "shipping": {"question": "Does express shipping cost $15?", "answer": "Yes, $15.", "keypoints": [["$15"]]},
    "mercury": {"question": "According to the passage, how many countries does Mercury deliver to?", "answer": "28.",
                "keypoints": [["28 countries"]]},
    "security": "I am sorry, I cannot write questions about security.",
    "geography": {"question": "What is the capital of France?", "answer": "Paris.", "keypoints": [["Paris"]]},
    "zh-return": {"question": "退货的运费由谁承担？", "answer": "由买家承担。", "keypoints": [["买家"]]},
    "zh-member": {"question": "根据材料，黄金会员每年的会费是多少？", "answer": "99元。", "keypoints": [["99元"]]},
    "zh-hotline": {"question": "客服热线每天几点开始服务？", "answer": "早上九点。", "keypoints": [["早上九点", "9点"]]},
    "zh-invoice": {"question": "电子发票多久发送到邮箱？", "answer": "三天内。", "keypoints": [["三天内"]]},
    "zh-coupon": {"question": "每个订单最多使用一张优惠券吗？", "answer": "是的，一张。", "keypoints": [["一张"]]},
    "zh-gift": "抱歉，我无法完成这个任务。",
    "zh-store": {"question": "旗舰店的营业时间是几点到几点？", "answer": "上午十点至晚上十点。", "keypoints": [["上午十点至晚上十点"]]},
    "zh-store-weekend": {"question": "旗舰店的营业时间是几点到几点呢？", "answer": "上午十点至晚上十点。",
                         "keypoints": [["上午十点至晚上十点"]]},
    "zh-capital": {"question": "中国的首都是哪座城市？", "answer": "北京。", "keypoints": [["北京"]]},
}
MULTI = {"question": "How much more memory does the X210 have than the X200?", "answer": "16 GB more: 32 GB against 16 GB.",
         "keypoints": [["32 GB"], ["16 GB"]]}


def responder(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if prompt.startswith(("Answer the question", "请凭常识")):
        return "Paris." if "capital of France" in prompt else "北京。" if "中国的首都" in prompt else "I don't know."
    present = [doc_id for doc_id, _, text in DOCS if text in prompt]
    if len(present) == 2:
        return json.dumps(MULTI) if set(present) == {"aurora-x200", "aurora-x210"} else "no question for these"
    reply = REPLIES[present[0]]
    return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)


@pytest.fixture(scope="module")
def synth_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synth-kb")
    write_jsonl(root / "corpus.jsonl", [{"doc_id": d, "title": t, "text": x} for d, t, x in DOCS])
    return root


def _client(server: FakeChatServer, cache: Path) -> ChatClient:
    return ChatClient(LLMConfig(base_url=server.url, model="fake", api_key_env=None), CallCache(cache))


def _outcomes(progress: Path) -> dict[str, str]:
    """Outcome per source, keyed by its documents (``a+b`` for a pair)."""
    outcomes = {}
    for line in progress.read_text("utf-8").splitlines():
        record = json.loads(line)
        chunks = record["source"].split(":", 1)[1].split("+")
        outcomes["+".join(sorted(c.split("#")[0] for c in chunks))] = record["outcome"]
    return outcomes


def test_reply_checks() -> None:
    assert parse_synthesis('```json\n{"question": "Q?", "answer": "A", "keypoints": ["x", ["y", " "]]}\n```') == ("Q?", "A", [["x"], ["y"]])
    assert parse_synthesis('{"question": "", "answer": "A"}') is None
    assert verbatim([["２-year", "two years"]], "a 2-Year warranty") == [["２-year"]]
    assert verbatim([["45 days"]], "within 30 days") is None and verbatim([], "text") is None
    assert answer_in_question("退货运费由买家承担吗？", "是", [["买家"]])
    assert not answer_in_question("退货运费由谁承担？", "买家", [["买家"]])
    for bound in ("According to the passage, what is X?", "文中提到的价格是多少？", "上述产品的保修期多长？", "根据材料，会费是多少？"):
        assert PASSAGE_BOUND.search(bound), bound
    assert not PASSAGE_BOUND.search("How long is the laptop warranty?") and not PASSAGE_BOUND.search("保修期多长？")


def test_every_filter_in_both_languages(synth_kb: Path, encoder: CachedEncoder, tmp_path: Path) -> None:
    kb = load_knowledge_base(synth_kb)
    plan = SynthPlan(n=30, multi_hop_share=0.2, long_tail_share=0.2, closed_book=True, depth=3)
    sources = plan_sources(kb, plan, encoder=encoder)
    single = [s.chunks[0].doc_id for name in ("single_hop", "long_tail") for s in sources[name]]
    assert sorted(single) == sorted(d for d, _, _ in DOCS)
    assert single[:2] != ["aurora-x200", "aurora-x210"] or single[2:4] != ["warranty", "returns"]  # spread, not corpus order
    pair = next(s for s in sources["multi_hop"] if {c.doc_id for c in s.chunks} == {"aurora-x200", "aurora-x210"})
    assert pair.link == "entity:aurora"
    with FakeChatServer(responder) as server:
        run = Synthesizer(kb, plan, _client(server, tmp_path / "calls.sqlite"), tmp_path / PROGRESS).run(sources)
        prompts = [r.body["messages"][-1]["content"] for r in server.requests]
    outcomes = _outcomes(tmp_path / PROGRESS)
    assert {doc: outcomes[doc] for doc in ("warranty", "returns", "shipping", "mercury", "security", "geography")} == {
        "warranty": "kept", "returns": "keypoint_not_in_source", "shipping": "answer_in_question", "mercury": "passage_bound",
        "security": "unparseable", "geography": "closed_book"}
    assert {doc: outcomes[doc] for doc in ("zh-return", "zh-member", "zh-hotline", "zh-invoice", "zh-coupon", "zh-gift", "zh-capital")} == {
        "zh-return": "kept", "zh-member": "passage_bound", "zh-hotline": "kept", "zh-invoice": "keypoint_not_in_source",
        "zh-coupon": "answer_in_question", "zh-gift": "unparseable", "zh-capital": "closed_book"}
    assert sorted([outcomes["aurora-x200"], outcomes["aurora-x210"]]) == ["kept", "near_duplicate"]
    assert sorted([outcomes["zh-store"], outcomes["zh-store-weekend"]]) == ["kept", "near_duplicate"]
    assert outcomes["aurora-x200+aurora-x210"] == "kept"
    for name in ("unparseable", "keypoint_not_in_source", "answer_in_question", "passage_bound", "near_duplicate", "closed_book"):
        assert run.dropped[name] >= 1, name
    assert len(run.cases) + sum(run.dropped.values()) == len(outcomes)
    zh_prompt = next(p for p in prompts if "本店支持七天无理由退货" in p)
    assert zh_prompt.startswith("你在为一个基于企业知识库的问答系统编写评测问题") and "材料1" in zh_prompt
    en_prompt = next(p for p in prompts if "2-year limited warranty" in p)
    assert en_prompt.startswith("You write evaluation questions") and "PASSAGE 1" in en_prompt
    assert any(p.startswith("请凭常识") for p in prompts) and any(p.startswith("Answer the question") for p in prompts)
    by_question = {c["question"]: c for c in run.cases}
    warranty = by_question["How long is the laptop warranty?"]
    assert (warranty["keypoints"], warranty["relevant_doc_ids"]) == ([["2-year"]], ["warranty"])
    multi = by_question[MULTI["question"]]
    assert (multi["category"], multi["difficulty"], multi["relevant_doc_ids"]) == ("multi_hop", "hard", ["aurora-x200", "aurora-x210"])
    zh = by_question["客服热线每天几点开始服务？"]
    assert zh["keypoints"] == [["早上九点"]] and zh["language"] == "zh"

    rows = synth_drafts(kb, run.cases, plan.depth, encoder=encoder)
    row = next(r for r in rows if r["question"] == MULTI["question"])
    assert row["id"].startswith("synth-") and row["source"] == "synth" and row["stratum"] == "multi_hop"
    assert {"aurora-x200", "aurora-x210"} <= {c["doc_id"] for c in row["pool"]}
    assert sorted(c.split("#")[0] for c in row["relevant_chunk_ids"]) == ["aurora-x200", "aurora-x210"]
    assert row["review"]["status"] == "pending"
    assert row["pool_spec"] == {"retrievers": ["bm25", "dense", "hybrid"], "depth": plan.depth}


def test_a_budget_stops_cleanly_and_a_rerun_resumes(synth_kb: Path, encoder: CachedEncoder, tmp_path: Path) -> None:
    kb = load_knowledge_base(synth_kb)
    plan = SynthPlan(n=4, multi_hop_share=0.0, long_tail_share=0.0, budget=1)
    sources = plan_sources(kb, plan, encoder=encoder)
    progress = tmp_path / PROGRESS
    with FakeChatServer(responder) as server:
        first = Synthesizer(kb, plan, _client(server, tmp_path / "calls.sqlite"), progress).run(sources)
        assert first.stopped_by_budget and first.requests == 1 and len(server.requests) == 1
        assert len(progress.read_text("utf-8").splitlines()) == 1
        rest = Synthesizer(kb, plan.model_copy(update={"budget": None}), _client(server, tmp_path / "calls.sqlite"), progress).run(sources)
        asked = [r.body["messages"][-1]["content"] for r in server.requests]
    assert rest.resumed == 1 and not rest.stopped_by_budget
    assert len(asked) == len(set(asked)), "a resumed run asks nothing twice"
    assert rest.requests == len(asked) - 1
    recorded = progress.read_text("utf-8").splitlines()
    assert len(recorded) == 1 + rest.requests == len(rest.cases) + sum(rest.dropped.values())
    assert len(rest.cases) == min(4, sum(outcome == "kept" for outcome in _outcomes(progress).values()))


def _config(tmp_path: Path, url: str, key_env: str | None) -> Path:
    path = tmp_path / "llm.yaml"
    path.write_text(f"base_url: {url}\nmodel: fake\napi_key_env: {key_env or 'null'}\n", "utf-8")
    return path


def test_cli_dry_run_sends_nothing(synth_kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeChatServer(responder) as server:
        config = _config(tmp_path, server.url, None)
        assert main(["golden", "synth", str(synth_kb), str(tmp_path / "out"), "--n", "5", "--llm-config", str(config), "--dry-run"]) == 0
        assert server.requests == []
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("request ")]
    assert len(lines) == 5 and all(re.search(r": ~\d+ prompt tokens$", line) for line in lines)
    assert "dry run: 5 requests to fake (single_hop 2, multi_hop 2, long_tail 1), ~" in out
    assert "at most 2560 completion tokens (max_tokens 512)" in out and "nothing was sent" in out
    assert not (tmp_path / "out").exists()


def test_cli_without_a_model_or_key_is_one_line(synth_kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["golden", "synth", str(synth_kb), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tuner: error: tuner golden synth needs a chat model: pass --llm-config FILE") and "\n" not in err
    monkeypatch.delenv("TUNER_SYNTH_KEY", raising=False)
    config = _config(tmp_path, "http://127.0.0.1:9/v1", "TUNER_SYNTH_KEY")
    assert main(["golden", "synth", str(synth_kb), str(tmp_path / "out"), "--llm-config", str(config)]) == 2
    assert "environment variable TUNER_SYNTH_KEY is not set" in capsys.readouterr().err


def test_cli_writes_drafts_and_never_the_key(synth_kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-9f8e7d6c5b4a"
    monkeypatch.setenv("TUNER_SYNTH_KEY", secret)
    out = tmp_path / "out"
    with FakeChatServer(responder) as server:
        config = _config(tmp_path, server.url, "TUNER_SYNTH_KEY")
        argv = ["golden", "synth", str(synth_kb), str(out), "--n", "3", "--multi-hop-share", "0", "--llm-config", str(config)]
        assert main(argv) == 0
        assert server.requests[0].headers["authorization"] == f"Bearer {secret}"
    printed = capsys.readouterr()
    assert re.search(r"review.jsonl: \d+ questions kept \(single_hop \d+, multi_hop 0, long_tail \d+\); dropped: unparseable \d+, "
                     r"keypoint_not_in_source \d+, answer_in_question \d+, passage_bound \d+, near_duplicate \d+, closed_book 0", printed.out)
    rows = [json.loads(line) for line in (out / "review.jsonl").read_text("utf-8").splitlines()]
    assert rows and all(r["source"] == "synth" and r["pool"] and r["relevant_doc_ids"] for r in rows)
    for text in (printed.out, printed.err, (out / "review.jsonl").read_text("utf-8"), (out / PROGRESS).read_text("utf-8")):
        assert secret not in text


def test_spread_takes_families_and_documents_in_turn() -> None:
    import random

    from tuner.chunking import Chunk
    from tuner.golden._synth import spread

    chunks = [Chunk(f"{doc}#{i}", doc, 0, 1, "t") for doc, n in (("a-v1", 3), ("a-v2", 3), ("b", 2), ("c", 1)) for i in range(n)]
    families = {"a-v1": "a", "a-v2": "a", "b": "b", "c": "c"}
    order = spread(chunks, families, random.Random(3))
    assert sorted(c.chunk_id for c in order) == sorted(c.chunk_id for c in chunks)
    first_round = [families[c.doc_id] for c in order[:3]]
    assert sorted(first_round) == ["a", "b", "c"]  # every family before any twice
    family_a = [c.doc_id for c in order if families[c.doc_id] == "a"]
    assert all(x != y for x, y in zip(family_a, family_a[1:]))  # within a family, its documents alternate


def test_concurrency_keeps_the_outcome_of_one_at_a_time(synth_kb: Path, encoder: CachedEncoder, tmp_path: Path) -> None:
    import threading
    import time

    kb = load_knowledge_base(synth_kb)
    plan = SynthPlan(n=12, multi_hop_share=0.2, long_tail_share=0.2, closed_book=True, depth=3)
    sources = plan_sources(kb, plan, encoder=encoder)
    lock, active, peak = threading.Lock(), [0], [0]

    def slow(body: dict[str, Any]) -> str:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return responder(body)

    outcomes = {}
    for concurrency in (1, 4):
        progress = tmp_path / f"{concurrency}-{PROGRESS}"
        peak[0] = 0
        with FakeChatServer(slow) as server:
            run = Synthesizer(kb, plan.model_copy(update={"concurrency": concurrency}), _client(server, tmp_path / f"{concurrency}.sqlite"),
                              progress).run(sources)
        assert peak[0] == concurrency
        outcomes[concurrency] = (run.cases, progress.read_text("utf-8"), dict(run.dropped), len(server.requests))
    assert outcomes[4][:3] == outcomes[1][:3]  # the same questions, in the same order, with the same outcomes
    assert len(outcomes[1][0]) >= 5 and sum(outcomes[1][2].values()) >= 10
    assert outcomes[1][3] <= outcomes[4][3] <= outcomes[1][3] + 2 * 3 * 3  # speculative extras: < concurrency per category filled

    progress = tmp_path / f"budget-{PROGRESS}"
    with FakeChatServer(responder) as server:
        budgeted = plan.model_copy(update={"concurrency": 4, "budget": 1, "closed_book": False})
        first = Synthesizer(kb, budgeted, _client(server, tmp_path / "budget.sqlite"), progress).run(sources)
        assert first.stopped_by_budget and first.requests == 4 and len(server.requests) == 4  # one batch, then the budget stops it
        assert len(progress.read_text("utf-8").splitlines()) == 4
        rest = Synthesizer(kb, budgeted.model_copy(update={"budget": None}), _client(server, tmp_path / "budget.sqlite"), progress).run(sources)
    assert rest.resumed == 4 and not rest.stopped_by_budget
    asked = [r.body["messages"][-1]["content"] for r in server.requests]
    assert len(asked) == len(set(asked)), "a resumed run asks nothing twice"


@pytest.mark.parametrize(("language", "pool", "left_out"), [("zh", ["bm25"], True), ("en", ["bm25", "dense", "hybrid"], False)])
def test_the_synth_pool_leaves_the_embedding_retrievers_out_where_the_model_does_not_cover_the_language(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], language: str, pool: list[str], left_out: bool) -> None:
    """As ``from-log`` does: MiniLM, named in the manifest (a Chinese dataset naming none gets multilingual-e5-small),
    covers English only; ``--pool`` puts dense back."""
    kb = tmp_path / "kb"
    kb.mkdir()
    write_jsonl(kb / "corpus.jsonl", [{"doc_id": d, "title": t, "text": x} for d, t, x in DOCS if d.startswith("zh-") == (language == "zh")])
    (kb / "dataset.yaml").write_text("embedding_model: all-MiniLM-L6-v2\n")
    out = tmp_path / "out"
    with FakeChatServer(responder) as server:
        argv = ["golden", "synth", str(kb), str(out), "--n", "2", "--multi-hop-share", "0", "--long-tail-share", "0", "--depth", "3",
                "--llm-config", str(_config(tmp_path, server.url, None))]
        assert main(argv) == 0
        note = ("pool: bm25; dense and hybrid left out: all-MiniLM-L6-v2 does not cover this knowledge base's language (zh); "
                "--pool bm25,dense,hybrid puts them back")
        assert (note in " ".join(capsys.readouterr().err.split())) == left_out
        rows = [json.loads(line) for line in (out / "review.jsonl").read_text("utf-8").splitlines()]
        assert rows and all(row["pool_spec"] == {"retrievers": pool, "depth": 3} for row in rows)
        assert all(set(chunk["ranks"]) == set(pool) for row in rows for chunk in row["pool"])
        (out / "review.jsonl").unlink()
        assert main([*argv, "--pool", "dense,bm25"]) == 0
    assert "left out" not in capsys.readouterr().err
    rows = [json.loads(line) for line in (out / "review.jsonl").read_text("utf-8").splitlines()]
    assert all(row["pool_spec"]["retrievers"] == ["bm25", "dense"] for row in rows)
    assert main([*argv, "--pool", "bm25,splade"]) == 2
    assert capsys.readouterr().err.strip() == "tuner: error: --pool: unknown retriever 'splade' (pool retrievers: bm25, dense, hybrid)"
