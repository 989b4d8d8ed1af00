"""Conflicts (dataset → **corruption** → dataset): wrong values of the right type: scaled numbers, digit typos, shifted
dates, swapped names, negations.

How far a wrong value lands from the right one is data (the ``Style`` tables below), chosen by
severity: subtle values stay plausible, obvious ones are absurd.
"""

from __future__ import annotations

import calendar
import datetime
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from tuner.corruption import _zh
from tuner.corruption._text import DATE_FORMATS, MONTH_NAMES, NUMERAL, Span, apply_edits, find_values
from tuner.text import CJK, NUMBER, chinese_numeral, parse_number

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
    """severity -> precision of the date as written (day, month, year; monthday for a day without a
    year, which can move by half a year at most) -> rule; never finer than the precision."""


PLAUSIBLE = Style(
    numbers={
        "subtle": NumberRule(1.1, 1.3),
        "moderate": NumberRule(1.8, 3.0),
        "obvious": NumberRule(20.0, 200.0),
    },
    dates={
        "subtle": {"day": DateRule("days", 1, 10), "month": DateRule("months", 1, 1), "year": DateRule("years", 1, 1),
                   "monthday": DateRule("days", 1, 10)},
        "moderate": {"day": DateRule("months", 1, 11), "month": DateRule("months", 2, 11), "year": DateRule("years", 2, 5),
                     "monthday": DateRule("months", 1, 4)},
        "obvious": {"day": DateRule("years", 10, 40), "month": DateRule("years", 10, 40), "year": DateRule("years", 10, 40),
                    "monthday": DateRule("months", 5, 6)},
    },
)  # fmt: skip
"""A wrong answer someone could believe (factual corruption, contradiction)."""

TYPO = Style(
    numbers={
        "subtle": NumberRule(digit_typo=True),
        "moderate": NumberRule(2.0, 2.0),
        "obvious": NumberRule(100.0, 1000.0, upward_only=True),
    },
    dates={
        "subtle": {"day": DateRule("days", 1, 2), "month": DateRule("months", 1, 1), "year": DateRule("years", 1, 1),
                   "monthday": DateRule("days", 1, 2)},
        "moderate": {"day": DateRule("months", 1, 6), "month": DateRule("months", 2, 6), "year": DateRule("years", 2, 5),
                     "monthday": DateRule("months", 1, 4)},
        "obvious": {"day": DateRule("years", 300, 900), "month": DateRule("years", 300, 900), "year": DateRule("years", 300, 900),
                    "monthday": DateRule("months", 5, 6)},
    },
)  # fmt: skip
"""A garbled number (numeric typo): one digit off, doubled or halved, absurd."""


def perturb_values(
    text: str, style: Style, severity: str, rng: random.Random, find: Callable[[str], list[Span]] = find_values
) -> str:
    """``text`` with every date, amount, percentage and number in it (as ``find`` sees them) replaced by a wrong one."""
    edits = [(v.start, v.end, perturb_value(text[v.start : v.end], v.kind, style, severity, rng)) for v in find(text)]
    return apply_edits(text, edits)


def perturb_value(value: str, kind: str, style: Style, severity: str, rng: random.Random) -> str:
    """A wrong value written like ``value``: its first numeral changed, Chinese numerals written in Chinese."""
    if kind == "date":
        return shift_date(value, style.dates[severity], rng)
    rule = style.numbers[severity]
    if NUMERAL.search(value) is None:
        return _perturb_chinese(value, rule, rng)
    return NUMERAL.sub(lambda m: perturb_numeral(m.group(), rule, rng), value, count=1)


