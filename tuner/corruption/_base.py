"""Conflicts (dataset → **corruption** → dataset): the corruptor interface, what it is given and what it returns."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from tuner.dataset import Document, Keypoint


@dataclass(frozen=True)
class CaseFacts:
    """What a corruptor knows beyond the document.

    ``keypoints`` are those of the golden cases that list the document as relevant (the answers to
    displace or withhold); ``entities`` are the names found anywhere in the corpus (the swap pool).
    """

    keypoints: tuple[Keypoint, ...] = ()
    entities: tuple[str, ...] = ()


@dataclass(frozen=True)
class CorruptedDoc:
    """A corrupted copy of a document.

    ``wrong_values`` are the exact strings of ``text`` that assert a wrong answer (empty for a
    corruption that only withholds the answer), so a judge can tell a misled answer.
    """

    text: str
    wrong_values: tuple[str, ...] = ()


class Corruptor(Protocol):
    """One corruption type. ``corrupt`` returns ``None`` when the document has nothing it can corrupt,
    and raises :class:`CorruptionFailed` when an attempt failed for a reason worth reporting."""

    @property
    def kind(self) -> str:
        """The corruption type's name, as written to conflicts.jsonl."""

    def corrupt(self, document: Document, facts: CaseFacts, severity: str, rng: random.Random) -> CorruptedDoc | None: ...
