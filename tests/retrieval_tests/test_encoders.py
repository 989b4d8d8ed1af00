"""Embedding backends: device selection, batch size, and an OpenAI-compatible /v1/embeddings endpoint served on loopback
by the real local model (a small TEI), so endpoint vectors can be compared with local ones."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tuner.embedding import (
    API_KEY_ENV, CachedEncoder, EmbeddingContext, EmbeddingOptions, EmbeddingStore, EndpointEncoder, parse_endpoint,
    preset_prompts, select_device, vector_id,
)
from tuner.errors import UserError
from tuner.llm import BackendError
from tuner.llm.testing import FakeChatServer, Failure, Reply

TEXTS = ["The river flooded in 1998.", "Paris is the capital of France.", "Bees make honey.", "A cat sat.", "Rain."]


@pytest.mark.parametrize(
    ("requested", "available", "chosen"),
    [
        ("auto", {"cuda": True, "mps": True}, "cuda"),
        ("auto", {"cuda": False, "mps": True}, "mps"),
        ("auto", {"cuda": False, "mps": False}, "cpu"),
        ("cpu", {"cuda": True, "mps": False}, "cpu"),
        ("cuda", {"cuda": True, "mps": False}, "cuda"),
        ("mps", {"cuda": False, "mps": True}, "mps"),
    ],
)
def test_device_selection(requested: str, available: dict[str, bool], chosen: str) -> None:
    assert select_device(requested, available) == chosen  # type: ignore[arg-type]


def test_a_named_accelerator_that_is_absent_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"embedding.device: cuda is not available .*found: mps"):
        select_device("cuda", {"cuda": False, "mps": True})


def test_batch_size_and_device_apply_to_a_loaded_model_and_do_not_change_vectors(
    embeddings: EmbeddingContext, encoder: CachedEncoder
) -> None:
    inner = encoder.inner
    before = inner.encode(TEXTS)
    try:
        embeddings.configure(EmbeddingOptions(device="cpu", batch_size=2))
        assert (inner.device, inner.batch_size) == ("cpu", 2)  # type: ignore[union-attr]
        assert np.allclose(inner.encode(TEXTS), before, atol=1e-5)
        embeddings.configure(EmbeddingOptions(device="cpu"))
        assert inner.batch_size == 64  # the CPU default
    finally:
        embeddings.configure(EmbeddingOptions())



def test_the_dimension_is_read_without_a_deprecation_warning(encoder: CachedEncoder) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # sentence-transformers 6 warns on get_sentence_embedding_dimension
        assert encoder.inner.dim == 384

@pytest.fixture
def embedding_server(encoder: CachedEncoder) -> Iterator[FakeChatServer]:
    """A real OpenAI-compatible embeddings server on loopback that embeds with the local MiniLM, unnormalized
    (scaled by 3), as some servers return vectors."""
    local = encoder.inner

    def embed(texts: list[str]) -> list[list[float]]:
        return (3.0 * local.encode(texts)).tolist()

    with FakeChatServer(embedder=embed) as server:
        yield server


def test_endpoint_names_are_parsed_and_refuse_credentials() -> None:
    spec = parse_endpoint("openai:BAAI/bge-small-en-v1.5@http://127.0.0.1:8080/v1/")
    assert spec is not None and spec.name == "openai:BAAI/bge-small-en-v1.5@http://127.0.0.1:8080/v1"
    assert parse_endpoint("all-MiniLM-L6-v2") is None
    with pytest.raises(UserError, match="no credentials"):
        parse_endpoint("openai:m@http://user:pw@127.0.0.1:8080/v1")
    with pytest.raises(UserError, match="openai:MODEL@"):
        parse_endpoint("openai:m")
    # prompt presets follow the served model, not the URL
    assert preset_prompts("openai:intfloat/e5-small-v2@http://127.0.0.1:1/v1") == ("query: ", "passage: ")


def test_endpoint_vectors_match_the_local_model_in_batches_with_prompt(
    embedding_server: FakeChatServer, encoder: CachedEncoder
) -> None:
    spec = parse_endpoint(f"openai:all-MiniLM-L6-v2@{embedding_server.url}")
    assert spec is not None
    remote = EndpointEncoder(spec, EmbeddingOptions(batch_size=2))
    vectors = remote.encode(TEXTS, prompt="query: ")
    assert len(embedding_server.requests) == 3  # 5 texts, 2 per request
    assert embedding_server.requests[0].path == "/v1/embeddings"
    assert embedding_server.requests[0].body["input"] == ["query: " + t for t in TEXTS[:2]]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # normalized here
    assert np.allclose(vectors, encoder.inner.encode(TEXTS, "query: "), atol=1e-5)
    assert remote.dim == 384 and remote.texts_encoded == 5


def test_endpoint_vectors_are_stored_per_backend_model_and_url_and_the_key_never(
    embedding_server: FakeChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-embed-SECRET-77"
    monkeypatch.setenv(API_KEY_ENV, key)
    name = f"openai:all-MiniLM-L6-v2@{embedding_server.url}"
    embeddings = EmbeddingContext()
    cached = embeddings.encoder(name, tmp_path)
    cached.encode(TEXTS)
    assert embedding_server.requests[0].headers["authorization"] == f"Bearer {key}"
    sent = len(embedding_server.requests)
    again = embeddings.encoder(name + "/", tmp_path)  # the same endpoint written with a trailing slash
    assert again is cached
    again.encode(TEXTS)
    assert len(embedding_server.requests) == sent  # answered from the store
    store_file = tmp_path / "embeddings.sqlite"
    ids = {row[0] for row in sqlite3.connect(store_file).execute("SELECT DISTINCT model FROM embeddings")}
    assert ids == {vector_id(name, "")}
    assert key.encode() not in b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    # the local model's vectors live under another key: one store, no mix-up
    assert EmbeddingStore(store_file).get_many("all-MiniLM-L6-v2", ["x"]) == {}


def test_endpoint_failures_are_retried_then_reported_without_the_key(
    embedding_server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-embed-SECRET-78"
    monkeypatch.setenv(API_KEY_ENV, key)
    spec = parse_endpoint(f"openai:all-MiniLM-L6-v2@{embedding_server.url}")
    assert spec is not None
    remote = EndpointEncoder(spec, EmbeddingOptions(), max_retries=2, backoff_base=0.01)
    embedding_server.script("[[busy]]", Failure(503), Reply("unused"))
    assert remote.encode(["[[busy]] once"]).shape == (1, 384)
    assert embedding_server.count("[[busy]]") == 2 and remote.client.usage.snapshot().retries == 1
    embedding_server.script("[[denied]]", Failure(401, message=f"bad key {key}"))
    with pytest.raises(BackendError) as raised:
        remote.encode(["[[denied]]"])
    assert raised.value.kind == "auth" and key not in str(raised.value)
