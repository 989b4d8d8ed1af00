"""External knowledge (retrieval ⇄ **a retrieval service**): Dify's External Knowledge API, the HTTP contract Dify
calls external knowledge bases through and RAGFlow also serves: its request and reply as typed data
(``_contract``), served by ``tuner serve`` (``POST /retrieval``, :mod:`tuner.deploy.service`); and the other way, a
service that speaks it measured and tuned as a retriever: its configuration (``_config``), its client (``_client``: concurrency, retries, call cache)
and the pipeline that gives its records to evaluations and studies (``_pipeline``)."""

from typing import TYPE_CHECKING

from tuner import lazy_exports
from tuner.external._config import API_KEY_VARIABLE, ExternalConfig

if TYPE_CHECKING:
    from tuner.external._contract import (
        AUTH_FAILED,
        INVALID_AUTH_HEADER,
        MAX_CONDITION_CHARS,
        MAX_CONDITIONS,
        UNKNOWN_KNOWLEDGE,
        ConditionIn,
        KnowledgeRequest,
        MetadataCondition,
        Record,
        RetrievalSetting,
        error_body,
        kept_records,
        parse_request,
    )
    from tuner.external._client import ExternalClient
    from tuner.external._pipeline import EXTERNAL_KNOBS, UNMATCHED, ExternalPipeline, Matching, RecordMatcher

__getattr__ = lazy_exports(__name__, {
    "tuner.external._contract": ("AUTH_FAILED", "INVALID_AUTH_HEADER", "MAX_CONDITION_CHARS", "MAX_CONDITIONS",
                                 "UNKNOWN_KNOWLEDGE", "ConditionIn", "KnowledgeRequest", "MetadataCondition", "Record",
                                 "RetrievalSetting", "error_body", "kept_records", "parse_request"),
    "tuner.external._client": ("ExternalClient",),
    "tuner.external._pipeline": ("EXTERNAL_KNOBS", "UNMATCHED", "ExternalPipeline", "Matching", "RecordMatcher"),
})
"""The names whose modules load tuner's retrieval and the HTTP client, imported when first used (PEP 562): the
``external`` engine is parsed from :class:`ExternalConfig` alone, on every command line."""


__all__ = [
    "API_KEY_VARIABLE",
    "AUTH_FAILED",
    "INVALID_AUTH_HEADER",
    "MAX_CONDITIONS",
    "MAX_CONDITION_CHARS",
    "UNKNOWN_KNOWLEDGE",
    "ConditionIn",
    "EXTERNAL_KNOBS",
    "ExternalClient",
    "ExternalConfig",
    "ExternalPipeline",
    "KnowledgeRequest",
    "Matching",
    "MetadataCondition",
    "Record",
    "RecordMatcher",
    "RetrievalSetting",
    "UNMATCHED",
    "error_body",
    "kept_records",
    "parse_request",
]
