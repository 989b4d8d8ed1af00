"""Indexes (chunks → **indexes** → candidates): where embeddings are computed: the device, batch size and inference
backend of local models (``embedding:`` in a study file, see :mod:`tuner.embedding._inference`), OpenAI-compatible
embeddings endpoints as a backend, and the two encoders every model runs behind: :class:`BatchingEncoder` (a
service's concurrent questions in one forward pass) and :class:`CachedEncoder` (only texts no store holds are encoded).

An endpoint is named in ``embedding_model`` like any model, as ``openai:MODEL@BASE_URL``, e.g.
``openai:BAAI/bge-small-en-v1.5@http://127.0.0.1:8080/v1`` (TEI), ``openai:nomic-embed-text@http://127.0.0.1:11434/v1``
(Ollama). That name is what vectors are stored under, so the store keeps the vectors of each backend, model and
URL apart. A URL carries no credentials: the key, when the server wants one, is read from the environment
variable ``TUNER_EMBEDDING_API_KEY`` at run time and never stored.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np

from tuner.embedding._inference import BACKENDS, Backend
from tuner.embedding._stores import VectorStore, text_hash, vector_id
from tuner.embedding._types import Device, EmbeddingOptions, ModelEncoder
from tuner.llm import EmbeddingClient, LLMConfig
from tuner.errors import UserError
from tuner.progress import Task

DEFAULT_BATCH_SIZE: Mapping[str, int] = {"mps": 64, "cuda": 256, "endpoint": 64}
"""Texts per forward pass (local models on an accelerator, by device) or per request (endpoints) when ``batch_size``
is unset; on the CPU see ``DEFAULT_CPU_BATCH_SIZE``."""

DEFAULT_CPU_BATCH_SIZE: Mapping[str, int] = {"torch": 64, "onnx": 64, "onnx-int8": 32, "openvino": 64, "openvino-bf16": 64}
"""Texts per forward pass on the CPU by ``embedding.backend``, from the batch-size sweeps of bench/embed_throughput.py
(16/32/64/128 on 2 cores; bench/HISTORY.md): onnx-int8 runs 32 to 128 within 5% of each other and 16 about 15%
slower; the other backends gained nothing stable from 128 over 64 under the machine's varying load."""

API_KEY_ENV = "TUNER_EMBEDDING_API_KEY"

_ENDPOINT = re.compile(r"openai:(?P<model>[^@\s]+)@(?P<url>https?://\S+)")


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


_CLAIM_POLL = 0.05
"""Seconds a :class:`CachedEncoder` waits before looking again for vectors only other workers are encoding."""


@dataclass
class _Pending:
    """One caller's texts waiting in a :class:`BatchingEncoder`, and its vectors (or error) once run."""

    texts: list[str]
    prompt: str
    vectors: np.ndarray | None = None
    error: BaseException | None = None


