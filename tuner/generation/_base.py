"""Answers (variants → **answers** → verdicts): the generator interface: a question and ordered context texts in, one
answer (or a missing reason) out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tuner.llm import RequestCount
from tuner.verdicts import GENERATION_MISSING

ABSTAIN = "I don't know."
"""What a generator says when the context does not answer the question; a real answer, not a missing one."""



@dataclass(frozen=True)
class Answer:
    """A generated answer. Exactly one of ``text`` (non-blank) and ``missing_reason`` is set, so a
    failed generation can never pass as an empty string that a judge scores as "absent"."""

    text: str
    missing_reason: str | None = None

    def __post_init__(self) -> None:
        if bool(self.text.strip()) == (self.missing_reason is not None):
            raise ValueError(f"Answer needs text or a missing_reason, not both or neither: {self!r}")
        if self.missing_reason is not None and self.missing_reason not in GENERATION_MISSING:
            raise ValueError(f"unknown missing_reason {self.missing_reason!r}; expected one of {GENERATION_MISSING}")

    @classmethod
    def missing(cls, reason: str) -> Answer:
        return cls("", reason)

    @classmethod
    def of(cls, text: str) -> Answer:
        """``text`` as an answer, or a missing ``empty_answer`` when it is blank."""
        return cls(text.strip()) if text.strip() else cls.missing("empty_answer")


class Generator(Protocol):
    """Answers a question from contexts given in retrieval order (the order is part of the input).

    ``concurrency`` is how many ``generate`` calls the caller may run at once (see
    :func:`tuner.llm.map_concurrent`); ``requests_made`` counts the answers it produced (see
    :class:`~tuner.llm.RequestCount`).
    """

    name: str
    concurrency: int
    requests_made: RequestCount

    def generate(self, question: str, contexts: Sequence[str]) -> Answer: ...
