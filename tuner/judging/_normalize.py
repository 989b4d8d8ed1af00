"""Verdicts (answers → **verdicts** → metrics): text normalization for lexical matching that remembers where each
normalized character came from.

Both sides of a comparison go through :func:`normalize`, so "$1,299", "1 299" and "1299" meet as
"1299", "March 1, 2024", "1 March 2024" and "2024-03-01" as "2024 03 01", "thirty" as "30", "30%"
and "30 per cent" as "30 percent". Each output character keeps the span of source text it came
from, so a match found in normalized text can be quoted verbatim from the original.

Chinese: full-width characters fold to ASCII; Chinese numerals become Arabic ("七十" → "70",
"1361万" → "13610000", "1.5亿" → "150000000"; see :mod:`tuner.text` (``parse_number``) for what is left alone, e.g.
"十分" "very"); "2016年9月4日", "2016年9月", "9月4日" become "2016 09 04", "2016 09", "09 04" (the
English forms), a year "2016年" becomes "2016"; "百分之五" becomes "5 percent". Every CJK character
is then a token of its own ("退货期为30天" → "退 货 期 为 30 天"), so a keypoint is found inside a
sentence that has no spaces.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from tuner.text import CJK, NUMBER, format_number, has_chinese, parse_number

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
]  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_CHAR_MAP = {"\u2018": "'", "\u2019": "'", "\u02bc": "'", "`": "'", "\u201c": '"', "\u201d": '"'}

_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
# Without a year, "may 5" is more often the verb than a date.
_MONTH_NO_YEAR = "|".join(sorted(set(_MONTHS) - {"may"}, key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th)?"


@dataclass(frozen=True)
class Normalized:
    """``text`` is the normalized form of ``source``; character ``i`` of it came from
    ``source[starts[i]:ends[i]]``."""

    source: str
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def find(self, needle: str) -> tuple[int, int] | None:
        """The first occurrence of normalized ``needle`` as whole tokens, as (start, end) in ``text``."""
        if not needle:
            return None
        index = f" {self.text} ".find(f" {needle} ")
        return None if index < 0 else (index, index + len(needle))

    def quote(self, start: int, end: int) -> str:
        """The source text behind ``text[start:end]``."""
        return self.source[self.starts[start] : self.ends[end - 1]]


def _fold_chars(source: str) -> Normalized:
    """Case-fold, strip accents and unify quote characters, one source character at a time."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for index, char in enumerate(source):
        char = _CHAR_MAP.get(char, char)
        folded = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c)).casefold()
        out.append(folded)
        starts.extend([index] * len(folded))
        ends.extend([index + 1] * len(folded))
    return Normalized(source, "".join(out), tuple(starts), tuple(ends))


def _substitute(state: Normalized, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str | None]) -> Normalized:
    """Replace each match of ``pattern``; replacement characters map to the whole span they replace.

    ``replace`` returning ``None`` keeps the match as it is, each character with its own span.
    """
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for match in pattern.finditer(state.text):
        begin, end = match.span()
        out.append(state.text[position:begin])
        starts.extend(state.starts[position:begin])
        ends.extend(state.ends[position:begin])
        replacement = replace(match)
        if replacement is None:
            replacement = state.text[begin:end]
            out.append(replacement)
            starts.extend(state.starts[begin:end])
            ends.extend(state.ends[begin:end])
        elif replacement and end > begin:
            out.append(replacement)
            starts.extend([state.starts[begin]] * len(replacement))
            ends.extend([state.ends[end - 1]] * len(replacement))
        position = end
    out.append(state.text[position:])
    starts.extend(state.starts[position:])
    ends.extend(state.ends[position:])
    return Normalized(state.source, "".join(out), tuple(starts), tuple(ends))


def _date(year: str | None, month: int, day: str | None = None) -> str | None:
    """``YYYY MM``, ``YYYY MM DD`` or (no year) ``MM DD``; None for a month or day out of range."""
    if not 1 <= month <= 12 or (day is not None and not 1 <= int(day) <= 31):
        return None
    return " ".join(([f"{int(year):04d}"] if year is not None else []) + [f"{month:02d}"] + ([f"{int(day):02d}"] if day is not None else []))


def _iso_date(m: re.Match[str]) -> str:
    return _date(m["y"], int(m["m"]), m["d"]) or m[0]


