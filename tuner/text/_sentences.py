"""Text analysis (dataset → **text analysis** → chunks): sentence boundaries for English and Chinese with one splitter
(Chinese end marks never occur in English)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tuner.text._language import CJK_CHARS

_END_ZH = "。！？；"
_CLOSERS = re.escape("」』）”’》〉】〕)]\"'")  # escaped: it goes inside character classes

# Python's look-behind needs a fixed width: one alternative per number of closing marks (0 to 3).
_AFTER_ZH_END = "|".join(f"(?<=[{_END_ZH}]{f'[{_CLOSERS}]' * n})" for n in range(4))

SENTENCE_BREAK = re.compile(
    r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9$€£])"
    r"|\n\s*"
    rf"|(?:{_AFTER_ZH_END})(?![{_END_ZH}{_CLOSERS}])\s*"
    rf"|(?<=[!?])\s*(?=[{CJK_CHARS}])"
)
"""A match is the gap between two sentences (possibly empty). A sentence ends:

- at a line break;
- English: at . ! ? followed by space and a capital, digit or currency sign (so "v2.5 is out" and
  "e.g. foo" stay whole);
- Chinese: after 。！？； and any closing quotes or brackets right after them (「好。」 keeps its 」),
  unless another end mark follows (？！ is one end);
- at a half-width ! or ? directly followed by a CJK ideograph (informal Chinese text).

A heuristic, good enough to pick, rewrite and chunk sentences. Find its matches with :func:`sentence_breaks`."""

_BREAK_MARK = re.compile(rf"[.!?{_END_ZH}{_CLOSERS}]|\n")
"""What every :data:`SENTENCE_BREAK` match starts at or right after: a line break starts one, an end mark or closer
precedes one (each other alternative opens with a look-behind at those)."""

_HAS_WORD = re.compile(r"\w")


def sentence_breaks(text: str) -> Iterator[re.Match[str]]:
    """``SENTENCE_BREAK.finditer(text)``: the same matches, several times faster on long text. ``finditer`` tries
    the pattern's look-behinds at every character; here it is tried only where :data:`_BREAK_MARK` says a match can
    start. After an empty match the next one starts a character later, as in ``finditer`` (no non-empty match can
    start where an empty one did: the empty alternatives match only where no whitespace follows)."""
    searched = 0  # where finditer would search from
    for mark in _BREAK_MARK.finditer(text):
        at = mark.start() if mark.group() == "\n" else mark.end()
        if at < searched:
            continue
        gap = SENTENCE_BREAK.match(text, at)  # look-behinds see the text before ``at``
        if gap is not None:
            yield gap
            searched = gap.end() + (gap.end() == gap.start())
        else:
            searched = at + 1


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each sentence of ``text`` (see :data:`SENTENCE_BREAK`), without surrounding
    whitespace; pieces without a word character (a lone "..." or "——") are dropped."""
    spans: list[tuple[int, int]] = []
    start = 0
    for gap in (*sentence_breaks(text), None):
        end = len(text) if gap is None else gap.start()
        piece = text[start:end]
        if _HAS_WORD.search(piece):
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        if gap is not None:
            start = gap.end()
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` as strings, in order (see :func:`sentence_spans`)."""
    return [text[start:end] for start, end in sentence_spans(text)]
