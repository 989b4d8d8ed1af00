"""Generator configs as one tagged union on ``backend``, and the registry that builds them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union

from pydantic import Discriminator, Tag, TypeAdapter

from tuner.generation._base import Generator
from tuner.generation._callable import CallableGeneratorConfig, build_callable
from tuner.generation._extractive import ExtractiveGeneratorConfig, build_extractive
from tuner.generation._openai import OpenAIGeneratorConfig, build_openai
from tuner.llm import BackendResources
from tuner.llm._backends import backend_of, parse_backend_config

DEFAULT_GENERATOR = "extractive"


def _backend_of(value: Any) -> str:
    return backend_of(value, DEFAULT_GENERATOR)


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
    return parse_backend_config(_ADAPTER, values, source, "generator", GENERATORS, DEFAULT_GENERATOR)


def build_generator(config: Any, resources: BackendResources | None = None) -> Generator:
    """The generator for ``config`` (any member of :data:`GeneratorConfig`), sharing ``resources``."""
    return GENERATORS[config.backend](config, resources if resources is not None else BackendResources())
