"""LLM plumbing (answers, verdicts → **chat endpoint**): connection and sampling settings for one OpenAI-compatible chat
endpoint."""

from __future__ import annotations

from pathlib import Path

from typing import Any, Literal

from pydantic import Field, ValidationError

from tuner.errors import UserError, describe_validation_error
from tuner.io import read_yaml_mapping
from tuner.llm._pricing import Pricing
from tuner.strict import StrictModel


class LLMConfig(StrictModel):
    """Where and how to call a chat-completions endpoint.

    The API key is never part of the configuration: ``api_key_env`` names the environment variable
    that holds it (``null`` for local servers that need no key). ``timeout`` is per request in
    seconds; a failed request is retried ``max_retries`` times, waiting ``backoff_base * 2**attempt``
    seconds (or the server's ``Retry-After``, whichever is longer). ``concurrency`` caps requests in
    flight from one client. ``cache`` stores every reply on disk, so a repeated request costs nothing;
    to draw a fresh sample at ``temperature > 0`` change ``seed`` (it is part of the cache key).

    Example::

        LLMConfig(base_url="http://127.0.0.1:8000/v1", model="qwen2.5-7b-instruct", api_key_env=None)
    """

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = Field("OPENAI_API_KEY", min_length=1)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    seed: int | None = None
    max_tokens: int = Field(512, ge=1)
    timeout: float = Field(60.0, gt=0.0)
    concurrency: int = Field(4, ge=1, le=256)
    max_retries: int = Field(3, ge=0, le=20)
    backoff_base: float = Field(1.0, ge=0.0)
    cache: bool = True
    token_limit: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """The request parameter that carries ``max_tokens``: reasoning models reject ``max_tokens`` and want
    ``max_completion_tokens``."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    """Sent with every request and never stored (the call cache, logs and exports leave them out): headers are
    where gateways put credentials; still, prefer ``api_key_env`` for the key."""
    default_query: dict[str, str] = Field(default_factory=dict)
    """Query parameters of every request, e.g. Azure's ``{api-version: 2024-10-21}``."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra JSON fields of every request body (provider options such as ``top_k`` or ``enable_thinking``);
    part of the cache key, since they change the reply."""
    pricing: Pricing | None = None
    """Prices per million tokens (input, cached input, output) that ``--dry-run``, the progress line, ``tuner trials``,
    the report and ``budget.max_cost`` turn tokens into money with; not part of the cache key."""


def load_llm_config(path: str | Path) -> LLMConfig:
    """An :class:`LLMConfig` from a YAML mapping (``base_url``, ``model``, ``api_key_env``, ...); a bad key or
    value is one line naming the file and the key."""
    data = read_yaml_mapping(path, "an LLM endpoint config with base_url and model")
    try:
        return LLMConfig(**data)
    except ValidationError as exc:
        raise UserError(f"{path}: {describe_validation_error(exc)}") from None
