"""A generator function for ``backend: callable`` that answers at random from a seeded RNG.

Each call draws the next value of one module-level RNG, so regenerating an answer gives a new
sample (like an LLM at temperature > 0) while a test run stays reproducible after ``reset``.
"""

from __future__ import annotations

import random

_rng = random.Random(0)


def reset(seed: int = 0) -> None:
    _rng.seed(seed)


def answer(question: str, contexts: list[str]) -> str:
    """Each context sentence, kept with probability ½."""
    sentences = [s for text in contexts for s in text.replace("\n", ". ").split(". ") if s.strip()]
    return ". ".join(s for s in sentences if _rng.random() < 0.5) or "I don't know."


def answer_or_fail(question: str, contexts: list[str]) -> str:
    """Like :func:`answer`, but the backend fails for every question about express shipping."""
    if "express" in question.lower():
        raise ConnectionError("service unavailable")
    return answer(question, contexts)
