"""External knowledge (retrieval ⇄ **a retrieval service**): a service that speaks the contract, as a study file's
``engine: {backend: external, ...}`` or ``tuner eval --external`` names it (:class:`ExternalConfig`), validated at the
edge; apart from the client that asks it (``_client``), so that the ``external`` engine is parsed (every command line
builds the ``--engine`` flags) without loading the client, the contract or tuner's indexes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from tuner.redaction import redact
from tuner.strict import StrictModel

API_KEY_VARIABLE = "TUNER_EXTERNAL_API_KEY"
"""Where ``tuner eval --external`` and a study's ``retriever: {backend: external}`` read the service's key by default."""


class ExternalConfig(StrictModel):
    """A retrieval service that speaks the contract (a study file's ``retriever:``): ``url`` is the endpoint Dify would
    be given (``/retrieval`` is appended: RAGFlow's is ``http://HOST/api/v1/dify``), ``knowledge_id`` the knowledge
    base there, the key in the environment variable ``api_key_env`` (never in a file). ``match`` says how a record
    is matched to a golden document: ``metadata.<key>`` (default ``metadata.doc_id``, what RAGFlow and ``tuner serve``
    send), ``title``, or ``content`` (the document whose text contains the record's content). At most ``concurrency``
    requests are in flight; a failed one is retried ``max_retries`` times (429, 5xx, timeouts, lost connections), each
    attempt waiting at most ``timeout`` seconds for the service, and all of them together, waits included, ending by
    ``deadline`` seconds after the request was sent. A reply is read up to ``max_reply_mb``: a longer one is a failed
    request (not retried); of a reply with more records than ``top_k`` the ``top_k`` best by score are kept and the
    rest counted as dropped (:attr:`ExternalClient.dropped`)."""

    backend: Literal["external"] = "external"
    url: str = Field(min_length=1)
    knowledge_id: str = Field(min_length=1)
    api_key_env: str | None = Field(API_KEY_VARIABLE, min_length=1)
    match: str = "metadata.doc_id"
    timeout: float = Field(30.0, gt=0.0)
    deadline: float = Field(60.0, gt=0.0, description="seconds one request may take, all its attempts and waits included")
    max_reply_mb: float = Field(8.0, gt=0.0, description="the most of a reply read; a longer reply is refused")
    concurrency: int = Field(8, ge=1, le=256)
    max_retries: int = Field(3, ge=0, le=20)
    backoff_base: float = Field(0.5, ge=0.0)
    cache: bool = True

    def described(self) -> dict[str, Any]:
        """What a study records and its report shows of the service: no key (``api_key_env`` is only a variable's
        name), credentials in the URL redacted."""
        return {"backend": self.backend, "url": redact(self.url), "knowledge_id": self.knowledge_id,
                "api_key_env": self.api_key_env, "match": self.match,
                "searched": "top_k, score_threshold",
                "v3": "conflicts injected into the context the service returned (hard_mode: inject)"}

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {redact(url)!r}")
        return url.rstrip("/")

    @field_validator("match")
    @classmethod
    def _known_match(cls, match: str) -> str:
        if match not in ("title", "content") and not (match.startswith("metadata.") and len(match) > len("metadata.")):
            raise ValueError(f"must be metadata.<key>, title or content, got {match!r}")
        return match
