"""Demo (dataset → **demo**): English written forms of demo values: ``$1,299``, ``14 days`` / ``fourteen days``, ``March
3, 2025``, ``5%``."""

from __future__ import annotations

import datetime as dt

from tuner.dataset.demo._values import Formatter, Value

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_MONTHS = "January February March April May June July August September October November December".split()


def number_words(n: int) -> str | None:
    """English words for 0..99 (``45`` -> ``forty-five``); None outside that range."""
    if not 0 <= n < 100:
        return None
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens - 2] + (f"-{_ONES[ones]}" if ones else "")


def usd(n: float) -> Value:
    amount = int(n)
    return Value(f"${amount:,}", (f"${amount:,}", f"{amount} USD"), amount)


def unit(singular: str, plural: str, long_name: str | None = None) -> Formatter:
    def render(n: float) -> Value:
        count = int(n)
        name = singular if count == 1 else plural
        aliases = [f"{count} {name}"]
        words = number_words(count)
        if words is not None:
            aliases.append(f"{words} {name}")
        if long_name:
            aliases.append(f"{count} {long_name}")
        return Value(aliases[0], tuple(aliases), count)

    return render


def decimal(symbol: str, long_name: str) -> Formatter:
    def render(n: float) -> Value:
        text = f"{n:.2f}".rstrip("0").rstrip(".")
        return Value(f"{text} {symbol}", (f"{text} {symbol}", f"{text} {long_name}"), n)

    return render


def percent(n: float) -> Value:
    count = int(n)
    return Value(f"{count}%", (f"{count}%", f"{count} percent"), count)


def date(n: float) -> Value:
    """``n`` is a day ordinal; written ``March 3, 2025`` with the ISO form as alias."""
    day = dt.date.fromordinal(int(n))
    text = f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"
    return Value(text, (text, day.isoformat()), day.toordinal())
