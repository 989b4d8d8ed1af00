"""External knowledge (retrieval ⇄ **a retrieval service**): Dify's External Knowledge API as typed data, the one
definition of the contract that ``tuner serve``'s ``POST /retrieval`` answers and the ``external`` backend sends.

Checked against the published page (docs.dify.ai, "External Knowledge API"), not a running Dify: Dify sends
``POST {endpoint}/retrieval`` with ``Authorization: Bearer {API_KEY}`` and a JSON body ``{knowledge_id, query,
retrieval_setting: {top_k, score_threshold}, metadata_condition?}`` (``score_threshold`` is 0.0 when the threshold is
off in Dify); ``metadata_condition`` is ``{logical_operator: and|or (default and), conditions: [{name,
comparison_operator, value?}]}``, ``name`` a string (an older version of the page: a list of names), ``value`` a
string, a number or a list of strings, left out for ``empty`` / ``not empty``. The reply is HTTP 200 with ``{"records":
[{content, score, title, metadata}]}`` (``metadata`` an object, never null: null breaks Dify's pipeline; no match:
``{"records": []}``); a non-200 status surfaces to the Dify user, with ``{"error_code", "error_msg"}`` by convention:
1001 invalid Authorization header format, 1002 authorization failed, 2001 the knowledge does not exist (HTTP 403 for
the first two, per the page's AccessDeniedException). RAGFlow serves the same contract at ``/api/v1/dify/retrieval``
and puts the document id in ``metadata.doc_id``.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tuner.errors import describe_validation_error
from tuner.retrieval import Condition, operator_value
from tuner.text import is_blank

INVALID_AUTH_HEADER = 1001
AUTH_FAILED = 1002
UNKNOWN_KNOWLEDGE = 2001
"""The contract's error codes; an error it has no code for carries its HTTP status as ``error_code`` (400, 503). The
service's own guards answer before the contract is read, in the service's shape: 413 (body too large), 421 (a Host it
does not answer to)."""
MAX_CONDITIONS = 100
"""Default: the most conditions one ``metadata_condition`` may hold (each is a pass over every chunk: 20,000 took
8–9 s of a server's CPU per request)."""
MAX_CONDITION_CHARS = 4096
"""Default: the most characters of one condition's name or value (a list counts as its items joined by commas)."""


class _Contract(BaseModel):
    # keys the page does not list are ignored, not refused: Dify and RAGFlow add their own (RAGFlow's use_kg)
    model_config = ConfigDict(extra="ignore", frozen=True)


class RetrievalSetting(_Contract):
    top_k: int = Field(ge=1, strict=True, description="the most records to return")
    score_threshold: float = Field(0.0, ge=0.0, le=1.0, description="the least score a record may have; 0: off")


class ConditionIn(_Contract):
    name: str | list[str] = Field(description="metadata field(s) the condition reads")
    comparison_operator: str
    value: str | int | float | list[str] | None = None

    @field_validator("name")
    @classmethod
    def _named(cls, name: str | list[str]) -> str | list[str]:
        if not name or (isinstance(name, list) and not all(name)):
            raise ValueError("must name a metadata field")
        return name

    @model_validator(mode="after")
    def _value_fits_operator(self) -> ConditionIn:
        operator_value(self.comparison_operator, self.value)  # a ValueError names the operator and the value wanted
        return self

    def condition(self) -> Condition:
        names = (self.name,) if isinstance(self.name, str) else tuple(self.name)
        return Condition(names, self.comparison_operator, operator_value(self.comparison_operator, self.value))


class MetadataCondition(_Contract):
    logical_operator: Literal["and", "or"] = "and"
    conditions: list[ConditionIn]

    def parsed(self) -> list[Condition]:
        return [condition.condition() for condition in self.conditions]


class KnowledgeRequest(_Contract):
    knowledge_id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    retrieval_setting: RetrievalSetting
    metadata_condition: MetadataCondition | None = None

    @field_validator("query")
    @classmethod
    def _readable(cls, query: str) -> str:
        if is_blank(query):
            raise ValueError("is empty (only whitespace or invisible characters)")
        return query


def _chars(value: Any) -> int:
    """A condition's name or value as characters: a list's items joined by commas, anything else as its text."""
    if isinstance(value, list):
        return sum(_chars(item) for item in value) + max(len(value) - 1, 0)
    return len(value) if isinstance(value, str) else len(str(value))


def condition_beyond(body: dict[str, Any], max_conditions: int, max_condition_chars: int) -> str | None:
    """The one line refusing a request body whose ``metadata_condition`` holds more than ``max_conditions`` conditions
    or a name or value over ``max_condition_chars`` characters, or None; read before the conditions are validated,
    so a request beyond the limits costs no more than its size.

    >>> body = {"metadata_condition": {"conditions": [{"name": "team", "comparison_operator": "in", "value": ["hr", "it"]}]}}
    >>> condition_beyond(body, 1, 5), condition_beyond(body, 1, 4)
    (None, 'metadata_condition.conditions.0.value: 5 characters, at most 4 allowed (max_condition_chars)')
    """
    condition = body.get("metadata_condition")
    conditions = condition.get("conditions") if isinstance(condition, dict) else None
    if not isinstance(conditions, list):
        return None
    if len(conditions) > max_conditions:
        return f"metadata_condition.conditions: {len(conditions)} conditions, at most {max_conditions} allowed (max_conditions)"
    for index, one in enumerate(conditions):
        for key in ("name", "value"):
            chars = _chars(one.get(key)) if isinstance(one, dict) and one.get(key) is not None else 0
            if chars > max_condition_chars:
                return (f"metadata_condition.conditions.{index}.{key}: {chars} characters, at most {max_condition_chars} "
                        "allowed (max_condition_chars)")
    return None


def parse_request(body: Any, max_conditions: int = MAX_CONDITIONS, max_condition_chars: int = MAX_CONDITION_CHARS) -> KnowledgeRequest:
    """A request body (parsed JSON) as a :class:`KnowledgeRequest`; a ``ValueError`` with one line naming the key, also
    for a ``metadata_condition`` beyond the limits (:func:`condition_beyond`)."""
    if not isinstance(body, dict):
        raise ValueError("body: expected a JSON object")
    beyond = condition_beyond(body, max_conditions, max_condition_chars)
    if beyond is not None:
        raise ValueError(beyond)
    try:
        return KnowledgeRequest.model_validate(body)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None


class Record(BaseModel):
    """One record of a reply as the contract has it; ``metadata`` is an object (a service that sends null gets {})."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    content: str = ""
    score: float | None = None
    title: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("metadata", mode="before")
    @classmethod
    def _object(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("title", "content", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return "" if value is None else value


def kept_records(body: Any, top_k: int) -> tuple[list[Record], int]:
    """The records of a reply body (parsed JSON), at most ``top_k`` of them, and how many more it held: of a reply
    with more records than asked for, the ``top_k`` with the highest scores (a record without a numeric score ranks
    below every scored one; ties in the service's order), in that order; only the kept ones are validated. A
    ``ValueError`` with one line when the body is not the contract's shape.

    >>> kept, dropped = kept_records({"records": [{"content": c, "score": s} for c, s in [("a", .2), ("b", .9), ("c", None)]]}, 2)
    >>> [record.content for record in kept], dropped
    (['b', 'a'], 1)
    """
    if not isinstance(body, dict) or not isinstance(body.get("records"), list):
        raise ValueError("the reply is not {\"records\": [...]}")
    records: list[Any] = body["records"]
    if len(records) > top_k:
        records = [records[i] for i in heapq.nsmallest(top_k, range(len(records)), key=lambda i: (-_score(records[i]), i))]
    try:
        return [Record.model_validate(record) for record in records], len(body["records"]) - len(records)
    except ValidationError as exc:
        raise ValueError(f"records: {describe_validation_error(exc)}") from None


def _score(record: Any) -> float:
    score = record.get("score") if isinstance(record, dict) else None
    if isinstance(score, (int, float)) and not isinstance(score, bool) and not math.isnan(score):
        return float(score)
    return -math.inf


def error_body(code: int, message: str) -> dict[str, Any]:
    """The contract's error shape."""
    return {"error_code": code, "error_msg": message}
