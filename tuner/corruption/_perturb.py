"""Wrong values of the right type: scaled numbers, digit typos, shifted dates, swapped names, negations.

How far a wrong value lands from the right one is data (the ``Style`` tables below), chosen by
severity: subtle values stay plausible, obvious ones are absurd.
"""

from __future__ import annotations

import calendar
import datetime
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from tuner.corruption._text import DATE_FORMATS, MONTH_NAMES, NUMERAL, apply_edits, find_values

SEVERITIES = ("subtle", "moderate", "obvious")


@dataclass(frozen=True)
class NumberRule:
    """Multiply or divide by a factor drawn from ``[low, high]``; or, for a typo, edit one digit."""

    low: float = 1.0
    high: float = 1.0
    upward_only: bool = False
    digit_typo: bool = False


@dataclass(frozen=True)
class DateRule:
    """Move a date by ``low..high`` ``unit`` (days, months or years), forward or back."""

    unit: str
    low: int
    high: int


@dataclass(frozen=True)
class Style:
    numbers: Mapping[str, NumberRule]
    dates: Mapping[str, Mapping[str, DateRule]]
    """severity -> precision of the date as written (day, month, year) -> rule; never finer than the precision."""


PLAUSIBLE = Style(
    numbers={
        "subtle": NumberRule(1.1, 1.3),
        "moderate": NumberRule(1.8, 3.0),
        "obvious": NumberRule(20.0, 200.0),
    },
    dates={
        "subtle": {"day": DateRule("days", 1, 10), "month": DateRule("months", 1, 1), "year": DateRule("years", 1, 1)},
        "moderate": {"day": DateRule("months", 1, 11), "month": DateRule("months", 2, 11), "year": DateRule("years", 2, 5)},
        "obvious": {"day": DateRule("years", 10, 40), "month": DateRule("years", 10, 40), "year": DateRule("years", 10, 40)},
    },
)
"""A wrong answer someone could believe (factual corruption, contradiction)."""

TYPO = Style(
    numbers={
        "subtle": NumberRule(digit_typo=True),
        "moderate": NumberRule(2.0, 2.0),
        "obvious": NumberRule(100.0, 1000.0, upward_only=True),
    },
    dates={
        "subtle": {"day": DateRule("days", 1, 2), "month": DateRule("months", 1, 1), "year": DateRule("years", 1, 1)},
        "moderate": {"day": DateRule("months", 1, 6), "month": DateRule("months", 2, 6), "year": DateRule("years", 2, 5)},
        "obvious": {"day": DateRule("years", 300, 900), "month": DateRule("years", 300, 900), "year": DateRule("years", 300, 900)},
    },
)
"""A garbled number (numeric typo): one digit off, doubled or halved, absurd."""


def perturb_values(text: str, style: Style, severity: str, rng: random.Random) -> str:
    """``text`` with every date, amount, percentage and number in it replaced by a wrong one."""
    edits = [(v.start, v.end, perturb_value(text[v.start : v.end], v.kind, style, severity, rng)) for v in find_values(text)]
    return apply_edits(text, edits)


def perturb_value(value: str, kind: str, style: Style, severity: str, rng: random.Random) -> str:
    if kind == "date":
        return shift_date(value, style.dates[severity], rng)
    rule = style.numbers[severity]
    return NUMERAL.sub(lambda m: perturb_numeral(m.group(), rule, rng), value, count=1)


def perturb_numeral(numeral: str, rule: NumberRule, rng: random.Random) -> str:
    """A different numeral written like ``numeral`` (same decimals, thousands separators if it had them).

    Scaling: ``value × f`` or ``value ÷ f`` with ``f`` uniform in ``[low, high]``; a division that
    would round to zero multiplies instead, and a result equal to the input moves one unit of the
    last written digit, so the output always differs.
    """
    if rule.digit_typo:
        return _digit_typo(numeral, rng)
    value = float(numeral.replace(",", ""))
    decimals = len(numeral.partition(".")[2])
    unit = 10.0**-decimals
    factor = rng.uniform(rule.low, rule.high)
    upward = rule.upward_only or rng.random() < 0.5
    base = value or 1.0
    new = round(base * factor if upward else base / factor, decimals)
    if new < unit:
        new = round(base * factor, decimals)
    if new == value:
        new = value + unit
    return f"{new:,.{decimals}f}" if "," in numeral else f"{new:.{decimals}f}"


def _digit_typo(numeral: str, rng: random.Random) -> str:
    """One digit off by one; the leading digit is kept when there are others, so "1,299" stays four digits."""
    positions = [i for i, ch in enumerate(numeral) if ch.isdigit()]
    at = rng.choice(positions[1:] or positions)
    digit = int(numeral[at])
    step = -1 if digit == 9 else 1 if digit == 0 else rng.choice((-1, 1))
    if len(positions) == 1 and digit + step == 0:
        step = 1
    return numeral[:at] + str(digit + step) + numeral[at + 1 :]


