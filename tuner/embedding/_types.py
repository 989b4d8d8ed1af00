"""Indexes (chunks → **indexes** → candidates): what an encoder is: the two protocols every encoder of the package
implements and the options it is configured with (:class:`EmbeddingOptions`), apart from any model or store code
(the other modules import this one, never the reverse)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np
from pydantic import Field

from tuner.embedding._inference import Backend
from tuner.strict import StrictModel

Device = Literal["auto", "cpu", "cuda", "mps"]


class EmbeddingOptions(StrictModel):
    """How embeddings are computed. Device and batch size do not change which vectors a model gives; a backend
    whose vectors differ from torch's (``onnx-int8``, ``openvino-bf16``) is part of the id vectors are stored under
    (:func:`tuner.embedding.vector_id`), so every cache key over vectors follows it."""

    device: Device = Field("auto", description="auto = cuda, else mps, else cpu")
    batch_size: int | None = Field(None, ge=1, le=65536, description="unset: per device and backend (default_batch_size)")
    backend: Backend = Field("torch", description="what runs the model: torch (fp32 reference), onnx, onnx-int8, openvino, "
                             "openvino-bf16, or auto (the fastest installed one whose vectors agree with torch's)")


class Encoder(Protocol):
    """Maps texts to L2-normalized float32 vectors, shape ``(len(texts), dim)``."""

    model_id: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class ModelEncoder(Protocol):
    """What runs a model for a :class:`CachedEncoder`: a local model, an endpoint, or a :class:`BatchingEncoder`."""

    model_id: str

    @property
    def vector_backend(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def batch_size(self) -> int: ...

    @property
    def texts_encoded(self) -> int: ...

    def configure(self, options: EmbeddingOptions) -> None: ...

    def encode(self, texts: Sequence[str], prompt: str = "") -> np.ndarray: ...
