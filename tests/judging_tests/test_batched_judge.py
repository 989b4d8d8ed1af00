"""``judge: {batch_keypoints: true}`` (issue 23 §2): one request per side with all of a case's keypoints; a short or
malformed reply is repaired for the keypoints it lacks, then recorded missing for them, never guessed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tuner.judging import BATCH_REPAIR_PROMPT, KeypointVerdict, build_judge, parse_judge_config
from tuner.llm import fill
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer, Reply, keypoint_oracle_reply

CASES = [
    ("What does the X200 cost and how much memory has it?", "It costs $1,299 with 8 GB.",
     ["The Aurora X200 laptop costs $1,299 and ships with 16 GB of memory.", "Warranty: two years."],
     [("$1,299", "1299 dollars"), ("16 GB",), ("two years", "2-year")]),
    ("X200 的售价和保修期是多少？", "X200 售价 1299 元。", ["Aurora X200 售价 1299 元。", "所有笔记本电脑均提供保修两年。"],
     [("1299 元", "一千二百九十九元"), ("保修两年",)]),
    ("Who answers nothing?", "", ["Some passage."], [("passage",)]),
]


def _judge(server: FakeChatServer, tmp_path: Path, **options: Any) -> Any:
    config = parse_judge_config(
        {"backend": "llm", "base_url": server.url, "model": "judge-1", "api_key_env": None, "max_retries": 0,
         "parse_retries": 1, **options}, "study.yaml",
    )
    return build_judge(config, BackendResources(cache_path=tmp_path / "calls.sqlite"))


def test_batched_verdicts_equal_per_keypoint_ones_with_one_request_per_side(tmp_path: Path) -> None:
    with FakeChatServer(keypoint_oracle_reply) as server:
        per_keypoint, batched = _judge(server, tmp_path / "a"), _judge(server, tmp_path / "b", batch_keypoints=True)
        single = [per_keypoint.judge(q, a, c, k, []) for q, a, c, k in CASES]
        sent = len(server.requests)
        both = [batched.judge(q, a, c, k, []) for q, a, c, k in CASES]
        batched_requests = len(server.requests) - sent
    assert both == single
    assert single[0] == [
        KeypointVerdict("supported", "supported", 'answer: "$1,299" | context: "$1,299"'),
        KeypointVerdict("absent", "supported", 'context: "16 GB"'),
        KeypointVerdict("absent", "supported", 'context: "two years"'),
    ]
    assert single[2] == [KeypointVerdict(None, "supported", 'context: "passage"', "empty_answer")]
    # per keypoint: 2 requests a keypoint (1 for the empty answer); batched: 2 a case (1 for the empty answer)
    assert sent == 2 * 3 + 2 * 2 + 1 and batched_requests == 2 + 2 + 1
    assert per_keypoint.requests_made.value == sent and batched.requests_made.value == batched_requests


def test_a_short_reply_is_repaired_for_the_missing_keypoints_only(tmp_path: Path) -> None:
    question, answer, contexts, keypoints = CASES[0]
    first = {"verdicts": [{"fact": 1, "verdict": "supported", "evidence": "$1,299"},
                          {"verdict": "absent", "evidence": "no number: never placed by position"},
                          {"fact": 3, "verdict": "maybe", "evidence": ""}]}
    second = {"verdicts": [{"fact": 2, "verdict": "contradicted", "evidence": "8 GB"},
                           {"fact": 1, "verdict": "absent", "evidence": "a second verdict for 1 is ignored"}]}
    with FakeChatServer(keypoint_oracle_reply) as server:
        server.script("ANSWER:", Reply(json.dumps(first)), Reply(json.dumps(second)))
        verdicts = _judge(server, tmp_path, batch_keypoints=True).judge(question, answer, contexts, keypoints, [])
        answer_requests = [r.body["messages"] for r in server.requests if "ANSWER:" in r.text]
    assert [v.answer for v in verdicts] == ["supported", "contradicted", None]
    assert verdicts[2] == KeypointVerdict(None, "supported", 'context: "two years"', "parse_failure")
    assert len(answer_requests) == 2  # parse_retries 1: one repair
    assert answer_requests[1][2] == {"role": "user", "content": fill(BATCH_REPAIR_PROMPT, missing="2, 3")}


@pytest.mark.parametrize("reply", ["I think all of them are supported.", '{"verdicts": "supported"}', "[]"])
def test_an_unusable_reply_records_every_keypoint_missing(tmp_path: Path, reply: str) -> None:
    question, answer, contexts, keypoints = CASES[0]
    with FakeChatServer(lambda body: reply) as server:
        verdicts = _judge(server, tmp_path, batch_keypoints=True).judge(question, answer, contexts, keypoints, [])
        assert len(server.requests) == 4  # two sides, each asked once and repaired once
    assert verdicts == [KeypointVerdict(None, None, "", "parse_failure")] * 3