class BatchingEncoder:
    """Joins the encode calls of concurrent threads into one forward pass of ``inner`` (a service's questions).

    A call of fewer than ``max_texts`` texts waits up to ``max_wait`` seconds for others, or until ``max_texts`` texts
    are queued; then the first caller to take the model encodes every queued text with its prompt in one
    ``inner.encode`` and each caller gets its own rows. A larger call, or any call with ``max_wait`` 0, runs alone at
    once. The vectors are ``inner``'s: a batch pads its texts to the longest, which moves a vector by float rounding
    only (under 1e-6), as sentence-transformers' own batching does. ``forward_passes`` counts calls of ``inner``."""

    def __init__(self, inner: ModelEncoder, max_wait: float = 0.003, max_texts: int = 32) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.max_wait = max_wait
        self.max_texts = max_texts
        self.forward_passes = 0
        self._queue: list[_Pending] = []
        self._queued = threading.Condition()
        self._model = threading.Lock()

    @property
    def vector_backend(self) -> str:
        return self.inner.vector_backend

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def batch_size(self) -> int:
        return self.inner.batch_size

    @property
    def texts_encoded(self) -> int:
        return self.inner.texts_encoded

    def configure(self, options: EmbeddingOptions) -> None:
        self.inner.configure(options)

    def encode(self, texts: Sequence[str], prompt: str = "") -> np.ndarray:
        if not texts or len(texts) >= self.max_texts or self.max_wait <= 0:
            with self._model:
                self.forward_passes += 1
                return self.inner.encode(texts, prompt)
        pending = _Pending(list(texts), prompt)
        deadline = time.monotonic() + self.max_wait
        with self._queued:
            self._queue.append(pending)
            self._queued.notify_all()
            while sum(len(p.texts) for p in self._queue) < self.max_texts and (left := deadline - time.monotonic()) > 0:
                self._queued.wait(left)
        with self._model:  # whoever held it ran its whole batch, so ours is either done or still queued
            if pending.vectors is None and pending.error is None:
                with self._queued:
                    batch = [p for p in self._queue if p.prompt == prompt]
                    self._queue = [p for p in self._queue if p.prompt != prompt]
                self._run(batch, prompt)
        if pending.error is not None:
            raise pending.error
        assert pending.vectors is not None
        return pending.vectors

    def _run(self, batch: list[_Pending], prompt: str) -> None:
        self.forward_passes += 1
        try:
            vectors = self.inner.encode([text for p in batch for text in p.texts], prompt)
        except BaseException as exc:  # every caller of the batch sees the failure, in its own thread
            for p in batch:
                p.error = exc
            return
        start = 0
        for p in batch:
            p.vectors, start = vectors[start : start + len(p.texts)], start + len(p.texts)


class CachedEncoder:
    """Wraps an encoder with a :class:`VectorStore`: only texts never seen with this model and prompt
    are encoded. ``prompt`` is put before every text this encoder encodes (see the module docs)."""

    def __init__(self, encoder: ModelEncoder, store: VectorStore, prompt: str = "") -> None:
        self.inner = encoder
        self.store = store
        self.model_id = encoder.model_id
        self.prompt = prompt

    @property
    def vector_id(self) -> str:
        """The id this encoder's vectors are stored under: model, prompt, and the backend when its vectors differ."""
        return vector_id(self.model_id, self.prompt, self.inner.vector_backend)

    def with_prompt(self, prompt: str) -> CachedEncoder:
        """This encoder with ``prompt`` instead of its own (same model, same store); itself when they agree."""
        return self if prompt == self.prompt else CachedEncoder(self.inner, self.store, prompt)

    @property
    def texts_encoded(self) -> int:
        return self.inner.texts_encoded

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts of ``texts`` that have no stored vector for this model and prompt yet."""
        distinct = {text_hash(t): t for t in texts}
        found = self.store.get_many(self.vector_id, sorted(distinct))
        return [t for h, t in distinct.items() if h not in found]

    def encode(self, texts: Sequence[str], task: Task | None = None, batch: int | None = None) -> np.ndarray:
        """Vectors for ``texts``; unseen texts are encoded and stored ``batch`` at a time (default: the encoder's
        batch size), ``task`` advancing per text.

        Each batch is claimed in the store first (:meth:`VectorStore.claim`): texts another worker is encoding at
        that moment are not encoded here; they are read once that worker has stored them, or claimed again later
        (and encoded here) if it stopped without storing them."""
        if not texts:
            return np.zeros((0, self.inner.dim), dtype=np.float32)
        batch = batch or self.inner.batch_size
        hashes = [text_hash(t) for t in texts]
        text_of = dict(zip(hashes, texts))
        found = self.store.get_many(self.vector_id, sorted(text_of))
        pending = [h for h in text_of if h not in found]
        while pending:
            part, pending = pending[:batch], pending[batch:]
            with self.store.claim(self.vector_id, part) as mine:
                stored = self.store.get_many(self.vector_id, part)  # what another worker stored since the first read
                todo = [h for h in part if h in mine and h not in stored]
                fresh = dict(zip(todo, self.inner.encode([text_of[h] for h in todo], self.prompt))) if todo else {}
                self.store.put_many(self.vector_id, fresh)
            found.update(stored)
            found.update(fresh)
            waiting = [h for h in part if h not in found]
            if task is not None:
                task.advance(len(part) - len(waiting))
            if len(waiting) == len(part) and not pending:
                time.sleep(_CLAIM_POLL)  # only other workers' texts are left: give them time to store them
            pending += waiting
        return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)

