"""Answers (variants → **answers** → verdicts): answers from a Python function named in the configuration, e.g. a
wrapper around an in-house RAG service."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

from pydantic import Field

from tuner.errors import UserError
from tuner.generation._base import Answer
from tuner.llm import RequestCount
from tuner.backends import BackendResources
from tuner.strict import StrictModel

log = logging.getLogger(__name__)


def load_callable(spec: str) -> Callable[..., Any]:
    """Import ``module:function`` (the function may be a dotted attribute path, ``module:Class.method``)."""
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise UserError(f"generator.function: '{spec}' must look like 'package.module:function'")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"generator.function: cannot import module '{module_name}' of '{spec}': {exc}") from None
    for part in attr_path.split("."):
        if not hasattr(target, part):
            raise UserError(f"generator.function: '{spec}': '{module_name}' has no attribute '{attr_path}'")
        target = getattr(target, part)
    if not callable(target):
        raise UserError(f"generator.function: '{spec}' is not callable")
    return cast(Callable[..., Any], target)


class CallableGeneratorConfig(StrictModel):
    """``generator: {backend: callable, function: "my_pkg.rag:answer"}``; the function is
    ``(question: str, contexts: list[str]) -> str``. ``concurrency`` > 1 only if it is thread-safe."""

    backend: Literal["callable"] = "callable"
    function: str = Field(min_length=1)
    concurrency: int = Field(1, ge=1, le=256)


class CallableGenerator:
    """Calls the user's function; an exception it raises is logged and recorded as ``backend_error``,
    a return value that is not a string is a contract violation and raises :class:`UserError`."""

    name = "callable"

    def __init__(self, config: CallableGeneratorConfig) -> None:
        self.config = config
        self.function = load_callable(config.function)
        self.concurrency = config.concurrency
        self.requests_made = RequestCount()

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        self.requests_made.add()
        try:
            result = self.function(question, list(contexts))
        except Exception as exc:
            log.warning("generator %s raised %s: %s", self.config.function, type(exc).__name__, exc)
            return Answer.missing("backend_error")
        if not isinstance(result, str):
            raise UserError(
                f"generator.function: '{self.config.function}' returned {type(result).__name__}, expected str"
            )
        return Answer.of(result)


def check_callable(config: CallableGeneratorConfig) -> None:
    """The function ``config`` names imports and is callable (:func:`load_callable`)."""
    load_callable(config.function)


def build_callable(config: CallableGeneratorConfig, resources: BackendResources) -> CallableGenerator:
    return CallableGenerator(config)
