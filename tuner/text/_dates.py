"""Text analysis (dataset → **text analysis**): dates. :func:`parse_date` reads a date as documents state it in
metadata (ISO 8601, or Chinese ``2023年5月1日`` with Arabic, full-width or Chinese numerals); :func:`find_dates` finds
the calendar dates written the Chinese or the English way inside a text and reads them as ISO 8601.

``2016年9月4日`` / ``2016-09-04`` / ``2016.9.4`` / ``2016/09/04`` / ``September 4, 2016`` / ``4 September 2016`` are the
day ``2016-09-04``; ``2023年5月`` / ``2023-05`` / ``May 2023`` the month ``2023-05``. Chinese numerals in the year, month
or day (``二〇一六年九月四日``) are read through :func:`parse_number`. Years alone are not dates to :func:`find_dates`
(too many numbers look like years).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass

from tuner.text._numerals import parse_number


def day_number(value: dt.date | dt.datetime) -> float:
    """Days since 0001-01-01 (fractional for a datetime, on its own clock): what recency and "newer" compare."""
    if isinstance(value, dt.datetime):
        midnight = dt.datetime.combine(value.date(), dt.time(), value.tzinfo)
        return value.toordinal() + (value - midnight).total_seconds() / 86_400
    return float(value.toordinal())


_MONTHS = {name: number for number, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sept", "sep"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")), start=1) for name in names}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ZH_DIGIT = "〇零一二三四五六七八九十"
_ZH_YEAR_DIGITS = {c: str(i) for i, c in enumerate("〇一二三四五六七八九")} | {"零": "0"}
_PATTERNS = (
    re.compile(rf"(?<![\d{_ZH_DIGIT}])(?P<y>\d{{4}}|[{_ZH_DIGIT}]{{4}})\s*年\s*(?P<m>\d{{1,2}}|[{_ZH_DIGIT}]{{1,3}})\s*月"
               rf"(?:\s*(?P<d>\d{{1,2}}|[{_ZH_DIGIT}]{{1,3}})\s*[日号號])?"),
    re.compile(r"(?<![\d.])(?P<y>(?:1[6-9]|20)\d\d)(?P<sep>[-./])(?P<m>\d{1,2})(?:(?P=sep)(?P<d>\d{1,2}))?(?![\d])"),
    re.compile(rf"\b(?P<mn>{_MONTH})\.?\s+(?:(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(?P<y>\d{{4}})\b", re.IGNORECASE),
    re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mn>{_MONTH})\.?,?\s+(?P<y>\d{{4}})\b", re.IGNORECASE),
)


@dataclass(frozen=True)
class DateMention:
    """A date found in a text: ``text[start:end]`` reads as ``iso`` (``YYYY-MM-DD`` or, without a day, ``YYYY-MM``)."""

    start: int
    end: int
    iso: str


def _int(value: str) -> int | None:
    if value.isdigit():
        return int(value)
    if len(value) == 4 and all(c in _ZH_YEAR_DIGITS for c in value):  # 二〇一六: digit by digit, not a numeral
        return int("".join(_ZH_YEAR_DIGITS[c] for c in value))
    number = parse_number(value)
    return int(number) if number is not None and number.denominator == 1 else None


def _iso(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    year = _int(groups["y"])
    month = _MONTHS[groups["mn"].lower()] if groups.get("mn") else _int(groups["m"])
    day = _int(groups["d"]) if groups.get("d") else None
    if year is None or month is None or not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
        return None
    return f"{year:04d}-{month:02d}" + (f"-{day:02d}" if day is not None else "")


def find_dates(text: str) -> list[DateMention]:
    """Every date in ``text``, in order, overlapping readings resolved in favour of the earlier, longer match.

    >>> [m.iso for m in find_dates("2016年9月4日发布，2023年5月修订；updated May 2023, on 2024-01-02")]
    ['2016-09-04', '2023-05', '2023-05', '2024-01-02']
    """
    found: list[DateMention] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            iso = _iso(match)
            if iso is not None:
                found.append(DateMention(match.start(), match.end(), iso))
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    kept: list[DateMention] = []
    for mention in found:
        if not kept or mention.start >= kept[-1].end:
            kept.append(mention)
    return kept


def parse_date(text: str) -> dt.date | dt.datetime | None:
    """The date or datetime ``text`` names, or None when it names none (or an impossible day).

    Accepted: ISO 8601 dates (``2023-05-01``) and datetimes (``2023-05-01T09:30:00+08:00``, also with a space),
    and Chinese dates ``Y年M月D日`` (or ``号``) whose parts are Arabic or Chinese numerals; full-width digits are
    read as ASCII (NFKC).

    >>> parse_date("二〇二三年五月一日"), parse_date("2023年12月31号"), parse_date("2023-02-30")
    (datetime.date(2023, 5, 1), datetime.date(2023, 12, 31), None)
    """
    value = unicodedata.normalize("NFKC", text).strip()
    chinese = _PATTERNS[0].fullmatch(value)
    try:
        if chinese is None:
            return dt.datetime.fromisoformat(value) if ("T" in value or " " in value) else dt.date.fromisoformat(value)
        iso = _iso(chinese)
        return None if iso is None or iso.count("-") != 2 else dt.date.fromisoformat(iso)
    except ValueError:
        return None
