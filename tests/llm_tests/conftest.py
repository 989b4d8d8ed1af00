from __future__ import annotations

from collections.abc import Iterator

import pytest

from tuner.llm.testing import FakeChatServer


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A recognizable fake key in $TUNER_TEST_KEY, so tests can search for leaks of it."""
    key = "sk-test-SECRET-4c1f9e"
    monkeypatch.setenv("TUNER_TEST_KEY", key)
    return key


@pytest.fixture
def chat_server(api_key: str) -> Iterator[FakeChatServer]:
    """A real OpenAI-compatible HTTP server on loopback, for clients configured with $TUNER_TEST_KEY."""
    with FakeChatServer() as server:
        yield server
