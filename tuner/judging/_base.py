"""Verdicts (answers → **verdicts** → metrics): the judge interface: per keypoint, two separate verdicts (does the
answer state it? does the context support it?)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from tuner.llm import RequestCount
from tuner.verdicts import KeypointVerdict


class Judge(Protocol):
    """Scores an answer and its contexts against a case's keypoints (each a tuple of aliases).

    ``wrong_answers`` are values known to be wrong for this case (the golden case's
    ``wrong_answers`` plus the wrong values of the conflicts in play). ``concurrency`` is how many
    ``judge`` calls the caller may run at once; ``requests_made`` counts the requests the judge made
    (see :class:`~tuner.llm.RequestCount`).
    """

    name: str
    concurrency: int
    requests_made: RequestCount

    def judge(
        self,
        question: str,
        answer: str,
        contexts: Sequence[str],
        keypoints: Sequence[tuple[str, ...]],
        wrong_answers: Sequence[str],
    ) -> list[KeypointVerdict]: ...
