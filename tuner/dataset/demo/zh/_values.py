"""Demo (dataset → **demo**): Chinese written forms of demo values: ``2999元``, ``30天`` / ``三十天``, ``2023年9月4日``, ``5%``
/ ``百分之五``, ``1361万``. Documents write figures in Arabic digits, as Chinese product pages do; the aliases add the forms
an answer may use instead (Chinese numerals, other unit spellings, the ISO date)."""

from __future__ import annotations

import datetime as dt

from tuner.dataset.demo._values import Formatter, Value

_DIGITS = "零一二三四五六七八九"
_PLACES = ((1000, "千"), (100, "百"), (10, "十"), (1, ""))


def _below_ten_thousand(n: int) -> str:
    """1..9999 in Chinese numerals, one 零 for each run of missing places (3050 -> 三千零五十)."""
    out = ""
    gap = False
    for place, name in _PLACES:
        digit = n // place % 10
        if digit == 0:
            gap = bool(out)
            continue
        out += ("零" if gap else "") + _DIGITS[digit] + name
        gap = False
    return out


def chinese_number(n: int) -> str:
    """Chinese numerals for 0 <= n < 10^8: 30 -> 三十, 15 -> 十五, 105 -> 一百零五, 13610000 -> 一千三百六十一万."""
    if not 0 <= n < 100_000_000:
        raise ValueError(f"{n} is outside 0..99999999")
    if n == 0:
        return _DIGITS[0]
    high, low = divmod(n, 10_000)
    text = (_below_ten_thousand(high) + "万" if high else "") + ("零" if high and 0 < low < 1000 else "")
    text += _below_ten_thousand(low) if low else ""
    # A leading 一十 is said 十 (十五, 十二万), inside a number it stays (一百一十).
    return text[1:] if text.startswith("一十") else text


def chinese_count(n: int) -> str:
    """A count before a measure word: 两 for 2 (两天, 两个月), otherwise :func:`chinese_number`."""
    return "两" if n == 2 else chinese_number(n)


def unit(*forms: str, spoken: bool = True) -> Formatter:
    """Counts written in ``forms[0]`` (a template over ``{n}``, ``"{n}天"``); every form is an alias, and with
    ``spoken`` so is ``forms[0]`` in Chinese numerals (``三十天``; off for units read out as letters, ``GB``)."""

    def render(n: float) -> Value:
        count = int(n)
        aliases = [form.format(n=count) for form in forms]
        if spoken:
            aliases.append(forms[0].format(n=chinese_count(count)))
        return Value(aliases[0], tuple(aliases), count)

    return render


def decimal(*forms: str) -> Formatter:
    """A decimal written in ``forms[0]`` (``"{n}千克"``, trailing zeros dropped); every form is an alias."""

    def render(n: float) -> Value:
        text = f"{n:.2f}".rstrip("0").rstrip(".")
        aliases = tuple(form.format(n=text) for form in forms)
        return Value(aliases[0], aliases, n)

    return render


def yuan(n: float) -> Value:
    amount = int(n)
    return Value(f"{amount}元", (f"{amount}元", f"¥{amount}", f"{amount}块"), amount)


def percent(n: float) -> Value:
    count = int(n)
    return Value(f"{count}%", (f"{count}%", f"百分之{chinese_number(count)}"), count)


def wan(noun: str) -> Formatter:
    """A large count in units of 万 (ten thousand), ``1361万用户``; aliases drop the noun, spell it in
    Chinese numerals, or write the full number (``13,610,000``)."""

    def render(n: float) -> Value:
        count = int(n)
        text = f"{count}万{noun}"
        return Value(text, (text, f"{count}万", f"{chinese_number(count)}万", f"{count * 10_000:,}"), count)

    return render


def date(n: float) -> Value:
    """``n`` is a day ordinal; written ``2023年9月4日`` with the ISO form as alias."""
    day = dt.date.fromordinal(int(n))
    text = f"{day.year}年{day.month}月{day.day}日"
    return Value(text, (text, day.isoformat()), day.toordinal())
