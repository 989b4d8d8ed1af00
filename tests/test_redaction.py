"""The one redaction of credentials (tuner/redaction.py): URL userinfo, query strings, messages, JSON-like data."""

from __future__ import annotations


import pytest

from tuner.redaction import redact, redact_data


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a token carried as the user name of a web URL, no password
        ("https://sk-abc@host/v1", "https://***@host/v1"),
        ("base_url http://sk-abc@127.0.0.1:8080/v1/ failed", "base_url http://***@127.0.0.1:8080/v1/ failed"),
        ("wss://tok123@stream.example.com", "wss://***@stream.example.com"),
        ("HTTPS://SK-ABC@HOST", "HTTPS://***@HOST"),
        # user and password: the password goes, the user stays
        ("https://user:pw@host/v1", "https://user:***@host/v1"),
        ("postgresql://tuner:pw@db:5432/test", "postgresql://tuner:***@db:5432/test"),
        # a database URL's lone user name is who connects: kept, so the URL can still be used
        ("postgresql://tuner@db/test", "postgresql://tuner@db/test"),
        # no userinfo: nothing changes (an @ in the path or in prose is not a user name)
        ("https://host/v1/users/@me", "https://host/v1/users/@me"),
        ("recall@k 0.8 at https://host/v1", "recall@k 0.8 at https://host/v1"),
        ("openai:nomic-embed-text@http://127.0.0.1:11434/v1", "openai:nomic-embed-text@http://127.0.0.1:11434/v1"),
    ],
)
def test_url_userinfo(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_web_url_token_user_is_redacted_inside_data_too() -> None:
    assert redact_data({"base_url": "https://sk-abc@host/v1", "urls": ["http://tok@h"]}) == {
        "base_url": "https://***@host/v1", "urls": ["http://***@h"],
    }
