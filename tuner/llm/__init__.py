"""LLM plumbing (answers, verdicts → **chat endpoint**): what generators, judges, LLM corruption, ragas scoring and
endpoint embeddings share: endpoint config, chat and embeddings clients, call cache, reply parsing, usage counters and
concurrency. It imports no other part of the flow (the backend registry and resources are :mod:`tuner.backends`)."""

from tuner.errors import BackendError, ErrorKind, FatalBackendError, ReplyParseError, TransientBackendError
from tuner.llm._cache import CACHE_FILE, CachedReply, CallCache, CallStore, PostgresCallCache, request_key
from tuner.llm._client import ChatClient, Completion, EndpointClient, Message, read_key, require_key, retry_after_seconds, send_with_retries
from tuner.llm._concurrent import map_concurrent
from tuner.llm._config import LLMConfig, load_llm_config
from tuner.llm._embeddings import EmbeddingClient
from tuner.llm._pricing import Pricing
from tuner.llm._prompt import fill
from tuner.llm._reply import json_object, missing_reason_for, parse_structured
from tuner.llm._usage import RequestCount, Usage, UsageCounts

__all__ = [
    "CACHE_FILE",
    "BackendError",
    "CachedReply",
    "CallCache",
    "CallStore",
    "ChatClient",
    "Completion",
    "EmbeddingClient",
    "EndpointClient",
    "ErrorKind",
    "FatalBackendError",
    "LLMConfig",
    "Message",
    "PostgresCallCache",
    "Pricing",
    "ReplyParseError",
    "RequestCount",
    "TransientBackendError",
    "Usage",
    "UsageCounts",
    "fill",
    "json_object",
    "load_llm_config",
    "map_concurrent",
    "missing_reason_for",
    "parse_structured",
    "read_key",
    "require_key",
    "request_key",
    "retry_after_seconds",
    "send_with_retries",
]
