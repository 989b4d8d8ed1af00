"""Conflicts (dataset → **corruption** → dataset): finding what to corrupt in a text: typed values, named entities,
answer spans and sentences.

Everything here works on character offsets into the original text, so a corruption can rewrite
exactly the span where the answer was and leave the rest of the document byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tuner.text import ARABIC, CJK, sentence_breaks
from tuner.dataset import Keypoint

MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
NUMERAL = re.compile(ARABIC)
# A value must not be glued to a word or to more digits ("X100", "v2.1" and "2,5" are not values).
_OPEN = r"(?<![\w.,])"
_CLOSE = r"(?![\w]|[.,]\d)"

DATE_FORMATS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"), "day"),
    (re.compile(rf"(?P<mon>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?P<ord>st|nd|rd|th)?,?\s+(?P<y>\d{{4}})"), "day"),
    (re.compile(rf"(?P<d>\d{{1,2}})(?P<ord>st|nd|rd|th)?\s+(?P<mon>{_MONTH})\.?,?\s+(?P<y>\d{{4}})"), "day"),
    (re.compile(rf"(?P<mon>{_MONTH})\.?,?\s+(?P<y>\d{{4}})"), "month"),
    (re.compile(r"(?P<y>(?:19|20)\d{2})"), "year"),
)
"""Date shapes, most specific first, each with the finest field it states."""

_VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    *(("date", re.compile(_OPEN + pattern.pattern + _CLOSE)) for pattern, _ in DATE_FORMATS),
    (
        "money",
        re.compile(
            rf"{_OPEN}(?:[$€£¥]\s?(?:{ARABIC})(?:\s?(?:k|K|m|M|bn|million|billion|thousand)\b)?"
            rf"|(?:{ARABIC})\s?(?:USD|EUR|GBP|dollars|euros|pounds)\b)"
        ),
    ),
    ("percent", re.compile(rf"{_OPEN}(?:{ARABIC})\s?(?:%|percent\b)")),
    ("number", re.compile(rf"{_OPEN}(?:{ARABIC}){_CLOSE}")),
)


_ENTITY = re.compile(r"(?<![\w])[A-Z][A-Za-z0-9&'\-]*(?:[ ](?:[A-Z][A-Za-z0-9&'\-]*|\d+(?![\w%]|[.,]\d)))*")
_NAME_BEFORE = re.compile(r"(?:^|\s)(?P<word>[A-Z][A-Za-z0-9&'\-]*) $")
_NOT_NAMES = frozenset(
    """a an the this that these those it its our we you your they their he she his her i
    each every all any some most many in on at for from with by as after before if when while
    since during and but or to of not no yes also however then there here what which who how
    monday tuesday wednesday thursday friday saturday sunday""".split()
) | {m.lower() for m in MONTH_NAMES}


@dataclass(frozen=True)
class Span:
    """``text[start:end]``; ``kind`` is date, money, percent, number or entity."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class AnswerSpan:
    """Where the answer to one or more golden keypoints (indices into the case facts) sits in a text."""

    start: int
    end: int
    keypoints: frozenset[int]


def _overlaps(start: int, end: int, spans: Iterable[Span | AnswerSpan]) -> bool:
    return any(start < s.end and s.start < end for s in spans)


def find_values(text: str) -> list[Span]:
    """Dates, money amounts, percentages and plain numbers, leftmost-longest by that priority."""
    found: list[Span] = []
    for kind, pattern in _VALUE_PATTERNS:
        for match in pattern.finditer(text):
            if kind == "number" and _is_name_number(text, match.start()):
                continue
            if not _overlaps(match.start(), match.end(), found):
                found.append(Span(match.start(), match.end(), kind))
    return sorted(found, key=lambda span: span.start)


def _is_name_number(text: str, start: int) -> bool:
    """A bare number right after a capitalized name word is part of the name ("Pro 7", "Windows 11")."""
    before = _NAME_BEFORE.search(text[max(0, start - 40) : start])
    return before is not None and before.group("word").lower() not in _NOT_NAMES


def sentence_spans(text: str, protected: Sequence[Span | AnswerSpan] = ()) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence; a break inside a protected span is not a break."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in sentence_breaks(text):
        if _overlaps(match.start(), match.end(), protected):
            continue
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def find_entities(text: str, values: Sequence[Span] = ()) -> list[Span]:
    """Capitalized names ("Acme Corp", "X100"), without leading function words or date parts.

    A single capitalized word that opens a sentence is a name only if it has a digit or an inner
    capital, or is also capitalized mid-sentence somewhere: otherwise it is just the first word.
    """
    starts = {start for start, _ in sentence_spans(text)}
    midsentence: set[str] = set()
    candidates: list[Span] = []
    for match in _ENTITY.finditer(text):
        start, words = match.start(), match.group().split(" ")
        while words and words[0].lower().strip("'") in _NOT_NAMES:
            start += len(words[0]) + 1
            words = words[1:]
        while words and (words[-1].lower() in _NOT_NAMES or words[-1].isdigit() and _overlaps(
            start + len(" ".join(words)) - len(words[-1]), start + len(" ".join(words)), values
        )):
            words = words[:-1]
        if not words:
            continue
        name = " ".join(words).removesuffix("'s")
        end = start + len(name)
        if _overlaps(start, end, values) or len(name) < 2:
            continue
        if start not in starts:
            midsentence.add(name)
        candidates.append(Span(start, end, "entity"))
    entities = []
    for span in candidates:
        name = text[span.start : span.end]
        distinctive = " " in name or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])
        if span.start in starts and not distinctive and name not in midsentence:
            continue
        entities.append(span)
    return entities


def answer_spans(text: str, keypoints: Sequence[Keypoint], values: Sequence[Span]) -> list[AnswerSpan]:
    """Every occurrence (case-insensitive) of every keypoint alias, widened to whole values and words.

    "12" inside "$12.99" widens to "$12.99", "30" inside "30-day" stays "30" plus the value it is;
    a CJK character is a word of its own ("30天" inside "退货期为30天内" stays "30天");
    overlapping occurrences merge, keeping the set of keypoints each span answers.
    """
    lower = text.lower()
    raw: list[tuple[int, int, int]] = []
    for index, aliases in enumerate(keypoints):
        for alias in aliases:
            needle = alias.strip().lower()
            at = lower.find(needle)
            while needle and at != -1:
                raw.append((*_widen(text, at, at + len(needle), values), index))
                at = lower.find(needle, at + 1)
    merged: list[AnswerSpan] = []
    for start, end, index in sorted(raw):
        if merged and start < merged[-1].end:
            last = merged.pop()
            merged.append(AnswerSpan(last.start, max(last.end, end), last.keypoints | {index}))
        else:
            merged.append(AnswerSpan(start, end, frozenset({index})))
    return merged


def _widen(text: str, start: int, end: int, values: Sequence[Span]) -> tuple[int, int]:
    def glued(a: str, b: str) -> bool:
        return a.isalnum() and b.isalnum() and not CJK.match(a) and not CJK.match(b)

    for _ in range(2):
        for value in values:
            if start < value.end and value.start < end:
                start, end = min(start, value.start), max(end, value.end)
        while start > 0 and glued(text[start - 1], text[start]):
            start -= 1
        while end < len(text) and glued(text[end], text[end - 1]):
            end += 1
    return start, end


def apply_edits(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """Replace non-overlapping ``(start, end, new)`` ranges of ``text``."""
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def contains_any(text: str, needles: Iterable[str]) -> bool:
    lower = text.lower()
    return any(needle.strip().lower() in lower for needle in needles if needle.strip())
