"""Verdicts (answers → **verdicts** → metrics): the judge registry: ``backend`` name → config model and builder."""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Discriminator, Tag

from tuner.judging._base import Judge
from tuner.judging._lexical import LexicalJudgeConfig, build_lexical
from tuner.judging._llm import LLMJudgeConfig, build_llm
from tuner.backends import BackendRegistry, backend_of
from tuner.llm import require_key

DEFAULT_JUDGE = "lexical"

JudgeConfig = Annotated[
    Union[
        Annotated[LexicalJudgeConfig, Tag("lexical")],
        Annotated[LLMJudgeConfig, Tag("llm")],
    ],
    Discriminator(lambda value: backend_of(value, DEFAULT_JUDGE)),
]
"""Any judge config; ``backend`` picks the type and defaults to ``lexical``."""

JUDGES: BackendRegistry[Judge, JudgeConfig] = BackendRegistry(
    "judge", DEFAULT_JUDGE, JudgeConfig, {"lexical": build_lexical, "llm": build_llm}, {"llm": require_key}
)

parse_judge_config = JUDGES.parse
build_judge = JUDGES.build
