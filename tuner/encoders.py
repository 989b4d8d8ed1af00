"""Indexes (chunks → **indexes** → candidates): where embeddings are computed: the device, batch size and inference
backend of local models (``embedding:`` in a study file, see :mod:`tuner.inference`), and OpenAI-compatible
embeddings endpoints as a backend.

An endpoint is named in ``embedding_model`` like any model, as ``openai:MODEL@BASE_URL``, e.g.
``openai:BAAI/bge-small-en-v1.5@http://127.0.0.1:8080/v1`` (TEI), ``openai:nomic-embed-text@http://127.0.0.1:11434/v1``
(Ollama). That name is what vectors are stored under, so the store keeps the vectors of each backend, model and
URL apart. A URL carries no credentials: the key, when the server wants one, is read from the environment
variable ``TUNER_EMBEDDING_API_KEY`` at run time and never stored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tuner.errors import UserError
from tuner.inference import BACKENDS, Backend
from tuner.llm import EmbeddingClient, LLMConfig

Device = Literal["auto", "cpu", "cuda", "mps"]

DEFAULT_BATCH_SIZE: Mapping[str, int] = {"mps": 64, "cuda": 256, "endpoint": 64}
"""Texts per forward pass (local models on an accelerator, by device) or per request (endpoints) when ``batch_size``
is unset; on the CPU see ``DEFAULT_CPU_BATCH_SIZE``."""

DEFAULT_CPU_BATCH_SIZE: Mapping[str, int] = {"torch": 64, "onnx": 64, "onnx-int8": 32, "openvino": 64, "openvino-bf16": 64}
"""Texts per forward pass on the CPU by ``embedding.backend``, from the batch-size sweeps of bench/embed_throughput.py
(16/32/64/128 on 2 cores; bench/RESULTS.md): onnx-int8 runs 32 to 128 within 5% of each other and 16 about 15%
slower; the other backends gained nothing stable from 128 over 64 under the machine's varying load."""

API_KEY_ENV = "TUNER_EMBEDDING_API_KEY"

_ENDPOINT = re.compile(r"openai:(?P<model>[^@\s]+)@(?P<url>https?://\S+)")


