"""The OpenAI generator with Chinese questions, over the loopback server: the prompt is in the question's
language and carries the question and passages intact; a Chinese reply and a Chinese abstention come back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tuner.generation import (
    ABSTAIN_ZH,
    DEFAULT_PROMPT_TEMPLATE,
    ZH_PROMPT_TEMPLATE,
    Answer,
    build_generator,
    parse_generator_config,
    prompt_language,
    render_prompt,
)
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer, Reply
from tuner.metrics import rejected

QUESTION = "Aurora X200 笔记本电脑的售价是多少？"
CONTEXTS = ["二手 X200：900 元。", "Aurora X200 笔记本电脑售价 1299 元，配备 16 GB 内存。"]


def make(server: FakeChatServer, tmp_path: Path, **overrides: Any) -> Any:
    values: dict[str, Any] = dict(backend="openai", base_url=server.url, model="fake", api_key_env=None, max_retries=0)
    values.update(overrides)
    return build_generator(parse_generator_config(values, "study.yaml"), BackendResources(cache_path=tmp_path / "calls.sqlite"))


def test_chinese_question_gets_the_chinese_prompt_with_question_and_passages_intact(chat_server: FakeChatServer, tmp_path: Path) -> None:
    chat_server.script("1299 元", Reply("Aurora X200 售价 1299 元。"))
    answer = make(chat_server, tmp_path).generate(QUESTION, CONTEXTS)
    sent = chat_server.requests[0].body["messages"][0]["content"]
    assert sent == (
        "请只根据下面编号的上下文段落回答问题。如果段落中没有答案，请只回复“我不知道。”。"
        "用一到两句话回答，名称、数字和单位照段落原文写。\n\n"
        "上下文：\n[1] 二手 X200：900 元。\n\n[2] Aurora X200 笔记本电脑售价 1299 元，配备 16 GB 内存。\n\n"
        "问题：Aurora X200 笔记本电脑的售价是多少？\n回答："
    )
    assert sent == render_prompt(ZH_PROMPT_TEMPLATE, QUESTION, CONTEXTS)
    assert answer == Answer("Aurora X200 售价 1299 元。") and not rejected(answer.text)


def test_chinese_abstention_comes_back_as_a_rejection(chat_server: FakeChatServer, tmp_path: Path) -> None:
    chat_server.script("退货", Reply(ABSTAIN_ZH))
    answer = make(chat_server, tmp_path).generate("退货期限是多少天？", ["Mercury 路由器覆盖 200 平方米。"])
    assert answer == Answer("我不知道。") and rejected(answer.text)


def test_prompt_language_is_the_questions_unless_pinned(chat_server: FakeChatServer, tmp_path: Path) -> None:
    # "iPhone 15 的价格？": 3 CJK ideographs among 9 letters, a share of 0.33 ≥ 0.2
    assert prompt_language("iPhone 15 的价格？", "auto") == "zh"
    assert prompt_language("How much is the X200?", "auto") == "en"
    assert prompt_language("How much is the X200?", "zh") == "zh"
    make(chat_server, tmp_path, prompt_language="en").generate(QUESTION, CONTEXTS)
    assert chat_server.requests[0].body["messages"][0]["content"] == render_prompt(DEFAULT_PROMPT_TEMPLATE, QUESTION, CONTEXTS)


def test_a_configured_template_is_used_for_every_language(chat_server: FakeChatServer, tmp_path: Path) -> None:
    make(chat_server, tmp_path, prompt_template="Q={question}\nC={context}").generate(QUESTION, CONTEXTS[:1])
    assert chat_server.requests[0].body["messages"][0]["content"] == f"Q={QUESTION}\nC=[1] 二手 X200：900 元。"
