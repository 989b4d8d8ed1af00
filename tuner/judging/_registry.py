"""Judge configs as one tagged union on ``backend``, and the registry that builds them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union

from pydantic import Discriminator, Tag, TypeAdapter

from tuner.judging._base import Judge
from tuner.judging._lexical import LexicalJudgeConfig, build_lexical
from tuner.judging._llm import LLMJudgeConfig, build_llm
from tuner.llm import BackendResources
from tuner.llm._backends import backend_of, parse_backend_config

DEFAULT_JUDGE = "lexical"


def _backend_of(value: Any) -> str:
    return backend_of(value, DEFAULT_JUDGE)


JudgeConfig = Annotated[
    Union[
        Annotated[LexicalJudgeConfig, Tag("lexical")],
        Annotated[LLMJudgeConfig, Tag("llm")],
    ],
    Discriminator(_backend_of),
]
"""Any judge config; ``backend`` picks the type and defaults to ``lexical``."""

JUDGES: dict[str, Callable[[Any, BackendResources], Judge]] = {
    "lexical": build_lexical,
    "llm": build_llm,
}

_ADAPTER: TypeAdapter[Any] = TypeAdapter(JudgeConfig)


def parse_judge_config(values: Mapping[str, Any] | None, source: str) -> Any:
    """Validate a ``judge:`` mapping; a bad key or value becomes one line naming ``source`` and the key."""
    return parse_backend_config(_ADAPTER, values, source, "judge", JUDGES, DEFAULT_JUDGE)


def build_judge(config: Any, resources: BackendResources | None = None) -> Judge:
    """The judge for ``config`` (any member of :data:`JudgeConfig`), sharing ``resources``."""
    return JUDGES[config.backend](config, resources if resources is not None else BackendResources())
