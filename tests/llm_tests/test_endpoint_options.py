"""Options real endpoints need, sent over real HTTP to the loopback server: headers, query, body, the token-limit
parameter, a JSON-schema response format, and Retry-After as milliseconds or an HTTP date."""

from __future__ import annotations

import json
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from tuner.judging import VERDICT_SCHEMA, build_judge, parse_judge_config
from tuner.llm import CallCache, ChatClient, LLMConfig
from tuner.backends import BackendResources
from tuner.llm._client import retry_after_seconds
from tuner.llm.testing import FakeChatServer, Failure, Reply


def _client(server: FakeChatServer, cache: CallCache | None = None, **options: Any) -> ChatClient:
    return ChatClient(LLMConfig(base_url=server.url, model="m", api_key_env=None, backoff_base=0.0, **options), cache)


def test_headers_query_body_and_token_limit_reach_the_endpoint(chat_server: FakeChatServer, tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    client = _client(
        chat_server, cache, extra_headers={"x-gateway-token": "s3cret"}, default_query={"api-version": "2024-10-21"},
        extra_body={"enable_thinking": False}, token_limit="max_completion_tokens", max_tokens=64,
    )
    client.complete([{"role": "user", "content": "hello"}])
    sent = chat_server.requests[0]
    assert sent.path == "/v1/chat/completions?api-version=2024-10-21"
    assert sent.headers["x-gateway-token"] == "s3cret"
    assert sent.body["enable_thinking"] is False
    assert sent.body["max_completion_tokens"] == 64 and "max_tokens" not in sent.body
    # the header may be a credential: it is in no cache row, while every option that changes the reply is
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("calls.sqlite*"))  # the database and its WAL
    assert b"s3cret" not in stored and b"enable_thinking" in stored and b"2024-10-21" in stored


def test_default_options_keep_the_cache_key_of_before(chat_server: FakeChatServer) -> None:
    request = _client(chat_server).request([{"role": "user", "content": "hi"}])
    assert set(request) == {"base_url", "model", "messages", "temperature", "seed", "max_tokens"}


def test_the_judge_can_ask_for_a_json_schema_and_still_parses_the_reply(chat_server: FakeChatServer) -> None:
    chat_server.script("", Reply(json.dumps({"verdict": "supported", "evidence": "30 days"})))
    config = parse_judge_config({"backend": "llm", "base_url": chat_server.url, "model": "m", "api_key_env": None,
                                 "json_schema": True}, "test")
    judge = build_judge(config, BackendResources(cache_path=None))
    verdicts = judge.judge("How long?", "Within 30 days.", ["Returns within 30 days."], [("30 days",)], [])
    assert verdicts[0].answer == "supported" and verdicts[0].context == "supported"
    assert all(r.body["response_format"] == VERDICT_SCHEMA for r in chat_server.requests)
    assert VERDICT_SCHEMA["json_schema"]["schema"]["properties"]["verdict"]["enum"] == ["supported", "contradicted", "absent"]


@pytest.mark.parametrize(
    ("headers", "wait"),
    [({"retry-after-ms": "250"}, 0.25), ({"retry-after": "3"}, 3.0), ({"retry-after": "soon"}, 0.0), ({}, 0.0)],
)
def test_retry_after_forms(headers: dict[str, str], wait: float) -> None:
    assert retry_after_seconds(headers) == pytest.approx(wait)


def test_retry_after_as_an_http_date_is_honoured(chat_server: FakeChatServer) -> None:
    later = formatdate(time.time() + 1.2, usegmt=True)  # one to two seconds from now (whole seconds)
    chat_server.script("[[busy]]", Failure(429, headers=(("retry-after", later),)), Reply("ok"))
    start = time.monotonic()
    assert _client(chat_server, max_retries=1).complete([{"role": "user", "content": "[[busy]]"}]).text == "ok"
    assert time.monotonic() - start >= 0.2  # waited for the date, not the 0 s backoff
    assert retry_after_seconds({"retry-after": formatdate(0, usegmt=True)}) == 0.0  # a date in the past: no wait
