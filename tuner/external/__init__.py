"""External knowledge (retrieval ⇄ **a retrieval service**): Dify's External Knowledge API, the HTTP contract Dify
calls external knowledge bases through and RAGFlow also serves: its request and reply as typed data
(``_contract``), served by ``tuner serve`` (``POST /retrieval``, :mod:`tuner.deploy.service`); and the other way, a
service that speaks it measured and tuned as a retriever: its client (``_client``: concurrency, retries, call cache)
and the pipeline that gives its records to evaluations and studies (``_pipeline``)."""

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
from tuner.external._client import API_KEY_VARIABLE, ExternalClient, ExternalConfig
from tuner.external._pipeline import EXTERNAL_KNOBS, UNMATCHED, ExternalPipeline, Matching, RecordMatcher

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
