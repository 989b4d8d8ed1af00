"""Judging backends: per keypoint, does the answer state it, and does the context support it?

``lexical`` (offline default, normalized string matching) and ``llm`` (two separate JSON-only
prompts per keypoint to an OpenAI-compatible endpoint), chosen by ``backend`` in the configuration.
"""

from tuner.judging._base import MISSING_REASONS, VERDICTS, Judge, KeypointVerdict, Verdict
from tuner.judging._lexical import LexicalJudge, LexicalJudgeConfig, wrong_values_per_keypoint
from tuner.judging._llm import ANSWER_PROMPT, CONTEXT_PROMPT, REPAIR_PROMPT, LLMJudge, LLMJudgeConfig, parse_verdict
from tuner.judging._normalize import Normalized, normalize
from tuner.judging._ragas import RAGAS_METRICS, ragas_scores
from tuner.judging._registry import DEFAULT_JUDGE, JUDGES, JudgeConfig, build_judge, parse_judge_config

__all__ = [
    "ANSWER_PROMPT",
    "CONTEXT_PROMPT",
    "DEFAULT_JUDGE",
    "JUDGES",
    "MISSING_REASONS",
    "RAGAS_METRICS",
    "REPAIR_PROMPT",
    "VERDICTS",
    "Judge",
    "JudgeConfig",
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
    "ragas_scores",
    "wrong_values_per_keypoint",
]
