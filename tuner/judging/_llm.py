"""Verdicts (answers → **verdicts** → metrics): a judge that asks a chat model two separate JSON-only questions per
keypoint, or per case for all its keypoints at once (``batch_keypoints``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import Field

from tuner.generation import PromptLanguage, format_contexts, prompt_language
from tuner.verdicts import VERDICTS, KeypointVerdict, Verdict
from tuner.backends import BackendResources
from tuner.llm import (
    BackendError,
    ChatClient,
    LLMConfig,
    Message,
    RequestCount,
    fill,
    json_object,
    map_concurrent,
    missing_reason_for,
)
from tuner.text import Language

_REPLY_FORMAT = (
    'Reply with only a JSON object, no other text: {"verdict": "supported" | "contradicted" | "absent", '
    '"evidence": "<a verbatim quote from the text you judged, or an empty string>"}'
)

# Every prompt puts what repeats first and what varies last, so a provider's automatic prefix caching serves the
# repeated part: the instructions (the same for every request), then the judged text (the same for every keypoint of a
# case: the passages of one variant, or the answer), then the question and the fact.
ANSWER_PROMPT = (
    "You check whether an ANSWER states one fact. Judge only the answer text, not your own knowledge. "
    '"supported": the answer states the fact. "contradicted": the answer states something incompatible '
    'with it (for example a different value). "absent": the answer does not say it (including "I don\'t know").\n'
    + _REPLY_FORMAT + "\n\n"
    "ANSWER: {answer}\n\n"
    "Question: {question}\n"
    "Fact (any of these phrasings counts): {keypoint}"
)

CONTEXT_PROMPT = (
    "You check whether numbered PASSAGES support one fact. Judge only the passages, not your own knowledge. "
    '"supported": some passage states the fact. "contradicted": no passage states it and some passage '
    'states something incompatible with it. "absent": the passages do not address it.\n' + _REPLY_FORMAT + "\n\n"
    "PASSAGES:\n{context}\n\n"
    "Question: {question}\n"
    "Fact (any of these phrasings counts): {keypoint}"
)

REPAIR_PROMPT = "That reply was not a valid JSON object of the required form. " + _REPLY_FORMAT

# The verdict labels stay English in every language, so one parser reads every reply; the evidence is
# asked for in the judged text's own words, untranslated, so it can be found in that text.
_REPLY_FORMAT_ZH = (
    '只回复一个 JSON 对象，不要任何其他文字：{"verdict": "supported" | "contradicted" | "absent", '
    '"evidence": "<从你判断的文本中逐字摘录的原文，不要翻译；没有则为空字符串>"}'
)

ANSWER_PROMPT_ZH = (
    "你要检查一个回答是否陈述了某个事实。只根据回答的文字判断，不要用你自己的知识。"
    '"supported"：回答陈述了这个事实。"contradicted"：回答陈述了与它不相容的内容（例如不同的数值）。'
    '"absent"：回答没有说到它（包括“我不知道”）。\n' + _REPLY_FORMAT_ZH + "\n\n"
    "回答：{answer}\n\n"
    "问题：{question}\n"
    "事实（以下任一说法都算）：{keypoint}"
)

CONTEXT_PROMPT_ZH = (
    "你要检查编号的段落是否支持某个事实。只根据段落判断，不要用你自己的知识。"
    '"supported"：某个段落陈述了这个事实。"contradicted"：没有段落陈述它，且某个段落陈述了与它不相容的内容。'
    '"absent"：段落没有涉及它。\n' + _REPLY_FORMAT_ZH + "\n\n"
    "段落：\n{context}\n\n"
    "问题：{question}\n"
    "事实（以下任一说法都算）：{keypoint}"
)

REPAIR_PROMPT_ZH = "上一条回复不是所要求格式的有效 JSON 对象。" + _REPLY_FORMAT_ZH

# ``batch_keypoints``: all of a case's keypoints in one request per side, still never both sides at once
_BATCH_FORMAT = (
    'Reply with only a JSON object, no other text: {"verdicts": [{"fact": <its number>, "verdict": "supported" | '
    '"contradicted" | "absent", "evidence": "<a verbatim quote from the text you judged, or an empty string>"}, ...]}, '
    "one entry for every numbered fact, judged on its own."
)
_BATCH_FORMAT_ZH = (
    '只回复一个 JSON 对象，不要任何其他文字：{"verdicts": [{"fact": <事实编号>, "verdict": "supported" | "contradicted" | '
    '"absent", "evidence": "<从你判断的文本中逐字摘录的原文，不要翻译；没有则为空字符串>"}, ...]}，'
    "每个编号的事实一项，各自单独判断。"
)


def _batched(single: str, replacements: Mapping[str, str], facts_heading: str) -> str:
    """A per-keypoint prompt turned into the batched one: the same instructions (``replacements`` make them speak of
    several facts and ask for the batch reply format) and judged text first, then the question and the numbered facts."""
    head, _, _ = single.rpartition("\n")  # drop the single fact line; the question stays last but one
    for old, new in replacements.items():
        head = head.replace(old, new)
    return head + "\n" + facts_heading + "\n{keypoints}"


_EN = {_REPLY_FORMAT: _BATCH_FORMAT, "one fact": "each of several numbered facts"}
_ZH = {_REPLY_FORMAT_ZH: _BATCH_FORMAT_ZH, "某个事实": "几个编号的事实中的每一个"}
BATCH_ANSWER_PROMPT = _batched(ANSWER_PROMPT, _EN, "Facts (for each, any of its phrasings counts):")
BATCH_CONTEXT_PROMPT = _batched(CONTEXT_PROMPT, _EN, "Facts (for each, any of its phrasings counts):")
BATCH_REPAIR_PROMPT = "That reply did not give a valid verdict for the facts numbered {missing}. " + _BATCH_FORMAT
BATCH_ANSWER_PROMPT_ZH = _batched(ANSWER_PROMPT_ZH, _ZH, "事实（每条的任一说法都算）：")
BATCH_CONTEXT_PROMPT_ZH = _batched(CONTEXT_PROMPT_ZH, _ZH, "事实（每条的任一说法都算）：")
BATCH_REPAIR_PROMPT_ZH = "上一条回复没有给出编号为 {missing} 的事实的有效判断。" + _BATCH_FORMAT_ZH


@dataclass(frozen=True)
class JudgePrompts:
    """The prompts of one language: about the answer, about the passages, and the repair request, per keypoint and
    batched (all of a case's keypoints in one request per side)."""

    answer: str
    context: str
    repair: str
    batch_answer: str
    batch_context: str
    batch_repair: str


JUDGE_PROMPTS: Mapping[Language, JudgePrompts] = {
    "en": JudgePrompts(
        ANSWER_PROMPT, CONTEXT_PROMPT, REPAIR_PROMPT, BATCH_ANSWER_PROMPT, BATCH_CONTEXT_PROMPT, BATCH_REPAIR_PROMPT
    ),
    "zh": JudgePrompts(
        ANSWER_PROMPT_ZH, CONTEXT_PROMPT_ZH, REPAIR_PROMPT_ZH,
        BATCH_ANSWER_PROMPT_ZH, BATCH_CONTEXT_PROMPT_ZH, BATCH_REPAIR_PROMPT_ZH,
    ),
}
"""The judge's prompts per language of the question (see ``LLMJudgeConfig.prompt_language``)."""


def _verdict_of(payload: Mapping[str, Any]) -> tuple[Verdict, str] | None:
    verdict = str(payload.get("verdict", "")).strip().lower()
    evidence = payload.get("evidence", "")
    for known in VERDICTS:
        if verdict == known:
            return known, evidence if isinstance(evidence, str) else json.dumps(evidence)
    return None


def parse_verdict(reply: str) -> tuple[Verdict, str] | None:
    """``(verdict, evidence)`` from a reply holding one JSON object (code fences and text around it
    are tolerated); ``None`` if there is no such object or its verdict is not one of :data:`VERDICTS`."""
    payload = json_object(reply)
    return None if payload is None else _verdict_of(payload)


def parse_verdicts(reply: str, n: int) -> list[tuple[Verdict, str] | None]:
    """One ``(verdict, evidence)`` per fact 1..``n`` from a batched reply ``{"verdicts": [{"fact": i, ...}, ...]}``;
    None for a fact without a valid entry. An entry is placed by its ``fact`` number, never by its position when the
    number is missing or out of range (placing it would guess); the first valid entry of a number wins.

    >>> parse_verdicts('{"verdicts": [{"fact": 2, "verdict": "absent", "evidence": ""}, {"verdict": "supported"}]}', 2)
    [None, ('absent', '')]
    """
    payload = json_object(reply)
    entries = payload.get("verdicts") if payload is not None else None
    found: list[tuple[Verdict, str] | None] = [None] * n
    for entry in entries if isinstance(entries, list) else []:
        number = entry.get("fact") if isinstance(entry, dict) else None
        if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= n and found[number - 1] is None:
            found[number - 1] = _verdict_of(entry)
    return found


class LLMJudgeConfig(LLMConfig):
    """``judge: {backend: llm, base_url: ..., model: ..., temperature: 0}``; pin model and temperature
    for a whole study. ``parse_retries``: how many times an unparseable reply is answered with a
    request to repair it before the verdict is recorded as missing (``parse_failure``). ``prompt_language``:
    the language the judge is asked in (``auto``: the question's; see :data:`JUDGE_PROMPTS`).
    ``json_schema``: also send :data:`VERDICT_SCHEMA` as the OpenAI ``response_format`` (for endpoints that
    support structured outputs); the reply is parsed and repaired the same way either way."""

    backend: Literal["llm"] = "llm"
    parse_retries: int = Field(2, ge=0, le=10)
    prompt_language: PromptLanguage = "auto"
    json_schema: bool = False
    batch_keypoints: bool = False
    """All of a case's keypoints in one request per side (answer, passages) instead of one per keypoint and side; the
    reply holds one verdict and evidence per numbered keypoint. Keypoints without a valid verdict are asked for again
    with a repair request, then recorded as ``parse_failure``; ``json_schema`` applies to per-keypoint requests only."""


VERDICT_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "keypoint_verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"verdict": {"type": "string", "enum": list(VERDICTS)}, "evidence": {"type": "string"}},
            "required": ["verdict", "evidence"],
            "additionalProperties": False,
        },
    },
}
"""The OpenAI ``response_format`` of a verdict reply: the JSON object every judge prompt asks for."""


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
        language = JUDGE_PROMPTS[prompt_language(question, self.config.prompt_language)]
        if self.config.batch_keypoints and keypoints:
            return self._judge_batched(question, answer.strip(), passages, keypoints, language)
        prompts: list[str | None] = []
        for keypoint in keypoints:
            facts = " / ".join(f'"{alias}"' for alias in keypoint)
            answer_prompt = fill(language.answer, question=question, keypoint=facts, answer=answer.strip())
            prompts.append(answer_prompt if answer.strip() else None)
            prompts.append(fill(language.context, question=question, keypoint=facts, context=passages))
        sides = map_concurrent(partial(self._ask, repair=language.repair), prompts, self.concurrency)
        return [self._combine(sides[i], sides[i + 1]) for i in range(0, len(sides), 2)]

    def _ask(self, prompt: str | None, repair: str) -> _Side:
        """The verdict on ``prompt`` (None: there was no answer to judge); ``repair`` asks again after an
        unparseable reply."""
        if prompt is None:
            return _Side(None, "", "empty_answer")
        messages: list[Message] = [{"role": "user", "content": prompt}]
        for attempt in range(self.config.parse_retries + 1):
            self.requests_made.add()
            try:
                reply = self.client.complete(messages, VERDICT_SCHEMA if self.config.json_schema else None).text
            except BackendError as exc:
                return _Side(None, "", missing_reason_for(exc))
            parsed = parse_verdict(reply)
            if parsed is not None:
                return _Side(parsed[0], parsed[1], None)
            # The conversation grows with each repair, so every retry is a new request (and cache key).
            messages = [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": repair}]
        return _Side(None, "", "parse_failure")

    def _judge_batched(
        self, question: str, answer: str, passages: str, keypoints: Sequence[tuple[str, ...]], language: JudgePrompts
    ) -> list[KeypointVerdict]:
        facts = "\n".join(f"{i}. " + " / ".join(f'"{alias}"' for alias in keypoint) for i, keypoint in enumerate(keypoints, 1))
        answer_prompt = fill(language.batch_answer, question=question, keypoints=facts, answer=answer) if answer else None
        context_prompt = fill(language.batch_context, question=question, keypoints=facts, context=passages)
        ask = partial(self._ask_batch, n=len(keypoints), repair=language.batch_repair)
        on_answer, on_context = map_concurrent(ask, [answer_prompt, context_prompt], self.concurrency)
        return [self._combine(a, c) for a, c in zip(on_answer, on_context)]

    def _ask_batch(self, prompt: str | None, n: int, repair: str) -> list[_Side]:
        """The ``n`` verdicts of one batched ``prompt`` (None: there was no answer to judge). Facts without a valid
        verdict are asked for again (``repair`` names them) up to ``parse_retries`` times, then recorded missing."""
        if prompt is None:
            return [_Side(None, "", "empty_answer")] * n
        found: list[tuple[Verdict, str] | None] = [None] * n
        messages: list[Message] = [{"role": "user", "content": prompt}]
        for attempt in range(self.config.parse_retries + 1):
            self.requests_made.add()
            try:
                reply = self.client.complete(messages).text
            except BackendError as exc:
                reason = missing_reason_for(exc)
                return [_Side(v[0], v[1], None) if v else _Side(None, "", reason) for v in found]
            found = [old or new for old, new in zip(found, parse_verdicts(reply, n))]
            missing = [str(i) for i, verdict in enumerate(found, 1) if verdict is None]
            if not missing:
                break
            messages = [*messages, {"role": "assistant", "content": reply},
                        {"role": "user", "content": fill(repair, missing=", ".join(missing))}]
        return [_Side(v[0], v[1], None) if v else _Side(None, "", "parse_failure") for v in found]

    @staticmethod
    def _combine(answer: _Side, context: _Side) -> KeypointVerdict:
        evidence = " | ".join(
            f'{where}: "{side.evidence}"' for where, side in (("answer", answer), ("context", context)) if side.evidence
        )
        return KeypointVerdict(answer.verdict, context.verdict, evidence, answer.missing_reason or context.missing_reason)


def build_llm(config: LLMJudgeConfig, resources: BackendResources) -> LLMJudge:
    return LLMJudge(config, resources.chat_client(config))