def shift_date(value: str, rules: Mapping[str, DateRule], rng: random.Random) -> str:
    """``value`` (one of the DATE_FORMATS shapes) moved by its precision's rule, written the same way."""
    for pattern, precision in DATE_FORMATS:
        match = pattern.fullmatch(value)
        if match is not None:
            break
    else:
        raise ValueError(f"not a date: {value!r}")
    fields = match.groupdict()
    year = int(fields["y"])
    month = int(fields["m"]) if fields.get("m") else _month_number(fields["mon"]) if fields.get("mon") else 1
    day = int(fields["d"]) if fields.get("d") else 1
    rule = rules[precision]
    amount = rng.randint(rule.low, rule.high) * rng.choice((-1, 1))
    shifted = _shift(datetime.date(year, month, min(day, calendar.monthrange(year, month)[1])), rule.unit, amount)
    new_fields = {"y": f"{shifted.year:04d}", "m": f"{shifted.month:02d}", "d": str(shifted.day)}
    if fields.get("mon"):
        name = MONTH_NAMES[shifted.month - 1]
        new_fields["mon"] = name if fields["mon"] in MONTH_NAMES else name[:3]
    if fields.get("ord"):
        new_fields["ord"] = _ordinal(shifted.day)
    if fields.get("m"):
        new_fields["d"] = f"{shifted.day:02d}"
    edits = [(match.start(g), match.end(g), new_fields[g]) for g, v in fields.items() if v is not None]
    return apply_edits(value, edits)


def _month_number(name: str) -> int:
    return next(i for i, full in enumerate(MONTH_NAMES, start=1) if full.startswith(name[:3]))


def _shift(date: datetime.date, unit: str, amount: int) -> datetime.date:
    if unit == "days":
        return date + datetime.timedelta(days=amount)
    months = amount * (12 if unit == "years" else 1)
    total = date.year * 12 + date.month - 1 + months
    if not 12 <= total < 10000 * 12:
        total = date.year * 12 + date.month - 1 - months
    year, month = divmod(total, 12)
    return datetime.date(year, month + 1, min(date.day, calendar.monthrange(year, month + 1)[1]))


def _ordinal(day: int) -> str:
    return "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def swap_entity(name: str, pool: Sequence[str], severity: str, rng: random.Random, avoid: Sequence[str]) -> str | None:
    """Another name from ``pool``: subtle picks among the third most like ``name``, obvious among the least.

    Likeness is shape first (same number of words, digits or not: "Polar Express" is a likelier
    stand-in for "Mercury Logistics" than "Oslo" is), then difflib's character ratio. Names that
    contain, or are contained in, an ``avoid`` string are never picked, so the right answer cannot
    survive inside its replacement.
    """
    blocked = [a.strip().lower() for a in (name, *avoid) if a.strip()]

    def shape(text: str) -> tuple[int, bool]:
        return len(text.split()), any(ch.isdigit() for ch in text)

    candidates = sorted(
        {c for c in pool if not any(b in c.lower() or c.lower() in b for b in blocked)},
        key=lambda c: (shape(c) != shape(name), -SequenceMatcher(None, name.lower(), c.lower()).ratio(), c),
    )
    if not candidates:
        return None
    third = SEVERITIES.index(severity)
    low = min(third * len(candidates) // 3, len(candidates) - 1)
    high = max((third + 1) * len(candidates) // 3, low + 1)
    return rng.choice(candidates[low:high])


_NEGATABLE = re.compile(
    r"\b(?P<verb>is|are|was|were|can|could|will|would|should|must|may|does|do|did|has|have"
    r"|includes|include|supports|support|offers|offer|provides|provide|requires|require"
    r"|allows|allow|covers|cover|contains|contain|ships|ship)\b(?!\s+not\b|n't)"
)
_NEGATED = {
    "can": "cannot",
    "has": "does not have",
    "have": "do not have",
}
_AUXILIARIES = {"is", "are", "was", "were", "could", "will", "would", "should", "must", "may", "does", "do", "did"}


def negation(sentence: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The edit that negates the verb governing ``sentence[start:end]``: "is"→"is not", "includes"→"does not include".

    The nearest negatable verb before the span is used, else the first one after it; ``None`` if
    the sentence has none (or it is already negated).
    """
    before = [m for m in _NEGATABLE.finditer(sentence) if m.start() < start]
    after = [m for m in _NEGATABLE.finditer(sentence) if m.start() >= end]
    chosen = before[-1] if before else after[0] if after else None
    if chosen is None:
        return None
    verb = chosen.group("verb")
    if verb in _AUXILIARIES or chosen.end() < len(sentence) and sentence[chosen.end() :].startswith(" been"):
        negated = f"{verb} not"
    elif verb in _NEGATED:
        negated = _NEGATED[verb]
    elif verb.endswith("s") and not verb.endswith("ss"):
        negated = f"does not {verb[:-1]}"
    else:
        negated = f"do not {verb}"
    return chosen.start(), chosen.end(), negated
