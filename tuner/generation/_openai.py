"""Answers (variants → **answers** → verdicts): answers from any OpenAI-compatible chat endpoint, with a configurable
RAG prompt.

The default prompt is written in the language of the question (``prompt_language: auto``, detected
with :func:`tuner.text.detect_language`) or the language the config pins: instructions in the
question's own language make a model answer in it, and the passages and question are sent verbatim.
The English template is the one tuner always used, so English requests (and their cached replies)
are unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import field_validator

from tuner.generation._base import ABSTAIN, Answer
from tuner.backends import BackendResources
from tuner.generation._prompts import PromptLanguage, format_contexts, prompt_language
from tuner.llm import BackendError, ChatClient, LLMConfig, RequestCount, fill, missing_reason_for
from tuner.text import Language

ABSTAIN_ZH = "我不知道。"
"""What the Chinese prompt asks for when the passages hold no answer (a rejection phrase, see tuner.metrics)."""

INSTRUCTIONS: Mapping[Language, str] = {
    "en": (
        "Answer the question using only the numbered context passages below. "
        f'If they do not contain the answer, reply exactly "{ABSTAIN}" '
        "Answer in one or two sentences."
    ),
    "zh": (
        "请只根据下面编号的上下文段落回答问题。"
        f"如果段落中没有答案，请只回复“{ABSTAIN_ZH}”。"
        "用一到两句话回答，名称、数字和单位照段落原文写。"
    ),
}
"""What the default prompt asks of the model, per language of the question: the instruction of
:data:`PROMPT_TEMPLATES`, and the system message of a local chat model (``tuner.generation._local.CHAT_PROMPT``)."""
QUESTION_BODIES: Mapping[Language, str] = {
    "en": "Context:\n{context}\n\nQuestion: {question}\nAnswer:",
    "zh": "上下文：\n{context}\n\n问题：{question}\n回答：",
}
"""The passages and the question, ending in an answer cue: the rest of :data:`PROMPT_TEMPLATES`, and the user
message of a local chat model."""
DEFAULT_PROMPT_TEMPLATE = INSTRUCTIONS["en"] + "\n\n" + QUESTION_BODIES["en"]
ZH_PROMPT_TEMPLATE = INSTRUCTIONS["zh"] + "\n\n" + QUESTION_BODIES["zh"]
PROMPT_TEMPLATES: Mapping[Language, str] = {"en": DEFAULT_PROMPT_TEMPLATE, "zh": ZH_PROMPT_TEMPLATE}
"""The default prompt template per language of the question."""


def render_prompt(template: str, question: str, contexts: Sequence[str]) -> str:
    """Fill ``{question}`` and ``{context}``; other braces in the template are left as written."""
    return fill(template, question=question.strip(), context=format_contexts(contexts))


class OpenAIGeneratorConfig(LLMConfig):
    """``generator: {backend: openai, base_url: ..., model: ..., prompt_template: ..., prompt_language: ...}``.

    ``prompt_template`` (with ``{question}`` and ``{context}``) replaces the default templates for every
    question; without it the template of :data:`PROMPT_TEMPLATES` in the ``prompt_language`` is used."""

    backend: Literal["openai"] = "openai"
    prompt_template: str | None = None
    prompt_language: PromptLanguage = "auto"

    @field_validator("prompt_template")
    @classmethod
    def _has_placeholders(cls, value: str | None) -> str | None:
        if value is None:
            return None
        missing = [p for p in ("{question}", "{context}") if p not in value]
        if missing:
            raise ValueError(f"prompt_template must contain {' and '.join(missing)}")
        return value


class OpenAIGenerator:
    """One user message per question, built from ``prompt_template``; the reply text is the answer.

    A timeout becomes ``Answer.missing("timeout")``, another per-request failure ``"backend_error"``,
    a blank reply ``"empty_answer"``. An unreachable endpoint or a rejected key raises, since every
    later call would fail the same way.
    """

    name = "openai"

    def __init__(self, config: OpenAIGeneratorConfig, client: ChatClient) -> None:
        self.config = config
        self.client = client
        self.concurrency = config.concurrency
        self.requests_made = RequestCount()

    def template(self, question: str) -> str:
        """The configured template, else the default one in the language of the prompt for ``question``."""
        if self.config.prompt_template is not None:
            return self.config.prompt_template
        return PROMPT_TEMPLATES[prompt_language(question, self.config.prompt_language)]

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        prompt = render_prompt(self.template(question), question, contexts)
        self.requests_made.add()
        try:
            completion = self.client.complete([{"role": "user", "content": prompt}])
        except BackendError as exc:
            return Answer.missing(missing_reason_for(exc))
        return Answer.of(completion.text)


def build_openai(config: OpenAIGeneratorConfig, resources: BackendResources) -> OpenAIGenerator:
    return OpenAIGenerator(config, resources.chat_client(config))
