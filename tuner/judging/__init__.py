"""Verdicts (answers → **verdicts** → metrics): judging backends: per keypoint, does the answer state it, and does the
context support it?

``lexical`` (offline default, normalized string matching) and ``llm`` (two separate JSON-only
prompts per keypoint to an OpenAI-compatible endpoint), chosen by ``backend`` in the configuration.
"""

from tuner.judging._base import Judge
from tuner.judging._lexical import LexicalJudge, LexicalJudgeConfig, wrong_values_per_keypoint
from tuner.judging._llm import (
    ANSWER_PROMPT,
    BATCH_ANSWER_PROMPT,
    BATCH_CONTEXT_PROMPT,
    BATCH_REPAIR_PROMPT,
    CONTEXT_PROMPT,
    JUDGE_PROMPTS,
    REPAIR_PROMPT,
    JudgePrompts,
    LLMJudge,
    LLMJudgeConfig,
    VERDICT_SCHEMA,
    parse_verdict,
    parse_verdicts,
)
from tuner.judging._normalize import Normalized, normalize
from tuner.judging._registry import DEFAULT_JUDGE, JUDGES, JudgeConfig, build_judge, parse_judge_config
from tuner.verdicts import VERDICTS, KeypointVerdict, Verdict

__all__ = [
    "ANSWER_PROMPT",
    "BATCH_ANSWER_PROMPT",
    "BATCH_CONTEXT_PROMPT",
    "BATCH_REPAIR_PROMPT",
    "CONTEXT_PROMPT",
    "DEFAULT_JUDGE",
    "JUDGES",
    "JUDGE_PROMPTS",
    "REPAIR_PROMPT",
    "VERDICT_SCHEMA",
    "VERDICTS",
    "Judge",
    "JudgeConfig",
    "JudgePrompts",
    "KeypointVerdict",
    "LLMJudge",
    "LLMJudgeConfig",
    "LexicalJudge",
    "LexicalJudgeConfig",
    "Normalized",
    "Verdict",
    "build_judge",
    "normalize",
    "parse_judge_config",
    "parse_verdict",
    "parse_verdicts",
    "wrong_values_per_keypoint",
]
