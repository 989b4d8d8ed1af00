"""Conflicts (dataset → **corruption** → dataset): finding what to corrupt in Chinese text: script detection, typed
values, names and statements.

The Chinese counterparts of :mod:`tuner.corruption._text`, on the same character offsets. Chinese
has no spaces and no capitals, so a value is delimited by what it is glued to (Latin letters and
digits, not CJK characters), and a name is a Latin-script name, a 《title》, or a keypoint alias
that reads as a term rather than a statement (see :func:`is_term`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tuner.corruption._text import Span, _is_name_number, _overlaps
from tuner.text import ARABIC, CJK, NUMBER, has_chinese, parse_number

_LATIN_WORD = re.compile(r"[A-Za-z]+")

_OPEN = r"(?<![A-Za-z0-9.,])"
_CLOSE = r"(?![A-Za-z0-9]|[.,]\d)"
_MULTIPLIER = r"(?:万亿|千万|百万|万|亿)?"
_CURRENCY = r"(?:元|美元|人民币|港元|港币|欧元|日元|英镑|块钱|块)"

DATE_FORMATS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?P<y>\d{4})年(?P<m>\d{1,2})月(?P<d>\d{1,2})[日号]"), "day"),
    (re.compile(r"(?P<y>\d{4})年(?P<m>\d{1,2})月"), "month"),
    (re.compile(r"(?P<m>\d{1,2})月(?P<d>\d{1,2})[日号]"), "monthday"),
    (re.compile(r"(?P<y>(?:1[5-9]|20)\d{2})年"), "year"),
)
"""Chinese date shapes, most specific first, each with the finest field it states (``monthday``: no year)."""

_VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    *(("date", re.compile(_OPEN + pattern.pattern)) for pattern, _ in DATE_FORMATS),
    ("date", re.compile(_OPEN + r"\d{4}-\d{2}-\d{2}" + _CLOSE)),
    ("money", re.compile(rf"{_OPEN}(?:[¥￥$]\s?(?:{ARABIC}){_MULTIPLIER}|(?:{ARABIC})\s?{_MULTIPLIER}\s?{_CURRENCY})")),
    ("percent", re.compile(rf"{_OPEN}(?:{ARABIC})\s?[%％]")),
    ("number", re.compile(rf"{_OPEN}(?:{ARABIC}){_MULTIPLIER}{_CLOSE}")),
)
_MONTH_OR_DAY = re.compile(r"\s?[月日号]")
"""A bare number before 月/日/号 names a month or day ("9月"), not a quantity to scale."""

_LATIN_NAME = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Za-z0-9&'\-]*(?: [A-Z][A-Za-z0-9&'\-]*)*|《[^《》]{1,30}》")
_STATEMENT = re.compile(r"[，,、；;。：:！？!?]|是|有|为|能|会|可以|已|被|不|没|未|非|无")
_TERM_LENGTH = 8


def is_chinese(text: str) -> bool:
    """Chinese rules apply when CJK characters outnumber Latin-script words (mixed zh/en text is Chinese)."""
    return len(CJK.findall(text)) > len(_LATIN_WORD.findall(text))


def find_values(text: str) -> list[Span]:
    """Dates, money amounts, percentages (``5%``, ``百分之五``) and numbers (Arabic, with 万/亿, or Chinese numerals).

    Chinese numerals count only when they read unambiguously as an integer other than a lone
    一/两 (which are mostly articles: ``一个``, ``两岸``); see :mod:`tuner.text` (``parse_number``).
    """
    found: list[Span] = []
    for kind, pattern in _VALUE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if kind == "number" and (_MONTH_OR_DAY.match(text, end) or _is_name_number(text, start)):
                continue
            if not _overlaps(start, end, found):
                found.append(Span(start, end, kind))
    for match in NUMBER.finditer(text):
        numeral = match["number"]
        if numeral is None or not has_chinese(numeral) or numeral in ("一", "两"):
            continue
        value = parse_number(numeral)
        start, end = match.span()
        if value is None or value.denominator != 1 or _MONTH_OR_DAY.match(text, end) or _overlaps(start, end, found):
            continue
        percent = start >= 3 and text[start - 3 : start] == "百分之"
        found.append(Span(start - 3, end, "percent") if percent else Span(start, end, "number"))
    return sorted(found, key=lambda span: span.start)


def find_entities(text: str, values: Sequence[Span] = ()) -> list[Span]:
    """Latin-script names ("Nexon", "MIT OpenCourseWare") and 《titles》, outside ``values``."""
    return [Span(m.start(), m.end(), "entity") for m in _LATIN_NAME.finditer(text) if not _overlaps(m.start(), m.end(), values)]


def is_term(alias: str) -> bool:
    """A short Chinese alias without punctuation or a predicate word (是, 有, 为, 不 ...): a name or term
    to swap for another, rather than a statement to negate."""
    return bool(CJK.search(alias)) and len(alias) <= _TERM_LENGTH and not _STATEMENT.search(alias) and not find_values(alias)
