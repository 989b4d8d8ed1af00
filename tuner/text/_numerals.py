"""Text analysis (dataset → **text analysis** → chunks): Chinese numerals: finding them in text, reading their value,
and writing an integer back.

Read: ``七十`` = 70, ``二十一`` = 21, ``一百零五`` = 105, ``1361万`` = 13,610,000, ``3万5千`` = 35,000,
``1.5亿`` = 150,000,000, ``两万三`` = 23,000 (a lone digit after 百/千/万/亿 counts in the unit below),
``一点五`` = 1.5, ``二〇一六`` = 2016 (three or more bare digits, or any 〇, read digit by digit).

Not numbers, left alone: runs that cannot be read unambiguously (``三四天`` "three or four days",
``十五六岁`` "fifteen or sixteen"), a run that opens with 百/千/万/亿 (``千万别`` "by no means",
``百姓``), a lone 零 (``零售`` "retail"), and the common words of :data:`NOT_NUMBERS` whose numeral
characters do not count anything (``十分`` "very", ``一些`` "some", ``一样`` "the same", ``万一`` "in
case", ``统一`` "unified" ...). Idioms such as ``一石二鸟`` are still read as numbers; that only
matters when a keypoint is a bare number that the idiom happens to spell.
"""

from __future__ import annotations

import re
from fractions import Fraction

DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG = {"万": 10**4, "亿": 10**8}
_CHINESE = "".join(DIGITS) + "".join(_UNITS) + "".join(_BIG)
_DIGIT = "[零〇一二两三四五六七八九]"
ARABIC = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
"""An Arabic numeral, with thousands separators or decimals."""

NOT_NUMBERS = (
    "十分", "万一", "一些", "一样", "一起", "一般", "一定", "一直", "一旦", "一切", "一致", "一同", "一律",
    "一再", "一向", "一下", "一会", "一边", "一面", "一时", "统一", "唯一", "单一", "一点",
)  # fmt: skip
"""Common words whose numeral characters count nothing; ``十分钟`` (ten minutes) and ``一点五`` (1.5)
are still numbers."""

_NOT_NUMBER = "|".join(rf"{word}(?!钟|{_DIGIT})" if word in ("十分", "一点") else word for word in NOT_NUMBERS)
NUMBER = re.compile(
    rf"(?P<word>{_NOT_NUMBER})"
    rf"|(?<!\d)(?<!\d[.,])(?P<number>(?:{ARABIC}|[〇一二两三四五六七八九十]|零(?=点{_DIGIT}))"
    rf"(?:{ARABIC}|[{_CHINESE}]|点(?={_DIGIT}))*)"
)
"""A candidate number (group ``number``) or a word of :data:`NOT_NUMBERS` (group ``word``, to skip);
read a ``number`` with :func:`parse_number`, which rejects the ambiguous ones."""

_TOKEN = re.compile(rf"{ARABIC}|点{_DIGIT}+|.")


def has_chinese(numeral: str) -> bool:
    """Whether ``numeral`` uses a Chinese numeral character (pure Arabic numerals are not this module's)."""
    return any(char in _CHINESE for char in numeral)


def parse_number(numeral: str) -> Fraction | None:
    """The value of a numeral written with Chinese characters, Arabic digits or both; ``None`` if ambiguous.

    Units multiply what precedes them within their section: sections below 万 add up
    ``digit × 千/百/十``; ``value(below 万) × 万`` and ``value(below 亿) × 亿`` add on top
    (``3万5千`` = 3·10⁴ + 5·10³). Two numbers in a row without a unit between them are ambiguous
    (``三四``), except a digit-by-digit run (three or more digits, or any 〇).
    """
    tokens = _TOKEN.findall(numeral)
    if len(tokens) >= 2 and all(t in DIGITS and t != "两" for t in tokens) and (len(tokens) >= 3 or "〇" in tokens):
        return Fraction("".join(str(DIGITS[t]) for t in tokens))
    total = group = section = Fraction(0)
    pending: Fraction | None = None
    pending_single = zero = False
    last_unit: int | None = None
    previous_unit = 0
    for token in tokens:
        if token in ("零", "〇"):
            zero = True
        elif token in DIGITS or token[0].isdigit():
            if pending is not None:
                return None
            pending = Fraction(DIGITS[token]) if token in DIGITS else Fraction(token.replace(",", ""))
            pending_single = len(token) == 1
        elif token.startswith("点"):
            base = pending if pending is not None else Fraction(0) if zero else None
            if base is None:
                return None
            pending = base + Fraction("0." + "".join(str(DIGITS[t]) for t in token[1:]))
            pending_single = False
        elif token in _UNITS:
            unit = _UNITS[token]
            count = pending if pending is not None else Fraction(1) if unit == 10 and section == 0 else None
            if count is None or last_unit is not None and unit >= last_unit:
                return None
            section += count * unit
            last_unit, previous_unit, pending, zero = unit, unit, None, False
        elif token in _BIG:
            value = section + (pending or 0) + (group if token == "亿" else 0)
            if value == 0:
                return None
            if token == "万":
                group += value * _BIG[token]
            else:
                total, group = total + value * _BIG[token], Fraction(0)
            section, last_unit, previous_unit, pending, zero = Fraction(0), None, _BIG[token], None, False
        else:
            return None
    if pending is not None:
        if pending_single and not zero and previous_unit >= 100:
            pending *= previous_unit // 10
        section += pending
    return total + group + section


def format_number(value: Fraction) -> str:
    """``value`` in Arabic digits: an integer without separators, else the shortest exact decimal."""
    if value.denominator == 1:
        return str(value.numerator)
    whole, rest = divmod(value.numerator, value.denominator)
    digits = ""
    while rest:
        whole_digit, rest = divmod(rest * 10, value.denominator)
        digits += str(whole_digit)
    return f"{whole}.{digits}"


def chinese_numeral(value: int) -> str:
    """``value`` (≥ 0) written in Chinese numerals: 70 → 七十, 105 → 一百零五, 13610000 → 一千三百六十一万."""
    if value == 0:
        return "零"
    sections: list[str] = []
    for big, size in (("亿", 10**8), ("万", 10**4), ("", 1)):
        part, value = divmod(value, size)
        if big == "亿" and part >= 10**4:
            sections.append(chinese_numeral(part) + big)
        elif part:
            if sections and part < 1000:
                sections.append("零")
            sections.append(_section(part) + big)
        elif sections and sections[-1] != "零":
            sections.append("零")
    text = "".join(sections).rstrip("零")
    text = re.sub("零+", "零", text)
    return text[1:] if text.startswith("一十") else text


def _section(value: int) -> str:
    """1 ≤ ``value`` < 10⁴: 1005 → 一千零五, 110 → 一百一十, 15 → 一十五 (the leading 一 is dropped by the caller)."""
    out = ""
    for unit, size in (("千", 1000), ("百", 100), ("十", 10), ("", 1)):
        digit, value = divmod(value, size)
        if digit:
            out += "零一二三四五六七八九"[digit] + unit
        elif out and value:
            out += "零"
    return re.sub("零+", "零", out)
