"""The judge interface: per keypoint, two separate verdicts (does the answer state it? does the context support it?)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Verdict = Literal["supported", "contradicted", "absent"]
VERDICTS: tuple[Verdict, ...] = ("supported", "contradicted", "absent")
MISSING_REASONS = ("timeout", "parse_failure", "backend_error", "empty_answer")


@dataclass(frozen=True)
class KeypointVerdict:
    """Verdicts for one keypoint. ``answer``: what the answer says about it; ``context``: what the
    contexts say about it. A ``None`` verdict is a missing score and always comes with
    ``missing_reason`` (the first side's reason if both are missing); ``evidence`` quotes the text
    the verdicts rest on, prefixed ``answer:`` or ``context[i]:``."""

    answer: Verdict | None
    context: Verdict | None
    evidence: str = ""
    missing_reason: str | None = None

    def __post_init__(self) -> None:
        if (self.answer is None or self.context is None) != (self.missing_reason is not None):
            raise ValueError(f"a missing verdict needs a missing_reason and only then: {self!r}")


class Judge(Protocol):
    """Scores an answer and its contexts against a case's keypoints (each a tuple of aliases).

    ``wrong_answers`` are values known to be wrong for this case (the golden case's
    ``wrong_answers`` plus the wrong values of the conflicts in play). ``concurrency`` is how many
    ``judge`` calls the caller may run at once.
    """

    name: str
    concurrency: int

    def judge(
        self,
        question: str,
        answer: str,
        contexts: Sequence[str],
        keypoints: Sequence[tuple[str, ...]],
        wrong_answers: Sequence[str],
    ) -> list[KeypointVerdict]: ...
