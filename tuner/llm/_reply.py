"""LLM plumbing (answers, verdicts → **chat endpoint**): what every backend does with a model's reply or failure: find
the one JSON object in it, or turn a per-request failure into the reason the score is missing."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tuner.errors import BackendError, ReplyParseError

M = TypeVar("M", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def _object_text(reply: str) -> str | None:
    text = _FENCE.sub("", reply.strip())
    start, end = text.find("{"), text.rfind("}")
    return None if start < 0 or end <= start else text[start : end + 1]


def json_object(reply: str) -> dict[str, Any] | None:
    """The JSON object in ``reply`` (code fences and text around it tolerated), or None if there is none.

    >>> json_object('Sure: ```json\\n{"verdict": "absent"}\\n```')
    {'verdict': 'absent'}
    """
    text = _object_text(reply)
    if text is None:
        return None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError:
        return None
    return payload if isinstance(payload, dict) else None


def parse_structured(reply: str, model: type[M]) -> M:
    """The ``model`` instance in ``reply``, located as in :func:`json_object`; raises :class:`ReplyParseError`.

    >>> class Out(BaseModel):
    ...     statements: list[str]
    >>> parse_structured('```json\\n{"statements": ["a"]}\\n```', Out).statements
    ['a']
    """
    text = _object_text(reply)
    if text is None:
        raise ReplyParseError("no JSON object in the reply")
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise ReplyParseError(f"{exc.error_count()} schema errors") from None


def missing_reason_for(exc: BackendError) -> str:
    """``timeout``, ``malformed_reply`` or ``backend_error`` for a failed request (:data:`tuner.verdicts.MISSING_REASONS`);
    a fatal failure (unreachable endpoint, rejected key) is re-raised, since every later request would fail the same way."""
    if exc.fatal:
        raise exc
    return {"timeout": "timeout", "malformed": "malformed_reply"}.get(exc.kind, "backend_error")
