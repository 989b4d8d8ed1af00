"""Judge prompts put what repeats first (issue 23 §2): the instructions, then the judged text, the fact last, so a
provider's prefix cache serves the repeated part of a case's later keypoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.generation import format_contexts
from tuner.judging import build_judge, parse_judge_config
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer, PrefixCache

CONTEXTS = ["The Aurora X200 laptop costs $1,299 and ships with 16 GB of memory.", "All laptops carry a 2-year warranty."]
KEYPOINTS = [("$1,299",), ("16 GB",), ("2-year",)]


@pytest.mark.parametrize("question", ["What does the X200 cost and how long is its warranty?", "X200 的售价和保修期是多少？"])
def test_the_keypoints_of_one_case_share_everything_but_the_fact_and_the_cache_serves_it(question: str, tmp_path: Path) -> None:
    with FakeChatServer(lambda body: '{"verdict": "absent", "evidence": ""}', prefix_cache=PrefixCache(block=1)) as server:
        config = parse_judge_config({"backend": "llm", "base_url": server.url, "model": "m", "api_key_env": None}, "study.yaml")
        resources = BackendResources(cache_path=tmp_path / "calls.sqlite")
        judge = build_judge(config, resources)
        judge.judge(question, "It costs $1,299.", CONTEXTS, KEYPOINTS, [])
        prompts = [r.body["messages"][0]["content"] for r in server.requests]
    passages = format_contexts(CONTEXTS)
    on_passages = [p for p in prompts if passages in p]
    on_answer = [p for p in prompts if passages not in p]
    assert len(on_passages) == len(on_answer) == 3
    for group in (on_passages, on_answer):
        stems = {p[: p.index(question)] for p in group}  # instructions and the judged text, before anything that varies
        facts = {k[0] for k in KEYPOINTS if any(p.endswith(f'"{k[0]}"') for p in group)}  # the fact comes last
        assert len(stems) == 1 and facts == {k[0] for k in KEYPOINTS}
    assert prompts[0].index(passages if passages in prompts[0] else "It costs") < prompts[0].index(question)
    usage = resources.usage.snapshot()
    # with one-word blocks each later prompt of a side is served up to its fact: everything but the last words
    repeated = sum(len(p[: p.index(question)].split()) for p in on_passages[1:] + on_answer[1:])
    assert usage.cached_tokens >= repeated > 0
