"""Validation shared by the generator and judge registries: a config is a tagged union on ``backend``."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tuner.errors import UserError, describe_validation_error


def backend_of(value: Any, default: str) -> str:
    """The ``backend`` named by a mapping or config object, ``default`` when it names none."""
    if isinstance(value, Mapping):
        return str(value.get("backend", default))
    return str(getattr(value, "backend", default))


def parse_backend_config(
    adapter: TypeAdapter[Any], values: Mapping[str, Any] | None, source: str, kind: str, known: Collection[str], default: str
) -> Any:
    """Validate a ``generator:`` / ``judge:`` mapping (``kind``); errors are one line naming ``source`` and the key."""
    try:
        return adapter.validate_python(dict(values or {}))
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "union_tag_invalid":
            raise UserError(
                f"{source}: {kind}.backend: unknown backend {backend_of(values, default)!r}; choose one of {', '.join(known)}"
            ) from None
        raise UserError(f"{source}: {kind}.{describe_validation_error(exc, skip=1)}") from None
