"""LLM plumbing (indexes → **embeddings endpoint**): a client for ``POST /embeddings`` of any OpenAI-compatible server
(TEI, vLLM, Ollama, hosted APIs), with the chat client's key handling, concurrency cap and retries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tuner.errors import BackendError, MalformedReply
from tuner.llm._client import EndpointClient, reply_object, whole_number


class EmbeddingClient(EndpointClient):
    """One request per :meth:`embed` call; vectors come back in input order, as float32, not normalized."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        inputs = list(texts)
        payload = self._send_with_retries(lambda: self._vectors(inputs))
        rows = sorted(payload["data"], key=lambda row: row["index"])
        if [row["index"] for row in rows] != list(range(len(inputs))):
            self.usage.add(failures=1)
            raise BackendError(
                "bad_response",
                f"{self.config.model} at {self.config.base_url}: {len(rows)} vectors for {len(inputs)} texts",
            )
        usage = payload.get("usage")
        self.usage.add(calls=1, prompt_tokens=whole_number(usage.get("prompt_tokens")) if isinstance(usage, dict) else 0)
        return np.asarray([row["embedding"] for row in rows], dtype=np.float32)

    def _vectors(self, inputs: list[str]) -> dict[str, Any]:
        """The reply to one request, checked to be an embeddings reply (a ``data`` list of rows with an integer
        ``index`` and a list ``embedding``): anything else is a :class:`MalformedReply`, retried like a 5xx."""
        raw = self._client.embeddings.with_raw_response.create(
            model=self.config.model, input=inputs, encoding_format="float", extra_body=self.config.extra_body or None
        )
        payload = reply_object(raw.http_response.content, raw.headers.get("content-type", ""))
        data = payload.get("data")
        if not isinstance(data, list) or not all(
            isinstance(row, dict) and whole_number(row.get("index"), -1) >= 0 and isinstance(row.get("embedding"), list) for row in data
        ):
            raise MalformedReply("HTTP 200 but no 'data' list of indexed embeddings in the reply")
        return payload

