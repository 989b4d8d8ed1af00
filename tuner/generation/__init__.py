"""Answers (variants → **answers** → verdicts): generation backends: turn a question and ordered contexts into an
answer.

``extractive`` (offline default, a stand-in for an LLM), ``openai`` (any OpenAI-compatible
endpoint), ``callable`` (a Python function) and ``local`` (a small language model run here by llama.cpp),
chosen by ``backend`` in the configuration.
"""

from tuner.generation._base import ABSTAIN, Answer, Generator
from tuner.generation._callable import CallableGenerator, CallableGeneratorConfig, load_callable
from tuner.generation._extractive import (
    ExtractiveGenerator,
    ExtractiveGeneratorConfig,
    ScoredSentence,
    position_bonus,
)
from tuner.generation._local import CHAT_PROMPT, LOCAL_PROMPT, LocalGenerator, LocalGeneratorConfig, cut_answer, llama_cpp_runtime
from tuner.generation._models import LOCAL_MODELS, model_file, require_local
from tuner.generation._openai import (
    ABSTAIN_ZH,
    DEFAULT_PROMPT_TEMPLATE,
    PROMPT_TEMPLATES,
    ZH_PROMPT_TEMPLATE,
    OpenAIGenerator,
    OpenAIGeneratorConfig,
    render_prompt,
)
from tuner.generation._prompts import NO_CONTEXT, ChatPrompt, LocalPrompt, PromptLanguage, Shot, format_contexts, prompt_language
from tuner.generation._span import AnswerType, answer_type, extract_span
from tuner.generation._registry import (
    DEFAULT_GENERATOR,
    GENERATORS,
    GeneratorConfig,
    build_generator,
    parse_generator_config,
)

__all__ = [
    "AnswerType",
    "answer_type",
    "extract_span",
    "ABSTAIN",
    "ABSTAIN_ZH",
    "CHAT_PROMPT",
    "DEFAULT_GENERATOR",
    "DEFAULT_PROMPT_TEMPLATE",
    "GENERATORS",
    "LOCAL_MODELS",
    "LOCAL_PROMPT",
    "NO_CONTEXT",
    "PROMPT_TEMPLATES",
    "ZH_PROMPT_TEMPLATE",
    "Answer",
    "CallableGenerator",
    "CallableGeneratorConfig",
    "ChatPrompt",
    "ExtractiveGenerator",
    "ExtractiveGeneratorConfig",
    "Generator",
    "GeneratorConfig",
    "LocalGenerator",
    "LocalGeneratorConfig",
    "LocalPrompt",
    "OpenAIGenerator",
    "OpenAIGeneratorConfig",
    "PromptLanguage",
    "ScoredSentence",
    "Shot",
    "build_generator",
    "cut_answer",
    "format_contexts",
    "llama_cpp_runtime",
    "load_callable",
    "model_file",
    "parse_generator_config",
    "position_bonus",
    "prompt_language",
    "render_prompt",
    "require_local",
]
