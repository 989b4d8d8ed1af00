"""Text analysis (dataset → **text analysis**): dates as documents state them in metadata: ISO 8601, or Chinese
``2023年5月1日`` with Arabic, full-width or Chinese numerals (``二〇二三年五月一日``)."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

from tuner.text._numerals import parse_number

_CHINESE_DATE = re.compile(r"^\s*(?P<y>[^年]+)年(?P<m>[^月]+)月(?P<d>[^日号號]+)[日号號]\s*$")


def parse_date(text: str) -> dt.date | dt.datetime | None:
    """The date or datetime ``text`` names, or None when it names none (or an impossible day).

    Accepted: ISO 8601 dates (``2023-05-01``) and datetimes (``2023-05-01T09:30:00+08:00``, also with a space),
    and Chinese dates ``Y年M月D日`` (or ``号``) whose parts are Arabic or Chinese numerals; full-width digits are
    read as ASCII (NFKC).

    >>> parse_date("二〇二三年五月一日"), parse_date("2023年12月31号"), parse_date("2023-02-30")
    (datetime.date(2023, 5, 1), datetime.date(2023, 12, 31), None)
    """
    value = unicodedata.normalize("NFKC", text).strip()
    chinese = _CHINESE_DATE.match(value)
    try:
        if chinese is None:
            return dt.datetime.fromisoformat(value) if ("T" in value or " " in value) else dt.date.fromisoformat(value)
        parts = [parse_number(chinese.group(name).strip()) for name in ("y", "m", "d")]
        if any(part is None or part.denominator != 1 for part in parts):
            return None
        year, month, day = (int(part) for part in parts if part is not None)
        return dt.date(year, month, day)
    except ValueError:
        return None


def day_number(value: dt.date | dt.datetime) -> float:
    """Days since 0001-01-01 (fractional for a datetime, on its own clock): what recency and "newer" compare."""
    if isinstance(value, dt.datetime):
        midnight = dt.datetime.combine(value.date(), dt.time(), value.tzinfo)
        return value.toordinal() + (value - midnight).total_seconds() / 86_400
    return float(value.toordinal())
