"""A judge that asks a chat model two separate JSON-only questions per keypoint."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from tuner.generation import format_contexts
from tuner.verdicts import VERDICTS, KeypointVerdict, Verdict
from tuner.llm import (
    BackendError,
    BackendResources,
    ChatClient,
    LLMConfig,
    Message,
    RequestCount,
    fill,
    json_object,
    map_concurrent,
    missing_reason_for,
)

_REPLY_FORMAT = (
    'Reply with only a JSON object, no other text: {"verdict": "supported" | "contradicted" | "absent", '
    '"evidence": "<a verbatim quote from the text you judged, or an empty string>"}'
)

ANSWER_PROMPT = (
    "You check whether an ANSWER states one fact. Judge only the answer text, not your own knowledge.\n\n"
    "Question: {question}\n"
    "Fact (any of these phrasings counts): {keypoint}\n"
    "ANSWER: {answer}\n\n"
    '"supported": the answer states the fact. "contradicted": the answer states something incompatible '
    'with it (for example a different value). "absent": the answer does not say it (including "I don\'t know").\n'
    + _REPLY_FORMAT
)

CONTEXT_PROMPT = (
    "You check whether numbered PASSAGES support one fact. Judge only the passages, not your own knowledge.\n\n"
    "Question: {question}\n"
    "Fact (any of these phrasings counts): {keypoint}\n"
    "PASSAGES:\n{context}\n\n"
    '"supported": some passage states the fact. "contradicted": no passage states it and some passage '
    'states something incompatible with it. "absent": the passages do not address it.\n' + _REPLY_FORMAT
)

REPAIR_PROMPT = "That reply was not a valid JSON object of the required form. " + _REPLY_FORMAT

def parse_verdict(reply: str) -> tuple[Verdict, str] | None:
    """``(verdict, evidence)`` from a reply holding one JSON object (code fences and text around it
    are tolerated); ``None`` if there is no such object or its verdict is not one of :data:`VERDICTS`."""
    payload = json_object(reply)
    if payload is None:
        return None
    verdict = str(payload.get("verdict", "")).strip().lower()
    evidence = payload.get("evidence", "")
    for known in VERDICTS:
        if verdict == known:
            return known, evidence if isinstance(evidence, str) else json.dumps(evidence)
    return None


class LLMJudgeConfig(LLMConfig):
    """``judge: {backend: llm, base_url: ..., model: ..., temperature: 0}``; pin model and temperature
    for a whole study. ``parse_retries``: how many times an unparseable reply is answered with a
    request to repair it before the verdict is recorded as missing (``parse_failure``)."""

    backend: Literal["llm"] = "llm"
    parse_retries: int = Field(2, ge=0, le=10)


@dataclass(frozen=True)
class _Side:
    verdict: Verdict | None
    evidence: str
    missing_reason: str | None


class LLMJudge:
    """Per keypoint, one prompt about the answer and another about the contexts, never both at once
    (asked together, judges rationalize). The model is not shown ``wrong_answers``: it decides
    contradiction from meaning, so its verdicts do not lean on the dataset's list of wrong values.

    A timeout records the side as missing (``timeout``), another per-request failure as
    ``backend_error``; an unreachable endpoint or a rejected key raises.
    """

    name = "llm"

    def __init__(self, config: LLMJudgeConfig, client: ChatClient) -> None:
        self.config = config
        self.client = client
        self.concurrency = config.concurrency
        self.requests_made = RequestCount()

    def judge(
        self,
        question: str,
        answer: str,
        contexts: Sequence[str],
        keypoints: Sequence[tuple[str, ...]],
        wrong_answers: Sequence[str],
    ) -> list[KeypointVerdict]:
        passages = format_contexts(contexts)
        prompts: list[str | None] = []
        for keypoint in keypoints:
            facts = " / ".join(f'"{alias}"' for alias in keypoint)
            answer_prompt = fill(ANSWER_PROMPT, question=question, keypoint=facts, answer=answer.strip())
            prompts.append(answer_prompt if answer.strip() else None)
            prompts.append(fill(CONTEXT_PROMPT, question=question, keypoint=facts, context=passages))
        sides = map_concurrent(self._ask, prompts, self.concurrency)
        return [self._combine(sides[i], sides[i + 1]) for i in range(0, len(sides), 2)]

    def _ask(self, prompt: str | None) -> _Side:
        if prompt is None:
            return _Side(None, "", "empty_answer")
        messages: list[Message] = [{"role": "user", "content": prompt}]
        for attempt in range(self.config.parse_retries + 1):
            self.requests_made.add()
            try:
                reply = self.client.complete(messages).text
            except BackendError as exc:
                return _Side(None, "", missing_reason_for(exc))
            parsed = parse_verdict(reply)
            if parsed is not None:
                return _Side(parsed[0], parsed[1], None)
            # The conversation grows with each repair, so every retry is a new request (and cache key).
            messages = [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": REPAIR_PROMPT}]
        return _Side(None, "", "parse_failure")

    @staticmethod
    def _combine(answer: _Side, context: _Side) -> KeypointVerdict:
        evidence = " | ".join(
            f'{where}: "{side.evidence}"' for where, side in (("answer", answer), ("context", context)) if side.evidence
        )
        return KeypointVerdict(answer.verdict, context.verdict, evidence, answer.missing_reason or context.missing_reason)


def build_llm(config: LLMJudgeConfig, resources: BackendResources) -> LLMJudge:
    return LLMJudge(config, resources.chat_client(config))
