"""Indexes (chunks → **indexes** → candidates): what an encoder is: the two protocols every encoder of the package
implements, apart from any model, store or option code (the other modules import this one, never the reverse)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from tuner.embedding._encoders import EmbeddingOptions


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
