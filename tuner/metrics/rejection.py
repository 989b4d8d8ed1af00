"""Metrics (verdicts → **metrics** → trial record): rejection: the answer abstains instead of answering (the desired
outcome for v4 unrelated-only contexts)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from tuner.text import cjk_share

ABSTENTION_PHRASES: Final[tuple[str, ...]] = (
    "i don't know",
    "i do not know",
    "cannot be determined from the context",
    "can't be determined from the context",
    "cannot be answered from the context",
    "not enough information",
    "insufficient information",
    "the context does not contain",
    "the context does not provide",
    "the context does not mention",
    "i cannot answer",
    "i can't answer",
    "unable to answer",
    "我不知道",
    "无法回答",
    "无法从上下文",
    "无法根据上下文",
    "根据上下文无法",
    "上下文中没有",
    "上下文没有",
    "上下文未提及",
    "上下文中未提及",
    "上下文未提供",
    "段落中没有",
    "没有足够的信息",
    "信息不足",
)

_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc`]")
_NON_WORD = re.compile(r"[^\w]+")


def normalize(text: str) -> str:
    """Casefold, drop apostrophes (so "don't", "don’t" and "dont" agree), turn other punctuation into spaces."""
    without_apostrophes = _APOSTROPHES.sub("", text.casefold())
    return " ".join(_NON_WORD.sub(" ", without_apostrophes).split())


def rejected(answer_text: str, phrases: Iterable[str] = ABSTENTION_PHRASES) -> bool:
    """rejected = ∃ p ∈ phrases: normalize(p) occurs as whole words in normalize(answer_text); a phrase
    holding a CJK ideograph occurs anywhere, since Chinese does not put spaces between words.

    The v4 rejection rate is the mean of this flag over v4 answers. An empty answer is not an
    abstention: callers record it as missing ("empty answer"). A phrase that normalizes to nothing
    would match every answer and raises ``ValueError``.

    >>> rejected("I don’t know, the context does not say.")
    True
    """
    padded = f" {normalize(answer_text)} "
    for phrase in phrases:
        needle = normalize(phrase)
        if not needle:
            raise ValueError(f"abstention phrase {phrase!r} is empty after normalization")
        if (needle in padded) if cjk_share([needle]) > 0 else (f" {needle} " in padded):
            return True
    return False