def _named_date(m: re.Match[str]) -> str:
    return _date(m["y"], _MONTHS[m["mon"]], m.groupdict().get("d")) or m[0]


def _month_day(m: re.Match[str]) -> str:
    return _date(None, _MONTHS[m["mon"]], m["d"]) or m[0]


def _tens(m: re.Match[str]) -> str:
    return str(_TENS[m["tens"]] + (_UNITS.index(m["unit"]) if m["unit"] else 0))


def _strip_zeros(m: re.Match[str]) -> str:
    return m["int"] + (f".{m['frac']}" if m["frac"] else "")


def _chinese_number(m: re.Match[str]) -> str | None:
    if m["word"] or not has_chinese(m["number"]):
        return None
    value = parse_number(m["number"])
    return None if value is None else format_number(value)


def _chinese_date(m: re.Match[str]) -> str | None:
    fields = m.groupdict()
    date = _date(fields.get("y"), int(fields["m"]), fields.get("d"))
    return None if date is None else f" {date} "


_CHINESE_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    (NUMBER, _chinese_number),
    (re.compile(r"(?<!\d)(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"), _chinese_date),
    (re.compile(r"(?<!\d)(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月"), _chinese_date),
    (re.compile(r"(?<!\d)(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号]"), _chinese_date),
    (re.compile(r"(?<!\d)(?P<y>(?:1[5-9]|20)\d\d)\s*年"), lambda m: f" {m['y']} "),
    (re.compile(r"百分之\s*(?:(?P<n>\d+(?:\.\d+)?)|百)"), lambda m: f" {m['n'] or 100} percent "),
    (CJK, lambda m: f" {m[0]} "),
)
"""Before the English rules: these read characters that the English ``\\b`` cannot separate."""

_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    *_CHINESE_RULES,
    (re.compile(r"\b(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})\b"), _iso_date),
    (re.compile(rf"\b(?P<mon>{_MONTH})\.?\s+(?P<d>\d{{1,2}}){_ORDINAL}\s*,?\s+(?P<y>\d{{4}})\b"), _named_date),
    (re.compile(rf"\b(?P<d>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<mon>{_MONTH})\.?\s*,?\s+(?P<y>\d{{4}})\b"), _named_date),
    (re.compile(rf"\b(?P<mon>{_MONTH})\.?\s*,?\s+(?P<y>\d{{4}})\b"), _named_date),
    (re.compile(rf"\b(?P<mon>{_MONTH_NO_YEAR})\.?\s+(?P<d>\d{{1,2}}){_ORDINAL}\b(?!\s*[.,]?\d)"), _month_day),
    (re.compile(rf"\b(?P<d>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<mon>{_MONTH_NO_YEAR})\b\.?"), _month_day),
    (re.compile(r"\s*%"), lambda m: " percent"),
    (re.compile(r"\bper\s*cent\b"), lambda m: "percent"),
    (re.compile(rf"\b(?P<tens>{'|'.join(_TENS)})(?:[\s-]+(?P<unit>{'|'.join(_UNITS[1:10])}))?\b"), _tens),
    (re.compile(rf"\b(?:{'|'.join(_UNITS)})\b"), lambda m: str(_UNITS.index(m[0]))),
    (re.compile(r"\b\d{1,3}(?:[, ]\d{3})+\b"), lambda m: re.sub(r"[, ]", "", m[0])),
    (re.compile(r"\b(?P<int>\d+)\.(?P<frac>\d*[1-9])?0+\b"), _strip_zeros),
    (re.compile(r"\s*'(?=s\b)"), lambda m: ""),
    (re.compile(r"'"), lambda m: ""),
    (re.compile(r"[^\w\s]+"), lambda m: " "),
    (re.compile(r"\s+"), lambda m: " "),
)


@lru_cache(maxsize=8192)
def normalize(source: str) -> Normalized:
    """Normalize ``source`` for matching (see the module docstring); pure and memoized."""
    state = _fold_chars(source)
    for pattern, replace in _RULES:
        state = _substitute(state, pattern, replace)
    lead = len(state.text) - len(state.text.lstrip(" "))
    trail = len(state.text.rstrip(" "))
    return Normalized(state.source, state.text[lead:trail], state.starts[lead:trail], state.ends[lead:trail])
