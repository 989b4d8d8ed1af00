from __future__ import annotations

import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tuner.errors import UserError
from tuner.backends import BackendResources
from tuner.llm import (
    BackendError, CallCache, ChatClient, FatalBackendError, LLMConfig, TransientBackendError, Usage,
    map_concurrent,
)
from tuner.llm.testing import FakeChatServer, Failure, Reply, echo_reply


def config(server: FakeChatServer, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = dict(
        base_url=server.url, model="fake-1", api_key_env="TUNER_TEST_KEY", backoff_base=0.01, timeout=5.0
    )
    values.update(overrides)
    return LLMConfig(**values)


def ask(client: ChatClient, text: str) -> str:
    return client.complete([{"role": "user", "content": text}]).text


def test_reply_tokens_and_bearer_key(chat_server: FakeChatServer, api_key: str) -> None:
    client = ChatClient(config(chat_server))
    completion = client.complete([{"role": "user", "content": "two words"}])
    request = chat_server.requests[0]
    assert completion.text == echo_reply(request.body)
    assert (completion.prompt_tokens, completion.completion_tokens, completion.cached) == (2, 1, False)
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {api_key}"
    assert request.body["temperature"] == 0.0 and request.body["model"] == "fake-1"
    assert "seed" not in request.body


def test_429_then_success_is_retried(chat_server: FakeChatServer) -> None:
    chat_server.script("[[busy]]", Failure(429, retry_after=0.05), Reply("arrived"))
    client = ChatClient(config(chat_server))
    started = time.monotonic()
    assert ask(client, "[[busy]]") == "arrived"
    assert time.monotonic() - started >= 0.05  # Retry-After was honoured
    assert chat_server.count("[[busy]]") == 2
    assert client.usage.snapshot().retries == 1 and client.usage.snapshot().calls == 1


def test_500_then_success_is_retried(chat_server: FakeChatServer) -> None:
    chat_server.script("[[flaky]]", Failure(500), Failure(503), Reply("arrived"))
    client = ChatClient(config(chat_server))
    assert ask(client, "[[flaky]]") == "arrived"
    assert chat_server.count("[[flaky]]") == 3


def test_retries_run_out(chat_server: FakeChatServer) -> None:
    chat_server.script("[[down]]", Failure(502))
    client = ChatClient(config(chat_server, max_retries=2))
    with pytest.raises(BackendError, match="HTTP 502 .* after 3 attempts") as info:
        ask(client, "[[down]]")
    assert info.value.kind == "server" and not info.value.fatal
    assert isinstance(info.value, TransientBackendError) and not isinstance(info.value, UserError)
    assert chat_server.count("[[down]]") == 3
    assert client.usage.snapshot().failures == 1


def test_slow_reply_times_out_after_retries(chat_server: FakeChatServer) -> None:
    chat_server.script("[[slow]]", Reply("too late", delay=1.5))
    client = ChatClient(config(chat_server, timeout=0.3, max_retries=1))
    with pytest.raises(BackendError, match="timed out after 2 attempts") as info:
        ask(client, "[[slow]]")
    assert info.value.kind == "timeout"
    assert chat_server.count("[[slow]]") == 2


def test_client_error_is_not_retried_and_key_is_redacted(chat_server: FakeChatServer, api_key: str) -> None:
    chat_server.script("[[bad]]", Failure(400, f"invalid request for key {api_key}"))
    client = ChatClient(config(chat_server))
    with pytest.raises(BackendError) as info:
        ask(client, "[[bad]]")
    assert info.value.kind == "request" and chat_server.count("[[bad]]") == 1
    assert type(info.value) is BackendError  # neither transient (not retried) nor the user's to fix
    assert api_key not in str(info.value) and "***" in str(info.value)
    assert "\n" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None  # the raw error is not chained


def test_rejected_key_is_fatal(chat_server: FakeChatServer) -> None:
    chat_server.script("[[auth]]", Failure(401, "invalid api key"))
    with pytest.raises(BackendError, match="HTTP 401") as info:
        ask(ChatClient(config(chat_server)), "[[auth]]")
    assert info.value.fatal


def test_unreachable_endpoint_is_a_clear_fatal_error(chat_server: FakeChatServer, api_key: str) -> None:
    url = chat_server.url
    chat_server.__exit__()
    client = ChatClient(config(chat_server, base_url=url, max_retries=2))
    with pytest.raises(BackendError, match=r"connection failed .* after 3 attempts") as info:
        ask(client, "anyone there?")
    assert info.value.fatal and url in str(info.value)
    assert isinstance(info.value, FatalBackendError) and isinstance(info.value, UserError)  # retried while transient
    assert api_key not in str(info.value)


def test_missing_key_variable_names_it(chat_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TUNER_NO_SUCH_KEY", raising=False)
    with pytest.raises(UserError, match="TUNER_NO_SUCH_KEY"):
        ChatClient(config(chat_server, api_key_env="TUNER_NO_SUCH_KEY"))


def test_key_never_in_repr_config_or_cache(chat_server: FakeChatServer, api_key: str, tmp_path: Path) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    client = ChatClient(config(chat_server), cache)
    ask(client, "hello")
    for text in (repr(client), repr(client.config), client.config.model_dump_json(), repr(cache)):
        assert api_key not in text
    cache.close()
    with sqlite3.connect(tmp_path / "calls.sqlite") as conn:
        rows = conn.execute("SELECT * FROM calls").fetchall()
    assert len(rows) == 1 and api_key not in repr(rows)
    assert api_key.encode() not in (tmp_path / "calls.sqlite").read_bytes()


def test_cache_makes_repeat_requests_free(chat_server: FakeChatServer, tmp_path: Path) -> None:
    usage = Usage()
    cache = CallCache(tmp_path / "calls.sqlite")
    client = ChatClient(config(chat_server), cache, usage)
    first = client.complete([{"role": "user", "content": "cache me"}])
    second = client.complete([{"role": "user", "content": "cache me"}])
    assert chat_server.count("cache me") == 1
    assert second.cached and not first.cached and second.text == first.text
    assert (second.prompt_tokens, second.completion_tokens) == (first.prompt_tokens, first.completion_tokens)
    counts = usage.snapshot()
    assert (counts.calls, counts.cache_hits, counts.prompt_tokens) == (1, 1, 2)

    # A new process (new client, new connection) on the same file is served from disk too.
    reopened = ChatClient(config(chat_server), CallCache(tmp_path / "calls.sqlite"))
    assert ask(reopened, "cache me") == first.text and chat_server.count("cache me") == 1


@pytest.mark.parametrize("change", [{"seed": 7}, {"temperature": 0.7}, {"max_tokens": 9}, {"model": "fake-2"}])
def test_any_request_parameter_changes_the_key(
    chat_server: FakeChatServer, tmp_path: Path, change: dict[str, Any]
) -> None:
    cache = CallCache(tmp_path / "calls.sqlite")
    base = ask(ChatClient(config(chat_server), cache), "same words")
    changed = ask(ChatClient(config(chat_server, **change), cache), "same words")
    assert chat_server.count("same words") == 2 and changed != base
    assert ask(ChatClient(config(chat_server, **change), cache), "same words") == changed
    assert chat_server.count("same words") == 2 and len(cache) == 2


def test_seed_is_sent_when_set(chat_server: FakeChatServer) -> None:
    ask(ChatClient(config(chat_server, seed=11, temperature=0.5)), "seeded")
    assert chat_server.requests[0].body["seed"] == 11 and chat_server.requests[0].body["temperature"] == 0.5


def test_cache_can_be_switched_off(chat_server: FakeChatServer, tmp_path: Path) -> None:
    resources = BackendResources(cache_path=tmp_path / "calls.sqlite")
    client = resources.chat_client(config(chat_server, cache=False))
    ask(client, "fresh")
    ask(client, "fresh")
    assert chat_server.count("fresh") == 2


def test_concurrency_is_capped_by_the_client(chat_server: FakeChatServer) -> None:
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    def slow_echo(body: dict[str, Any]) -> str:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        return echo_reply(body)

    chat_server.responder = slow_echo
    client = ChatClient(config(chat_server, concurrency=3))
    texts = map_concurrent(lambda i: ask(client, f"item {i}"), range(12), limit=12)
    assert len(set(texts)) == 12 and peak == 3 and client.usage.snapshot().calls == 12


def test_a_request_cut_off_by_a_dying_client_is_not_received(chat_server: FakeChatServer) -> None:
    host, port = chat_server.url.removeprefix("http://").split("/", 1)[0].split(":")
    with socket.create_connection((host, int(port))) as conn:  # headers sent, then the client dies before its body
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 200\r\n\r\n")
    time.sleep(0.3)  # the server's handler thread reads the end of that connection
    assert ask(ChatClient(config(chat_server, api_key_env=None)), "whole")
    assert [r.text for r in chat_server.requests] == ["whole"]
