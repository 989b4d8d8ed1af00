from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tuner.judging import REPAIR_PROMPT, KeypointVerdict, build_judge, parse_judge_config, parse_verdict
from tuner.llm import BackendError
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer, Failure, Reply

KEYPOINTS = [("$1,299", "1299 dollars"), ("two-year warranty",)]
CONTEXTS = ["The X1 costs $1,299.", "Warranty: two years."]


def oracle(body: dict[str, Any]) -> str:
    """Says "supported" for answer prompts and "absent" for context prompts, quoting the prompt's first line."""
    prompt = body["messages"][0]["content"]
    verdict = "supported" if "ANSWER:" in prompt else "absent"
    return json.dumps({"verdict": verdict, "evidence": prompt.splitlines()[0][:20]})


@pytest.fixture
def judge_setup(chat_server: FakeChatServer, tmp_path: Path) -> tuple[Any, BackendResources]:
    chat_server.responder = oracle
    resources = BackendResources(cache_path=tmp_path / "calls.sqlite")
    config = parse_judge_config(
        {"backend": "llm", "base_url": chat_server.url, "model": "judge-1", "api_key_env": None,
         "timeout": 0.3, "max_retries": 0, "parse_retries": 2, "concurrency": 4},
        "study.yaml",
    )  # fmt: skip
    return build_judge(config, resources), resources


def test_two_separate_prompts_per_keypoint(judge_setup: Any, chat_server: FakeChatServer) -> None:
    judge, _ = judge_setup
    verdicts = judge.judge("Price and warranty?", "It is $1,299 [[the-answer]].", CONTEXTS, KEYPOINTS, ["$1,199"])
    assert [(v.answer, v.context, v.missing_reason) for v in verdicts] == [("supported", "absent", None)] * 2
    assert verdicts[0].evidence == 'answer: "You check whether an" | context: "You check whether nu"'
    prompts = [r.body["messages"] for r in chat_server.requests]
    assert len(prompts) == 4 and all(len(m) == 1 for m in prompts)
    answer_prompts = [m[0]["content"] for m in prompts if "[[the-answer]]" in m[0]["content"]]
    context_prompts = [m[0]["content"] for m in prompts if "[[the-answer]]" not in m[0]["content"]]
    assert len(answer_prompts) == 2 and not any("Warranty: two years." in p for p in answer_prompts)
    assert all("[1] The X1 costs $1,299.\n\n[2] Warranty: two years." in p for p in context_prompts)
    assert any('"$1,299" / "1299 dollars"' in p for p in answer_prompts)
    assert not any("1,199" in p for p in answer_prompts + context_prompts)
    assert {r.body["temperature"] for r in chat_server.requests} == {0.0}


def test_malformed_reply_is_repaired(judge_setup: Any, chat_server: FakeChatServer) -> None:
    chat_server.script("[[fix-me]]", Reply("Sure! It is supported."), Reply('```json\n{"verdict": "contradicted", "evidence": "$1,199"}\n```'))
    judge, _ = judge_setup
    verdict = judge.judge("Price?", "It is $1,199 [[fix-me]].", CONTEXTS, KEYPOINTS[:1], [])[0]
    assert verdict == KeypointVerdict("contradicted", "absent", 'answer: "$1,199" | context: "You check whether nu"')
    retry = [r.body["messages"] for r in chat_server.requests if "[[fix-me]]" in r.text][1]
    assert [m["role"] for m in retry] == ["user", "assistant", "user"]
    assert retry[1]["content"] == "Sure! It is supported." and retry[2]["content"] == REPAIR_PROMPT


def test_always_malformed_is_recorded_as_parse_failure(judge_setup: Any, chat_server: FakeChatServer) -> None:
    chat_server.script("[[garbage]]", Reply('{"verdict": "probably"}'))
    judge, _ = judge_setup
    verdict = judge.judge("Price?", "[[garbage]]", CONTEXTS, KEYPOINTS[:1], [])[0]
    assert (verdict.answer, verdict.context, verdict.missing_reason) == (None, "absent", "parse_failure")
    assert chat_server.count("[[garbage]]") == 3  # the first try and parse_retries=2 repairs


def test_timeout_and_server_error_are_missing_with_reasons(judge_setup: Any, chat_server: FakeChatServer) -> None:
    chat_server.script("[[slow]]", Reply("{}", delay=1.0))
    chat_server.script("[[down]]", Failure(500))
    judge, _ = judge_setup
    slow = judge.judge("Price?", "[[slow]]", CONTEXTS, KEYPOINTS[:1], [])[0]
    assert (slow.answer, slow.context, slow.missing_reason) == (None, "absent", "timeout")
    down = judge.judge("[[down]]", "It is $1,299.", CONTEXTS, KEYPOINTS[:1], [])[0]
    assert (down.answer, down.context, down.missing_reason) == (None, None, "backend_error")


def test_fatal_errors_raise(judge_setup: Any, chat_server: FakeChatServer) -> None:
    chat_server.script("[[auth]]", Failure(403))
    judge, _ = judge_setup
    with pytest.raises(BackendError, match="403"):
        judge.judge("[[auth]]", "It is $1,299.", CONTEXTS, KEYPOINTS[:1], [])


def test_empty_answer_skips_the_answer_prompt(judge_setup: Any, chat_server: FakeChatServer) -> None:
    judge, _ = judge_setup
    verdicts = judge.judge("Price?", " ", CONTEXTS, KEYPOINTS, [])
    assert [(v.answer, v.context, v.missing_reason) for v in verdicts] == [(None, "absent", "empty_answer")] * 2
    assert chat_server.count() == 2


def test_rejudging_is_served_from_the_cache(judge_setup: Any, chat_server: FakeChatServer) -> None:
    judge, resources = judge_setup
    first = judge.judge("Price?", "It is $1,299.", CONTEXTS, KEYPOINTS, [])
    assert judge.judge("Price?", "It is $1,299.", CONTEXTS, KEYPOINTS, []) == first
    counts = resources.usage.snapshot()
    assert chat_server.count() == 4 and (counts.calls, counts.cache_hits) == (4, 4)


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ('{"verdict": "supported", "evidence": "costs $1,299"}', ("supported", "costs $1,299")),
        ('Here you go: {"verdict": " ABSENT "} thanks', ("absent", "")),
        ('```json\n{"verdict": "contradicted", "evidence": ["a"]}\n```', ("contradicted", '["a"]')),
        ('{"verdict": "maybe", "evidence": ""}', None),
        ("supported", None),
        ('["supported"]', None),
        ('{"verdict": "supported"', None),
    ],
)
def test_parse_verdict(reply: str, parsed: tuple[str, str] | None) -> None:
    assert parse_verdict(reply) == parsed