def _perturb_chinese(value: str, rule: NumberRule, rng: random.Random) -> str:
    """The first integer written in Chinese numerals ("三十天", "百分之五") changed as :func:`perturb_numeral` would."""
    for match in NUMBER.finditer(value):
        number = parse_number(match["number"]) if match["number"] else None
        if number is not None and number.denominator == 1:
            new = int(perturb_numeral(str(number.numerator), rule, rng))
            return value[: match.start()] + chinese_numeral(new) + value[match.end() :]
    raise ValueError(f"no numeral in {value!r}")


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
    """``value`` (one of the English or Chinese DATE_FORMATS shapes) moved by its precision's rule, written
    the same way (a month or day keeps its zero padding or lack of it)."""
    for pattern, precision in (*DATE_FORMATS, *_zh.DATE_FORMATS):
        match = pattern.fullmatch(value)
        if match is not None:
            break
    else:
        raise ValueError(f"not a date: {value!r}")
    fields = match.groupdict()
    year = int(fields["y"]) if fields.get("y") else _ANY_LEAP_YEAR
    month = int(fields["m"]) if fields.get("m") else _month_number(fields["mon"]) if fields.get("mon") else 1
    day = int(fields["d"]) if fields.get("d") else 1
    rule = rules[precision]
    amount = rng.randint(rule.low, rule.high) * rng.choice((-1, 1))
    shifted = _shift(datetime.date(year, month, min(day, calendar.monthrange(year, month)[1])), rule.unit, amount)
    padded_month = len(fields.get("m") or "00") == 2
    new_fields = {"y": f"{shifted.year:04d}", "m": f"{shifted.month:02d}" if padded_month else str(shifted.month), "d": str(shifted.day)}
    if fields.get("mon"):
        name = MONTH_NAMES[shifted.month - 1]
        new_fields["mon"] = name if fields["mon"] in MONTH_NAMES else name[:3]
    if fields.get("ord"):
        new_fields["ord"] = _ordinal(shifted.day)
    if fields.get("m") and len(fields.get("d") or "") == 2:
        new_fields["d"] = f"{shifted.day:02d}"
    edits = [(match.start(g), match.end(g), new_fields[g]) for g, v in fields.items() if v is not None]
    return apply_edits(value, edits)


_ANY_LEAP_YEAR = 2000
"""The year a date without one ("9月4日") is moved in; a leap year so that 2月29日 exists."""


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

    Likeness is shape first (same number of words, digits or not, same number of CJK characters:
    "Polar Express" is a likelier stand-in for "Mercury Logistics" than "Oslo" is, "游戏橘子" for
    "盛大游戏" than "晋国"), then difflib's character ratio. A Chinese name is swapped for a Chinese
    one, a Latin-script name for a Latin-script one, while the pool has any. Names that
    contain, or are contained in, an ``avoid`` string are never picked, so the right answer cannot
    survive inside its replacement.
    """
    blocked = [a.strip().lower() for a in (name, *avoid) if a.strip()]

    def shape(text: str) -> tuple[int, bool, int]:
        return len(text.split()), any(ch.isdigit() for ch in text), len(CJK.findall(text))

    allowed = {c for c in pool if not any(b in c.lower() or c.lower() in b for b in blocked)}
    chinese = bool(CJK.search(name))
    allowed = {c for c in allowed if bool(CJK.search(c)) == chinese} or allowed
    candidates = sorted(allowed, key=lambda c: (shape(c) != shape(name), -SequenceMatcher(None, name.lower(), c.lower()).ratio(), c))
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


_CHINESE_NEGATABLE = re.compile(
    r"(?<![不没未非无别并])(?:"
    r"(?P<verb>已经|曾经|可以|应该|需要|能够|包括|包含|含有|支持|提供|允许|属于|位于|拥有|具有)"
    r"|(?<![而])(?P<done>已)"
    r"|(?<![或还就只但可于总凡正要若像算])(?P<be>是)"
    r"|(?<![因作成认以行称视较最更])(?P<as>为)(?![了何什止])"
    r"|(?<![所没只还具拥含享占持富稀固特共原现])(?P<have>有)(?![些关限效的时名趣点])"
    r")"
)
_CHINESE_NEGATED = {"已经": "并未", "已": "未", "曾经": "从未", "是": "不是", "为": "并非", "有": "没有", "拥有": "没有", "能够": "不能"}
_CLAUSE_END = re.compile(r"[。！？；，,;!?\n]")


def chinese_negation(sentence: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The edit that negates the predicate governing ``sentence[start:end]``: 是→不是, 为→并非, 有→没有,
    已经→并未, 已→未, 曾经→从未, 支持→不支持 (不 before the other verbs).

    Only the clause around the span is searched (up to the nearest ，。；！？ on either side): the
    nearest predicate before the span, else the first one inside or after it; ``None`` if there is
    none or it is already negated (不/没/未/非/无 right before it). Words that only contain the
    character (或是, 因为, 所有, 有些 ...) are not predicates.
    """
    before_start = [m.end() for m in _CLAUSE_END.finditer(sentence, 0, start)]
    clause_start = before_start[-1] if before_start else 0
    after_end = _CLAUSE_END.search(sentence, end)
    clause_end = after_end.start() if after_end else len(sentence)
    found = list(_CHINESE_NEGATABLE.finditer(sentence, clause_start, clause_end))
    before = [m for m in found if m.end() <= start]
    later = [m for m in found if m.end() > start]
    chosen = before[-1] if before else later[0] if later else None
    if chosen is None:
        return None
    verb = chosen.group()
    return chosen.start(), chosen.end(), _CHINESE_NEGATED.get(verb, "不" + verb)
