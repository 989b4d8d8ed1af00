"""Verdicts (answers → **verdicts** → metrics): an offline judge by normalized string matching: deterministic, free, and
blind to paraphrase.

Short keypoints (a value, a name) must occur exactly, as whole tokens; long ones (a sentence) by token
F1 over the best window (see :mod:`tuner.judging._overlap`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from pydantic import Field

from tuner.judging._normalize import Normalized, normalize
from tuner.judging._overlap import best_window
from tuner.verdicts import KeypointVerdict, Verdict
from tuner.llm import RequestCount
from tuner.backends import BackendResources
from tuner.strict import StrictModel


class LexicalJudgeConfig(StrictModel):
    """``judge: {backend: lexical}`` (the default).

    ``long_keypoint_tokens``: a keypoint alias (or wrong value) of more normalized tokens than this is
    matched by token F1 instead of exactly (a Chinese character is a token). ``min_f1``: the token F1 a
    window of the text needs to state a long keypoint. See docs/metrics.md for how both were chosen.
    """

    backend: Literal["lexical"] = "lexical"
    long_keypoint_tokens: int = Field(5, ge=1)
    min_f1: float = Field(0.5, gt=0.0, le=1.0)


@dataclass(frozen=True)
class _Hit:
    where: str
    quote: str


def wrong_values_per_keypoint(keypoints: Sequence[Sequence[str]], wrong: Sequence[str]) -> list[list[str]]:
    """Which normalized wrong values can contradict each keypoint.

    A case lists its wrong values once, not per keypoint, so each wrong value is attributed to the
    keypoint(s) whose aliases it most resembles (highest ``difflib`` ratio, all ties), e.g. "$1,199"
    to "$1,299" rather than to "two-year warranty"; with one keypoint every wrong value is its own.
    A wrong value equal to one of a keypoint's aliases is dropped for that keypoint.
    """
    aliases = [[normalize(a).text for a in kp] for kp in keypoints]
    targets: list[list[str]] = [[] for _ in keypoints]
    for value in dict.fromkeys(normalize(w).text for w in wrong):
        if not value:
            continue
        ratios = [max(SequenceMatcher(None, value, a).ratio() for a in kp) for kp in aliases]
        best = max(ratios, default=0.0)
        for index, ratio in enumerate(ratios):
            if (len(keypoints) == 1 or ratio == best) and value not in aliases[index]:
                targets[index].append(value)
    return targets


def _verdict(support: _Hit | None, conflict: _Hit | None) -> tuple[Verdict, str]:
    """Support wins over a conflicting mention; evidence reports both when both are present."""
    if support is not None:
        evidence = f'{support.where}: "{support.quote}"'
        if conflict is not None:
            evidence += f'; also wrong value at {conflict.where}: "{conflict.quote}"'
        return "supported", evidence
    if conflict is not None:
        return "contradicted", f'{conflict.where}: "{conflict.quote}" (wrong value)'
    return "absent", ""


class LexicalJudge:
    """Keypoint matching on normalized text (see :mod:`tuner.judging._normalize`).

    An alias *occurs* in a text when, after normalization, it is found there as whole tokens — or, for
    an alias of more than ``long_keypoint_tokens`` tokens, when some window of the text reaches token F1
    ≥ ``min_f1`` against it and holds every one of its number tokens (:func:`~tuner.judging._overlap.best_window`).
    Wrong values occur by the same rule.

    Answer: ``supported`` if any alias of the keypoint occurs in the answer; else ``contradicted`` if one of the keypoint's wrong values occurs; else
    ``absent``. Context: the same over all contexts together — ``supported`` if any context
    contains an alias, even when another context states a wrong value (the conflict is then quoted
    in the evidence: the right fact was available, and the conflict is the variant's doing);
    ``contradicted`` if only wrong values occur; ``absent`` otherwise. An empty answer gets no
    answer verdict (``missing_reason="empty_answer"``). Chinese keypoints are found inside
    unsegmented sentences, with Chinese numerals, 万/亿, 年月日 dates and 百分之 meeting their Arabic
    and ISO forms ("三十天" states "30天"). Paraphrases ("two years" for "24 months") are not
    recognized: list them as aliases, or use the ``llm`` judge.
    """

    name = "lexical"
    concurrency = 1

    def __init__(self, long_keypoint_tokens: int = 5, min_f1: float = 0.5) -> None:
        self.requests_made = RequestCount()
        self.long_keypoint_tokens = long_keypoint_tokens
        self.min_f1 = min_f1

    def _find(self, needle: str, text: Normalized) -> tuple[int, int] | None:
        """Where normalized ``needle`` occurs in ``text``: exactly if short, by best-window F1 if long."""
        if len(needle.split()) <= self.long_keypoint_tokens:
            return text.find(needle)
        match = best_window(needle, text)
        return match.span if match is not None and match.f1 >= self.min_f1 else None

    def _first_hit(self, needles: Sequence[str], texts: Sequence[tuple[str, Normalized]]) -> _Hit | None:
        """The first needle found in the first text that has any (texts in their given order)."""
        for where, text in texts:
            for needle in needles:
                span = self._find(needle, text)
                if span is not None:
                    return _Hit(where, text.quote(*span))
        return None

    def judge(
        self,
        question: str,
        answer: str,
        contexts: Sequence[str],
        keypoints: Sequence[tuple[str, ...]],
        wrong_answers: Sequence[str],
    ) -> list[KeypointVerdict]:
        answer_text = [("answer", normalize(answer))] if answer.strip() else []
        context_texts = [(f"context[{i}]", normalize(text)) for i, text in enumerate(contexts, start=1)]
        wrong = wrong_values_per_keypoint(keypoints, wrong_answers)
        # what a two-question judge would send (one prompt each for answer and context), so call budgets
        # and pruning savings read the same offline as with an LLM judge
        self.requests_made.add(2 * len(keypoints))
        verdicts: list[KeypointVerdict] = []
        for keypoint, wrong_values in zip(keypoints, wrong):
            aliases = [normalize(alias).text for alias in keypoint]
            context, context_evidence = _verdict(
                self._first_hit(aliases, context_texts), self._first_hit(wrong_values, context_texts)
            )
            if not answer_text:
                verdicts.append(KeypointVerdict(None, context, context_evidence, "empty_answer"))
                continue
            stated, answer_evidence = _verdict(
                self._first_hit(aliases, answer_text), self._first_hit(wrong_values, answer_text)
            )
            evidence = " | ".join(e for e in (answer_evidence, context_evidence) if e)
            verdicts.append(KeypointVerdict(stated, context, evidence))
        return verdicts


def build_lexical(config: LexicalJudgeConfig, resources: BackendResources) -> LexicalJudge:
    return LexicalJudge(config.long_keypoint_tokens, config.min_f1)
