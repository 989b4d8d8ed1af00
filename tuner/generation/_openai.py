"""Answers from any OpenAI-compatible chat endpoint, with a configurable RAG prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import field_validator

from tuner.generation._base import ABSTAIN, Answer
from tuner.llm import BackendError, BackendResources, ChatClient, LLMConfig, RequestCount, fill, missing_reason_for

DEFAULT_PROMPT_TEMPLATE = (
    "Answer the question using only the numbered context passages below. "
    f'If they do not contain the answer, reply exactly "{ABSTAIN}" '
    "Answer in one or two sentences.\n\n"
    "Context:\n{context}\n\n"
    "Question: {question}\n"
    "Answer:"
)
NO_CONTEXT = "(no passages)"


def format_contexts(contexts: Sequence[str]) -> str:
    """Contexts numbered ``[1]``, ``[2]``, ... in the order given, separated by blank lines."""
    if not contexts:
        return NO_CONTEXT
    return "\n\n".join(f"[{number}] {text.strip()}" for number, text in enumerate(contexts, start=1))


def render_prompt(template: str, question: str, contexts: Sequence[str]) -> str:
    """Fill ``{question}`` and ``{context}``; other braces in the template are left as written."""
    return fill(template, question=question.strip(), context=format_contexts(contexts))


class OpenAIGeneratorConfig(LLMConfig):
    """``generator: {backend: openai, base_url: ..., model: ..., prompt_template: ...}``."""

    backend: Literal["openai"] = "openai"
    prompt_template: str = DEFAULT_PROMPT_TEMPLATE

    @field_validator("prompt_template")
    @classmethod
    def _has_placeholders(cls, value: str) -> str:
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

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        prompt = render_prompt(self.config.prompt_template, question, contexts)
        self.requests_made.add()
        try:
            completion = self.client.complete([{"role": "user", "content": prompt}])
        except BackendError as exc:
            return Answer.missing(missing_reason_for(exc))
        return Answer.of(completion.text)


def build_openai(config: OpenAIGeneratorConfig, resources: BackendResources) -> OpenAIGenerator:
    return OpenAIGenerator(config, resources.chat_client(config))
