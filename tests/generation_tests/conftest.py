from __future__ import annotations

from collections.abc import Iterator

import pytest

from tuner.llm.testing import FakeChatServer


@pytest.fixture
def chat_server() -> Iterator[FakeChatServer]:
    """A real OpenAI-compatible HTTP server on loopback (configure clients with ``api_key_env=None``)."""
    with FakeChatServer() as server:
        yield server
