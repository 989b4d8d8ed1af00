"""Verdicts (answers → **verdicts** → metrics): token overlap of a long keypoint with a text: the lexical judge's rule
for keypoints longer than a few tokens.

Long-form references (a sentence or two) are almost never repeated verbatim, so exact matching finds
them nowhere. Token-level F1 (SQuAD style, over normalized tokens; a Chinese character is a token)
credits a text that says the same thing in nearly the same words, with a different order or a few
words added, dropped or inflected differently.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tuner.judging._normalize import Normalized

_NUMERAL = re.compile(r"\d")


@dataclass(frozen=True)
class WindowMatch:
    """The best window: its token F1 and its span (start, end) in the normalized text."""

    f1: float
    span: tuple[int, int]


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) of each space-separated token of normalized ``text``."""
    return [(m[0], m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def token_f1(prediction: list[str], reference: list[str]) -> float:
    """F1 = 2·P·R / (P + R) with P = overlap / |prediction|, R = overlap / |reference|, overlap = Σ_t min(c_pred(t), c_ref(t)).

    The SQuAD token F1 on bags of tokens; 0 when either side is empty or nothing overlaps.

    >>> round(token_f1(["released", "on", "august", "8"], ["first", "released", "august", "8", "2014"]), 4)
    0.6667
    """
    overlap = sum((Counter(prediction) & Counter(reference)).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / len(prediction), overlap / len(reference)
    return 2 * precision * recall / (precision + recall)


def best_window(needle: str, text: Normalized) -> WindowMatch | None:
    """The window of ``text`` with the highest token F1 against normalized ``needle`` (first one on ties).

    Windows are runs of L = |needle tokens| consecutive tokens of the text (the whole text when it is
    shorter), so within the text F1 = overlap / L; a sliding count keeps it linear in the text length.
    A window qualifies only if it contains every token of the needle that holds a digit: numbers,
    dates and amounts are what conflicting versions change, and a sentence that states the same thing
    with another number says something else. None when no window qualifies or either side is empty.
    """
    reference = needle.split()
    tokens = _tokens(text.text)
    if not reference or not tokens:
        return None
    want = Counter(reference)
    numerals = {t for t in want if _NUMERAL.search(t)}
    size = min(len(reference), len(tokens))
    window: Counter[str] = Counter(t for t, _, _ in tokens[:size])
    overlap = sum(min(count, want[t]) for t, count in window.items())
    best: WindowMatch | None = None
    for start in range(len(tokens) - size + 1):
        if start:
            gone, came = tokens[start - 1][0], tokens[start + size - 1][0]
            overlap -= window[gone] <= want[gone]
            window[gone] -= 1
            window[came] += 1
            overlap += window[came] <= want[came]
        if overlap and all(window[t] for t in numerals):
            f1 = 2 * overlap / (size + len(reference))
            if best is None or f1 > best.f1:
                best = WindowMatch(f1, (tokens[start][1], tokens[start + size - 1][2]))
    return best
