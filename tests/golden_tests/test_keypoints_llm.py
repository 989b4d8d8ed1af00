"""``tuner golden keypoints --mode llm`` against the loopback OpenAI-compatible server, in English and Chinese: facts
kept only with verbatim aliases, malformed replies counted, reviewed keypoints untouched, dry run, budget, refusal."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.golden import fill_keypoints, parse_keypoints, pending_cases
from tuner.io import write_jsonl
from tuner.llm import CallCache, ChatClient, LLMConfig
from tuner.llm.testing import FakeChatServer

CORPUS = [
    {"doc_id": "leave", "title": "Leave policy", "text": "Staff get 20 days of paid leave per year. Requests go to Human Resources by email."},
    {"doc_id": "office", "title": "Offices", "text": "The Berlin office opened on 4 May 2023 with 120 staff."},
    {"doc_id": "休假", "title": "休假制度", "text": "员工每年享有带薪年假二十天，申请须提前三天交人力资源部。"},
    {"doc_id": "会员", "title": "会员", "text": "黄金会员每年收取99元会费，可享受全场九五折。"},
]
GOLDEN: list[dict[str, Any]] = [
    {"id": "en-1", "question": "How much leave do staff get?", "ground_truth": "Twenty days a year, requested from Human Resources.",
     "keypoints": [], "relevant_doc_ids": ["leave"]},
    {"id": "zh-1", "question": "年假怎么申请？", "ground_truth": "每年二十天，须提前三天向人力资源部申请。", "keypoints": [],
     "relevant_doc_ids": ["休假"]},
    {"id": "en-bad", "question": "When did Berlin open?", "ground_truth": "In May 2023.", "keypoints": [], "relevant_doc_ids": ["office"]},
    {"id": "zh-bad", "question": "黄金会员多少钱？", "ground_truth": "每年99元。", "keypoints": [], "relevant_doc_ids": ["会员"]},
    {"id": "en-none", "question": "How many staff?", "ground_truth": "About a hundred people.", "keypoints": [], "relevant_doc_ids": ["office"]},
    {"id": "reviewed", "question": "Berlin staff?", "ground_truth": "120 staff.", "keypoints": [], "keypoints_reviewed": True,
     "relevant_doc_ids": ["office"]},
    {"id": "kept", "question": "Leave?", "ground_truth": "20 days.", "keypoints": [["20 days"]], "relevant_doc_ids": ["leave"]},
]
REPLIES = {
    # "Twenty days" is not in the document: that alias goes, "20 days" stays; "by post" is no fact of it: dropped
    "en-1": {"keypoints": [["20 days", "Twenty days"], ["Human Resources"], ["by post"]]},
    "zh-1": {"keypoints": [["二十天"], ["提前三天"], ["人力资源部"], ["两周内"]]},
    "en-bad": "The facts are: May 2023.",
    "zh-bad": {"keypoints": "99元"},
    "en-none": {"keypoints": [["about a hundred"]]},
}


def responder(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    case = next(c for c in GOLDEN if f"{c['ground_truth']}\n" in prompt)
    reply = REPLIES[case["id"]]
    return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)


def _kb(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    write_jsonl(folder / "corpus.jsonl", CORPUS)
    write_jsonl(folder / "golden.jsonl", GOLDEN)
    return folder


def _client(server: FakeChatServer, cache: Path) -> ChatClient:
    return ChatClient(LLMConfig(base_url=server.url, model="fake", api_key_env=None), CallCache(cache))


def test_parse_keypoints_takes_nothing_it_must_guess() -> None:
    assert parse_keypoints('```json\n{"keypoints": ["a", ["b", " "]]}\n```') == [["a"], ["b"]]
    for malformed in ("keypoints: a, b", '{"facts": [["a"]]}', '{"keypoints": "a"}', '{"keypoints": [["a", 3]]}'):
        assert parse_keypoints(malformed) is None, malformed


def test_llm_mode_keeps_verbatim_facts_in_both_languages(tmp_path: Path) -> None:
    kb = _kb(tmp_path)
    before = (kb / "golden.jsonl").read_bytes()
    assert [c.case_id for c in pending_cases(kb)] == ["en-1", "zh-1", "en-bad", "zh-bad", "en-none"]
    with FakeChatServer(responder) as server:
        report = fill_keypoints(kb, _client(server, tmp_path / "calls.sqlite"), concurrency=3)
        prompts = {r.body["messages"][-1]["content"] for r in server.requests}
    assert len(prompts) == 5
    zh_prompt = next(p for p in prompts if "每年二十天" in p)
    assert zh_prompt.startswith("把下面的参考答案拆成") and "文档1:\n休假制度\n员工每年享有带薪年假二十天" in zh_prompt
    en_prompt = next(p for p in prompts if "Twenty days a year" in p)
    assert en_prompt.startswith("Split the reference answer") and "DOCUMENT 1:\nLeave policy" in en_prompt
    assert report.filled == {"en-1": [("20 days",), ("Human Resources",)], "zh-1": [("二十天",), ("提前三天",), ("人力资源部",)]}
    assert report.unparseable == ["en-bad", "zh-bad"] and report.unmatched == ["en-none"] and report.failed == []
    assert report.reviewed == ["reviewed"] and report.dropped_facts == 3  # "by post", "两周内", "about a hundred"
    assert report.spend is not None and report.spend.requests == 5 and report.spend.tokens > 0
    assert (kb / "golden.jsonl.bak").read_bytes() == before
    cases = {c.id: c for c in load_dataset(kb).golden}
    assert cases["zh-1"].keypoints == (("二十天",), ("提前三天",), ("人力资源部",))
    assert cases["en-bad"].keypoints == () and cases["reviewed"].keypoints == () and cases["kept"].keypoints == (("20 days",),)


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "llm.yaml"
    path.write_text(f"base_url: {url}\nmodel: fake\napi_key_env: null\n", "utf-8")
    return path


def test_cli_llm_mode_prints_filled_could_not_and_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = _kb(tmp_path / "kb")
    with FakeChatServer(responder) as server:
        config = _config(tmp_path, server.url)
        assert main(["golden", "keypoints", str(kb), "--mode", "llm", "--llm-config", str(config), "--dry-run"]) == 0
        assert server.requests == []
        dry = capsys.readouterr().out
        assert main(["golden", "keypoints", str(kb), "--mode", "llm", "--llm-config", str(config), "--budget", "1", "--concurrency", "1"]) == 0
        assert len(server.requests) == 1
        first = capsys.readouterr().out
        assert main(["golden", "keypoints", str(kb), "--mode", "llm", "--llm-config", str(config)]) == 0
        assert len(server.requests) == 5  # the filled case is not asked again
    out = capsys.readouterr().out
    assert len(re.findall(r"^request \S+: 1 documents: ~\d+ prompt tokens$", dry, re.M)) == 5
    assert "dry run: 5 requests to fake, ~" in dry and "nothing was sent" in dry
    assert "filled en-1: 20 days; Human Resources" in first and "stopped: the token budget of 1 is reached with 4 cases left" in first
    assert "filled zh-1: 二十天; 提前三天; 人力资源部" in out
    assert "could not fill en-bad: the reply holds no JSON object with a list of keypoints (nothing was guessed)" in out
    assert "could not fill en-none: no fact of the reply has an alias found verbatim in a relevant document" in out
    assert "1 case filled, 3 got no keypoint, 1 reviewed left alone" in out
    assert "2 facts dropped: no alias found verbatim in a relevant document; 2 malformed replies, 0 failed requests" in out


def test_cli_llm_mode_without_a_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = _kb(tmp_path / "kb")
    assert main(["golden", "keypoints", str(kb), "--mode", "llm"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tuner: error: tuner golden keypoints --mode llm needs a chat model: pass --llm-config FILE") and "\n" not in err
    assert main(["golden", "keypoints", str(kb), "--dry-run"]) == 2
    assert "--llm-config, --dry-run and --budget need --mode llm" in capsys.readouterr().err
    assert not (kb / "golden.jsonl.bak").exists()
