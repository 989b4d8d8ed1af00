"""LLM plumbing (indexes → **embeddings endpoint**): a client for ``POST /embeddings`` of any OpenAI-compatible server
(TEI, vLLM, Ollama, hosted APIs), with the chat client's key handling, concurrency cap and retries."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tuner.errors import BackendError
from tuner.llm._client import EndpointClient


class EmbeddingClient(EndpointClient):
    """One request per :meth:`embed` call; vectors come back in input order, as float32, not normalized."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        inputs = list(texts)
        response = self._send_with_retries(
            lambda: self._client.embeddings.create(
                model=self.config.model, input=inputs, encoding_format="float", extra_body=self.config.extra_body or None
            )
        )
        rows = sorted(response.data, key=lambda row: row.index)
        if [row.index for row in rows] != list(range(len(inputs))):
            self.usage.add(failures=1)
            raise BackendError(
                "bad_response",
                f"{self.config.model} at {self.config.base_url}: {len(rows)} vectors for {len(inputs)} texts",
            )
        usage = response.usage
        self.usage.add(calls=1, prompt_tokens=int(usage.prompt_tokens) if usage is not None else 0)
        return np.asarray([row.embedding for row in rows], dtype=np.float32)
