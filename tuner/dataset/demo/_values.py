"""Written forms of demo values (prices, durations, dates, versions) and seeded stale perturbations."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_MONTHS = "January February March April May June July August September October November December".split()
SEVERITIES = ("subtle", "moderate", "obvious")


def number_words(n: int) -> str | None:
    """English words for 0..99 (``45`` -> ``forty-five``); None outside that range."""
    if not 0 <= n < 100:
        return None
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens - 2] + (f"-{_ONES[ones]}" if ones else "")


@dataclass(frozen=True)
class Value:
    """A value as written in a document (``text``) plus the other forms an answer may use."""

    text: str
    aliases: tuple[str, ...]
    number: float


Formatter = Callable[[float], Value]


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


def version(n: float) -> Value:
    """Encode ``major*100 + minor*10 + patch`` as ``major.minor.patch``."""
    code = int(n)
    text = f"{code // 100}.{code // 10 % 10}.{code % 10}"
    return Value(text, (text, f"v{text}"), code)


def date(n: float) -> Value:
    """``n`` is a day ordinal; written ``March 3, 2025`` with the ISO form as alias."""
    day = dt.date.fromordinal(int(n))
    text = f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"
    return Value(text, (text, day.isoformat()), day.toordinal())


@dataclass(frozen=True)
class Quantity:
    """How to draw a value: uniform on ``lo..hi`` in steps of ``step``, written by ``fmt``."""

    fmt: Formatter
    lo: float
    hi: float
    step: float

    def draw(self, rng: random.Random) -> Value:
        steps = int(round((self.hi - self.lo) / self.step))
        return self.fmt(round(self.lo + self.step * rng.randint(0, steps), 2))

    def near(self, rng: random.Random, base: Value) -> Value:
        """A sibling value for a model variant: a few steps away from ``base``."""
        return self._shift(rng, base, rng.choice((-3, -2, -1, 1, 2, 3)))

    def stale(self, rng: random.Random, base: Value, severity: str, previous: int = 0) -> tuple[Value, int]:
        """An older value and its step offset from ``base``: subtle = 1 step, moderate = a few steps,
        obvious = far away, beyond the ``previous`` offset (older editions drift further from today's value)."""
        steps = abs(previous) + {"subtle": 1, "moderate": rng.randint(2, 4), "obvious": rng.randint(6, 12)}[severity]
        steps *= (1 if previous > 0 else -1) if previous else rng.choice((-1, 1))
        return self._shift(rng, base, steps), steps

    def _shift(self, rng: random.Random, base: Value, steps: int) -> Value:
        for attempt in range(8):
            value = base.number + steps * self.step
            if value < self.lo or value <= 0:
                value = base.number + abs(steps) * self.step
            candidate = self.fmt(round(value, 2))
            if distinct(candidate, base):
                return candidate
            steps += 1 if steps > 0 else -1
        raise AssertionError(f"no distinct value near {base.text}")


def distinct(a: Value, b: Value) -> bool:
    """True when no written form of one occurs inside a written form of the other (``14 days`` vs ``114 days``)."""
    return not any(x in y or y in x for x in a.aliases for y in b.aliases)
