"""Conflicts (dataset → **corruption** → dataset): LLM-written corruptions: the same :class:`Corruptor` interface, the
rewrite done by a chat model.

Imported only when an endpoint is configured (``tuner corrupt --llm-config FILE``), so the
rule-based path never loads the OpenAI client.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from tuner.errors import CorruptionFailed
from tuner.corruption._base import CaseFacts, CorruptedDoc, Corruptor
from tuner.corruption._text import contains_any
from tuner.dataset import Document
from tuner.llm import BackendError, ChatClient, LLMConfig, fill, json_object
from tuner.backends import BackendResources

KIND_INSTRUCTIONS = {
    "factual_corruption": "replace each answer-bearing fact with a plausible wrong value of the same type "
    "(number, date, amount, name); keep the structure, the tone and every other sentence.",
    "contradiction_injection": "assert a wrong answer outright and explicitly, e.g. 'Contrary to earlier reports, "
    "X is Y', or negate the statement ('is' -> 'is not'); the right value must no longer appear.",
    "numeric_typo": "garble the numbers (amounts, percentages, counts, dates) as typos would; change nothing else.",
    "relevance_poisoning": "write on-topic filler that still mentions the same names but leaves out every "
    "answer-bearing fact; state nothing false.",
}
SEVERITY_INSTRUCTIONS = {
    "subtle": "subtle: hard to notice (close values, one digit off, mild wording).",
    "moderate": "moderate: noticeable but plausible (values about doubled or halved, dates moved by months).",
    "obvious": "obvious: clearly wrong or absurd to an attentive reader.",
}
PROMPT = (
    "You create test data for a retrieval-augmented question answering system: a corrupted copy of a DOCUMENT.\n"
    "Corruption: {kind}: {kind_instruction}\n"
    "Severity: {severity_instruction}\n"
    "Facts a reader looks for in this document: {facts}\n\n"
    "DOCUMENT:\n{document}\n\n"
    'Reply with only a JSON object: {"text": "<the corrupted document>", "wrong_values": '
    '["<each wrong value the new text asserts, copied exactly from it>"]}. '
    "For relevance_poisoning, wrong_values is []."
)


def parse_rewrite(reply: str) -> tuple[str, tuple[str, ...]] | None:
    """``(text, wrong_values)`` from a reply holding one JSON object (code fences and surrounding text
    tolerated); ``None`` if there is none or its fields have the wrong types."""
    payload = json_object(reply)
    if payload is None:
        return None
    text, wrong = payload.get("text"), payload.get("wrong_values", [])
    if not isinstance(text, str) or not isinstance(wrong, list) or not all(isinstance(w, str) for w in wrong):
        return None
    return text.strip(), tuple(w.strip() for w in wrong if w.strip())


@dataclass(frozen=True)
class LLMCorruptor:
    """Asks the model for one corrupted copy per call and checks the reply before keeping it.

    Kept only if the text changed; misleading kinds must name at least one wrong value that occurs
    in the text (values that do not occur are dropped); ``relevance_poisoning`` asserts none and must
    not state any keypoint the original stated. A failed check or a non-fatal request failure is
    recorded as a skipped conflict with its reason; a fatal one (unreachable endpoint, rejected key)
    stops the run. Determinism comes from the endpoint's ``temperature``/``seed`` and the call cache,
    so ``rng`` is not used.
    """

    kind: str
    client: ChatClient

    def corrupt(self, document: Document, facts: CaseFacts, severity: str, rng: random.Random) -> CorruptedDoc | None:
        stated = [aliases for aliases in facts.keypoints if contains_any(document.text, aliases)]
        prompt = fill(
            PROMPT,
            kind=self.kind,
            kind_instruction=KIND_INSTRUCTIONS[self.kind],
            severity_instruction=SEVERITY_INSTRUCTIONS[severity],
            facts="; ".join(" / ".join(aliases) for aliases in stated) or "(not given: change those that look answer-bearing)",
            document=document.text,
        )
        try:
            reply = self.client.complete([{"role": "user", "content": prompt}])
        except BackendError as exc:
            if exc.fatal:
                raise
            raise CorruptionFailed(f"model request failed ({exc.kind})") from None
        parsed = parse_rewrite(reply.text)
        if parsed is None:
            raise CorruptionFailed("unparseable model reply")
        text, wrong = parsed
        if not text or text == document.text.strip():
            raise CorruptionFailed("model reply left the document unchanged")
        if self.kind == "relevance_poisoning":
            if any(contains_any(text, aliases) for aliases in stated):
                raise CorruptionFailed("model reply kept an answer-bearing fact")
            return CorruptedDoc(text)
        found = tuple(dict.fromkeys(w for w in wrong if w in text))
        if not found:
            raise CorruptionFailed("model reply named no wrong value found in its text")
        return CorruptedDoc(text, found)


def llm_corruptors(
    config: LLMConfig, kinds: Sequence[str], resources: BackendResources | None = None
) -> tuple[dict[str, Corruptor], int]:
    """One :class:`LLMCorruptor` per kind sharing one client, and the concurrency to run them at."""
    client = (resources or BackendResources()).chat_client(config)
    return {kind: LLMCorruptor(kind, client) for kind in kinds}, config.concurrency
