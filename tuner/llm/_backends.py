"""LLM plumbing (answers, verdicts → **chat endpoint**): one registry type for the generator and judge backends: a
config model and a builder per ``backend`` name used in YAML, validated as one tagged union on ``backend``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from tuner.errors import UserError, describe_validation_error
from tuner.llm._resources import BackendResources

B = TypeVar("B")
C = TypeVar("C")


def backend_of(value: Any, default: str) -> str:
    """The ``backend`` named by a mapping or config object, ``default`` when it names none."""
    if isinstance(value, Mapping):
        return str(value.get("backend", default))
    return str(getattr(value, "backend", default))


class BackendRegistry(Generic[B, C]):
    """Backends of one ``kind`` ("generator", "judge"): ``configs`` is the tagged union of their config models
    (``C``), ``builders`` maps each ``backend`` name to the function that builds it.

    >>> config = GENERATORS.parse({"backend": "extractive", "max_sentences": 2}, "study.yaml")  # doctest: +SKIP
    >>> generator = GENERATORS.build(config, resources)  # doctest: +SKIP
    """

    def __init__(
        self, kind: str, default: str, configs: Any, builders: Mapping[str, Callable[[Any, BackendResources], B]]
    ) -> None:
        self.kind = kind
        self.default = default
        self.builders = dict(builders)
        self._adapter: TypeAdapter[C] = TypeAdapter(configs)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.builders)

    def parse(self, values: Mapping[str, Any] | None, source: str) -> C:
        """Validate a ``generator:`` / ``judge:`` mapping; errors are one line naming ``source`` and the key."""
        try:
            return self._adapter.validate_python(dict(values or {}))
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "union_tag_invalid":
                raise UserError(
                    f"{source}: {self.kind}.backend: unknown backend {backend_of(values, self.default)!r}; "
                    f"choose one of {', '.join(self.names)}"
                ) from None
            raise UserError(f"{source}: {self.kind}.{describe_validation_error(exc, skip=1)}") from None

    def build(self, config: C, resources: BackendResources | None = None) -> B:
        """The backend for ``config``, sharing ``resources`` (usage counters, call cache, encoder)."""
        builder = self.builders[backend_of(config, self.default)]
        return builder(config, resources if resources is not None else BackendResources())
