"""Generator configs as one tagged union on ``backend``, and the registry that builds them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union

from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from tuner.errors import UserError, describe_validation_error
from tuner.generation._base import Generator
from tuner.generation._callable import CallableGeneratorConfig, build_callable
from tuner.generation._extractive import ExtractiveGeneratorConfig, build_extractive
from tuner.generation._openai import OpenAIGeneratorConfig, build_openai
from tuner.llm import BackendResources

DEFAULT_GENERATOR = "extractive"


def _backend_of(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("backend", DEFAULT_GENERATOR))
    return str(getattr(value, "backend", DEFAULT_GENERATOR))


GeneratorConfig = Annotated[
    Union[
        Annotated[ExtractiveGeneratorConfig, Tag("extractive")],
        Annotated[OpenAIGeneratorConfig, Tag("openai")],
        Annotated[CallableGeneratorConfig, Tag("callable")],
    ],
    Discriminator(_backend_of),
]
"""Any generator config; ``backend`` picks the type and defaults to ``extractive``."""

GENERATORS: dict[str, Callable[[Any, BackendResources], Generator]] = {
    "extractive": build_extractive,
    "openai": build_openai,
    "callable": build_callable,
}

_ADAPTER: TypeAdapter[Any] = TypeAdapter(GeneratorConfig)


def parse_generator_config(values: Mapping[str, Any] | None, source: str) -> Any:
    """Validate a ``generator:`` mapping; a bad key or value becomes one line naming ``source`` and the key."""
    try:
        return _ADAPTER.validate_python(dict(values or {}))
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "union_tag_invalid":
            raise UserError(
                f"{source}: generator.backend: unknown backend {_backend_of(values)!r}; "
                f"choose one of {', '.join(GENERATORS)}"
            ) from None
        raise UserError(f"{source}: generator.{describe_validation_error(exc, skip=1)}") from None


def build_generator(config: Any, resources: BackendResources | None = None) -> Generator:
    """The generator for ``config`` (any member of :data:`GeneratorConfig`), sharing ``resources``."""
    return GENERATORS[config.backend](config, resources if resources is not None else BackendResources())
