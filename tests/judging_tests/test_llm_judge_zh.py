"""The LLM judge with Chinese content, over the loopback server: asked in Chinese, keypoint aliases sent
verbatim, English verdict labels parsed, Chinese evidence kept as quoted."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tuner.judging import JUDGE_PROMPTS, KeypointVerdict, build_judge, parse_judge_config
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer, Reply

QUESTION = "Aurora X200 的售价和保修期是多少？"
KEYPOINTS = [("1299 元", "一千二百九十九元"), ("两年保修", "保修两年")]
CONTEXTS = ["Aurora X200 售价 1299 元。", "所有笔记本电脑均提供保修两年。"]


def chinese_oracle(body: dict[str, Any]) -> str:
    """A judge that reads the Chinese prompt: "supported" with the sentence holding an alias as evidence,
    else "absent". It finds the aliases only if they arrive verbatim."""
    prompt = body["messages"][0]["content"]
    aliases = re.findall(r'"([^"]+)"', prompt.split("事实（以下任一说法都算）：", 1)[1].split("\n", 1)[0])
    judged = prompt.split("段落：\n", 1)[1] if "段落：\n" in prompt else prompt.split("回答：", 1)[1]
    judged = judged.split("\n\n\"supported\"", 1)[0]
    for sentence in re.findall(r"[^。\n]*。", judged):
        if any(alias in sentence for alias in aliases):
            return json.dumps({"verdict": "supported", "evidence": sentence.strip()}, ensure_ascii=False)
    return json.dumps({"verdict": "absent", "evidence": ""})


@pytest.fixture
def judge(chat_server: FakeChatServer, tmp_path: Path) -> Any:
    chat_server.responder = chinese_oracle
    config = parse_judge_config(
        {"backend": "llm", "base_url": chat_server.url, "model": "judge-1", "api_key_env": None, "max_retries": 0},
        "study.yaml",
    )
    return build_judge(config, BackendResources(cache_path=tmp_path / "calls.sqlite"))


def test_chinese_keypoints_are_judged_in_chinese_with_chinese_evidence(judge: Any, chat_server: FakeChatServer) -> None:
    verdicts = judge.judge(QUESTION, "X200 售价 1299 元。", CONTEXTS, KEYPOINTS, [])
    assert verdicts == [
        KeypointVerdict("supported", "supported", 'answer: "X200 售价 1299 元。" | context: "[1] Aurora X200 售价 1299 元。"'),
        KeypointVerdict("absent", "supported", 'context: "[2] 所有笔记本电脑均提供保修两年。"'),
    ]
    prompts = [r.body["messages"][0]["content"] for r in chat_server.requests]
    assert len(prompts) == 4 and all(p.startswith("你要检查") for p in prompts)
    assert sum('"1299 元" / "一千二百九十九元"' in p for p in prompts) == 2
    assert sum('"两年保修" / "保修两年"' in p for p in prompts) == 2
    assert all(f"问题：{QUESTION}\n" in p for p in prompts)
    context_prompt = JUDGE_PROMPTS["zh"].context
    assert any(p.startswith(context_prompt[: context_prompt.index("{context}")]) for p in prompts)


def test_escaped_chinese_evidence_is_decoded(judge: Any, chat_server: FakeChatServer) -> None:
    chat_server.script("[[escaped]]", Reply(json.dumps({"verdict": "contradicted", "evidence": "售价 1199 元"})))
    verdict = judge.judge(QUESTION, "售价 1199 元 [[escaped]]", CONTEXTS, KEYPOINTS[:1], [])[0]
    assert (verdict.answer, verdict.evidence.split(" | ")[0]) == ("contradicted", 'answer: "售价 1199 元"')


def test_repair_is_asked_in_the_prompt_language(judge: Any, chat_server: FakeChatServer) -> None:
    chat_server.script("[[fix-me]]", Reply("好的，支持。"), Reply('{"verdict": "supported", "evidence": "1299 元"}'))
    verdict = judge.judge(QUESTION, "1299 元 [[fix-me]]", CONTEXTS, KEYPOINTS[:1], [])[0]
    assert verdict.answer == "supported"
    retry = [r.body["messages"] for r in chat_server.requests if "[[fix-me]]" in r.text][1]
    assert retry[2]["content"] == JUDGE_PROMPTS["zh"].repair


def test_a_pinned_english_judge_keeps_the_keypoints_own_words(chat_server: FakeChatServer, tmp_path: Path) -> None:
    config = parse_judge_config(
        {"backend": "llm", "base_url": chat_server.url, "model": "judge-1", "api_key_env": None, "prompt_language": "en"},
        "study.yaml",
    )
    build_judge(config, BackendResources(cache_path=tmp_path / "calls.sqlite")).judge(QUESTION, "1299 元", CONTEXTS, KEYPOINTS[:1], [])
    prompts = [r.body["messages"][0]["content"] for r in chat_server.requests]
    assert all(p.startswith("You check whether") and '"1299 元" / "一千二百九十九元"' in p for p in prompts)
