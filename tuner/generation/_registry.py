"""Answers (variants → **answers** → verdicts): the generator registry: ``backend`` name → config model and builder."""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Discriminator, Tag

from tuner.generation._base import Generator
from tuner.generation._callable import CallableGeneratorConfig, build_callable, check_callable
from tuner.generation._extractive import ExtractiveGeneratorConfig, build_extractive
from tuner.generation._local import LocalGeneratorConfig, build_local, check_local
from tuner.generation._openai import OpenAIGeneratorConfig, build_openai
from tuner.backends import BackendRegistry, backend_of
from tuner.llm import require_key

DEFAULT_GENERATOR = "extractive"

GeneratorConfig = Annotated[
    Union[
        Annotated[ExtractiveGeneratorConfig, Tag("extractive")],
        Annotated[OpenAIGeneratorConfig, Tag("openai")],
        Annotated[CallableGeneratorConfig, Tag("callable")],
        Annotated[LocalGeneratorConfig, Tag("local")],
    ],
    Discriminator(lambda value: backend_of(value, DEFAULT_GENERATOR)),
]
"""Any generator config; ``backend`` picks the type and defaults to ``extractive``."""

GENERATORS: BackendRegistry[Generator, GeneratorConfig] = BackendRegistry(
    "generator", DEFAULT_GENERATOR, GeneratorConfig,
    {"extractive": build_extractive, "openai": build_openai, "callable": build_callable, "local": build_local},
    {"callable": check_callable, "local": check_local, "openai": require_key},
)

parse_generator_config = GENERATORS.parse
build_generator = GENERATORS.build
