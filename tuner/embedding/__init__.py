"""Indexes (chunks → **indexes** → candidates): sentence embeddings: the models (offline only, on a device and an
inference backend), endpoints, the stores vectors are kept in, and the :class:`EmbeddingContext` a run embeds through.

- :mod:`._types`: the ``Encoder`` and ``ModelEncoder`` protocols (types only).
- :mod:`._encoders`: ``embedding:`` options (device, batch size, backend), endpoint encoders, the batching and
  caching encoders every model runs behind.
- :mod:`._models`: local sentence-transformers models, their prompts and their encoder.
- :mod:`._packaged`: models shipped inside a package of the default install (``multilingual-e5-small``), read once
  into a sentence-transformers folder in the cache and checked against the package's own engine.
- :mod:`._inference`: the inference backends of local models (ONNX export and int8 quantization, OpenVINO).
- :mod:`._stores`: the vector stores (SQLite, PostgreSQL, a service's) and the id vectors are stored under.
- :mod:`._context`: :class:`EmbeddingContext`, the encoders of one run.

torch and sentence-transformers load when a model is first used, never on import.
"""

from tuner.embedding._context import EmbeddingContext
from tuner.embedding._encoders import (
    API_KEY_ENV,
    BatchingEncoder,
    CachedEncoder,
    EndpointEncoder,
    available_devices,
    default_batch_size,
    parse_endpoint,
    select_device,
    served_model,
)
from tuner.embedding._inference import BACKENDS, Backend, InferenceBackend, quiet_model_loading
from tuner.embedding._models import SentenceTransformerEncoder, preset_prompts, resolve_model_path
from tuner.embedding._packaged import PACKAGED_MODELS, PackagedModel, packaged_model_path
from tuner.embedding._stores import STORE_FILE, EmbeddingStore, PostgresEmbeddingStore, ServingStore, VectorStore, vector_id
from tuner.embedding._types import EmbeddingOptions, Encoder, ModelEncoder

__all__ = [
    "API_KEY_ENV",
    "BACKENDS",
    "STORE_FILE",
    "Backend",
    "BatchingEncoder",
    "CachedEncoder",
    "EmbeddingContext",
    "EmbeddingOptions",
    "EmbeddingStore",
    "Encoder",
    "EndpointEncoder",
    "InferenceBackend",
    "PACKAGED_MODELS",
    "PackagedModel",
    "ModelEncoder",
    "PostgresEmbeddingStore",
    "SentenceTransformerEncoder",
    "ServingStore",
    "VectorStore",
    "available_devices",
    "default_batch_size",
    "packaged_model_path",
    "parse_endpoint",
    "preset_prompts",
    "quiet_model_loading",
    "resolve_model_path",
    "select_device",
    "served_model",
    "vector_id",
]