class EmbeddingOptions(BaseModel):
    """How embeddings are computed. Device and batch size do not change which vectors a model gives; a backend
    whose vectors differ from torch's (``onnx-int8``, ``openvino-bf16``) is part of the id vectors are stored under
    (:func:`tuner.embedding.vector_id`), so every cache key over vectors follows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    device: Device = Field("auto", description="auto = cuda, else mps, else cpu")
    batch_size: int | None = Field(None, ge=1, le=65536, description="unset: per device and backend (default_batch_size)")
    backend: Backend = Field("torch", description="what runs the model: torch (fp32 reference), onnx, onnx-int8, openvino, "
                             "openvino-bf16, or auto (the fastest installed one whose vectors agree with torch's)")


def default_batch_size(device: str, backend: str) -> int:
    """Texts per forward pass when ``batch_size`` is unset: by backend on the CPU, by device for torch elsewhere."""
    return DEFAULT_CPU_BATCH_SIZE[backend] if device == "cpu" else DEFAULT_BATCH_SIZE[device]


def available_devices() -> dict[str, bool]:
    """Which accelerators torch can use on this machine."""
    import torch

    return {"cuda": torch.cuda.is_available(), "mps": torch.backends.mps.is_available()}


def select_device(
    requested: Device, available: Mapping[str, bool], backend: Backend = "torch", where: str = "embedding.device"
) -> str:
    """The device for ``requested``: ``auto`` takes CUDA, else MPS, else the CPU; a named accelerator that
    ``available`` lacks is a user error naming ``where`` the value came from (it would otherwise fail deep inside
    torch). The exported backends run on the CPU (onnxruntime and openvino as installed by ``tuner[fast]``): ``auto``
    is the CPU for them and an accelerator is refused. Backend ``auto`` selects like torch (off the CPU it is torch).

    >>> select_device("auto", {"cuda": False, "mps": True})
    'mps'
    >>> select_device("auto", {"cuda": True, "mps": False}, "onnx-int8")
    'cpu'
    """
    if backend != "auto" and BACKENDS[backend].runtime != "torch":
        if requested not in ("auto", "cpu"):
            raise UserError(f"{where}: {requested} with embedding.backend {backend}: that backend runs on the CPU; "
                            "use backend: torch on an accelerator")
        return "cpu"
    if requested == "auto":
        return next((name for name in ("cuda", "mps") if available.get(name)), "cpu")
    if requested != "cpu" and not available.get(requested):
        found = ", ".join(name for name, ok in available.items() if ok) or "none"
        raise UserError(f"{where}: {requested} is not available on this machine (accelerators found: {found})")
    return requested


@dataclass(frozen=True)
class EndpointSpec:
    model: str
    base_url: str

    @property
    def name(self) -> str:
        """The ``embedding_model`` value of this endpoint, normalized (what vectors are stored under)."""
        return f"openai:{self.model}@{self.base_url}"


def parse_endpoint(name: str) -> EndpointSpec | None:
    """The endpoint an ``embedding_model`` value names, or None for a local model.

    >>> parse_endpoint("openai:nomic-embed-text@http://127.0.0.1:11434/v1/")
    EndpointSpec(model='nomic-embed-text', base_url='http://127.0.0.1:11434/v1')
    """
    if not name.startswith("openai:"):
        return None
    match = _ENDPOINT.fullmatch(name)
    if match is None:
        raise UserError(f"embedding_model {name!r}: an endpoint is written openai:MODEL@http(s)://HOST[:PORT]/PATH")
    url = match["url"].rstrip("/")
    if urlsplit(url).password is not None or "@" in urlsplit(url).netloc:
        raise UserError(f"embedding_model: put no credentials in the URL; the key is read from {API_KEY_ENV}")
    return EndpointSpec(match["model"], url)


def served_model(name: str) -> str:
    """The model an ``embedding_model`` value runs: the served model of an endpoint, else ``name`` itself
    (for prompt presets and the tokenizer of ``chunk_unit: tokens``)."""
    spec = parse_endpoint(name)
    return spec.model if spec is not None else name


class EndpointEncoder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint, ``batch_size`` texts per request, L2-normalized
    here (servers differ in whether they normalize); ``texts_encoded`` counts texts sent."""

    def __init__(
        self, spec: EndpointSpec, options: EmbeddingOptions, timeout: float = 60.0, max_retries: int = 3,
        backoff_base: float = 1.0,
    ) -> None:
        self.model_id = spec.name
        self.spec = spec
        self.texts_encoded = 0
        self.batch_size = DEFAULT_BATCH_SIZE["endpoint"]
        self.vector_backend = ""  # an endpoint's vectors are its model's, whatever serves them
        self._dim: int | None = None
        self.configure(options)
        key_env = API_KEY_ENV if os.environ.get(API_KEY_ENV, "").strip() else None
        config = LLMConfig(
            base_url=spec.base_url, model=spec.model, api_key_env=key_env, timeout=timeout, max_retries=max_retries,
            backoff_base=backoff_base, cache=False,
        )
        self.client = EmbeddingClient(config)

    def configure(self, options: EmbeddingOptions) -> None:
        """Take ``options``' batch size (the device and the inference backend are the server's business)."""
        self.batch_size = options.batch_size or DEFAULT_BATCH_SIZE["endpoint"]

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.encode(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def encode(self, texts: Sequence[str], prompt: str = "") -> np.ndarray:
        """Normalized vectors of ``texts``, each sent with ``prompt`` before it (none when empty)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = [prompt + text for text in texts[start : start + self.batch_size]]
            parts.append(self.client.embed(batch))
            self.texts_encoded += len(batch)
        vectors = np.concatenate(parts)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if vectors.ndim != 2 or not np.all(norms > 0):
            raise UserError(f"embedding endpoint {self.spec.name}: returned an empty or zero vector")
        self._dim = int(vectors.shape[1])
        return np.asarray(vectors / norms, dtype=np.float32)
