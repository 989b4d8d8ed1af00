from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tuner.errors import UserError
from tuner.generation import (
    DEFAULT_PROMPT_TEMPLATE,
    Answer,
    OpenAIGeneratorConfig,
    build_generator,
    parse_generator_config,
    render_prompt,
)
from tuner.llm import BackendError
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer, Failure, Reply


def make(server: FakeChatServer, tmp_path: Path, **overrides: Any) -> tuple[Any, BackendResources]:
    resources = BackendResources(cache_path=tmp_path / "calls.sqlite")
    values: dict[str, Any] = dict(
        backend="openai", base_url=server.url, model="fake", api_key_env=None, backoff_base=0.01, max_retries=1
    )
    values.update(overrides)
    return build_generator(parse_generator_config(values, "study.yaml"), resources), resources


def test_prompt_numbers_contexts_in_order(chat_server: FakeChatServer, tmp_path: Path) -> None:
    generator, _ = make(chat_server, tmp_path)
    answer = generator.generate("How much is the X1?", ["Second-hand: $900.", "The X1 costs $1,299."])
    sent = chat_server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user"]
    assert sent[0]["content"] == render_prompt(
        DEFAULT_PROMPT_TEMPLATE, "How much is the X1?", ["Second-hand: $900.", "The X1 costs $1,299."]
    )
    assert "[1] Second-hand: $900.\n\n[2] The X1 costs $1,299." in sent[0]["content"]
    assert "I don't know." in sent[0]["content"]
    assert answer == Answer(chat_server.responder(chat_server.requests[0].body))


def test_custom_template_and_no_context(chat_server: FakeChatServer, tmp_path: Path) -> None:
    generator, _ = make(chat_server, tmp_path, prompt_template='Q={question} C={context} {"json": true}')
    generator.generate("why?", [])
    assert chat_server.requests[0].body["messages"][0]["content"] == 'Q=why? C=(no passages) {"json": true}'


def test_template_without_placeholders_is_rejected() -> None:
    with pytest.raises(UserError, match=r"study.yaml: generator.prompt_template: .*\{context\}"):
        parse_generator_config({"backend": "openai", "base_url": "u", "model": "m", "prompt_template": "{question}"}, "study.yaml")


def test_repeated_generation_is_served_from_the_cache(chat_server: FakeChatServer, tmp_path: Path) -> None:
    generator, resources = make(chat_server, tmp_path)
    first = generator.generate("q", ["c"])
    again, _ = make(chat_server, tmp_path)
    assert again.generate("q", ["c"]) == first
    assert chat_server.count() == 1
    assert resources.usage.snapshot().calls == 1


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        (Reply("late", delay=1.0), "timeout"),
        (Failure(500), "backend_error"),
        (Failure(400), "backend_error"),
        (Reply("   \n"), "empty_answer"),
    ],
)
def test_failures_become_missing_answers(
    chat_server: FakeChatServer, tmp_path: Path, behaviour: Any, reason: str
) -> None:
    chat_server.script("[[case]]", behaviour)
    generator, _ = make(chat_server, tmp_path, timeout=0.2)
    assert generator.generate("[[case]]", ["c"]) == Answer.missing(reason)


def test_rejected_key_stops_the_run(chat_server: FakeChatServer, tmp_path: Path) -> None:
    chat_server.script("[[case]]", Failure(401))
    generator, _ = make(chat_server, tmp_path)
    with pytest.raises(BackendError, match="401"):
        generator.generate("[[case]]", ["c"])


def test_answer_never_empty_without_reason() -> None:
    with pytest.raises(ValueError):
        Answer("")
    with pytest.raises(ValueError):
        Answer("text", "timeout")
    with pytest.raises(ValueError):
        Answer.missing("because")
    assert Answer.of("  ok ") == Answer("ok")


def test_config_is_a_pydantic_model_with_defaults() -> None:
    config = OpenAIGeneratorConfig(base_url="http://h/v1", model="m")
    assert config.temperature == 0.0 and config.prompt_template is None and config.prompt_language == "auto"
