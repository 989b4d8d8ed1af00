"""Demo (dataset → **demo**): demo values in any language: a value as written plus its aliases, how values are drawn,
and seeded stale perturbations. The written forms themselves (currencies, units, dates) belong to a language."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

SEVERITIES = ("subtle", "moderate", "obvious")


@dataclass(frozen=True)
class Value:
    """A value as written in a document (``text``) plus the other forms an answer may use."""

    text: str
    aliases: tuple[str, ...]
    number: float


Formatter = Callable[[float], Value]


def version(n: float) -> Value:
    """Encode ``major*100 + minor*10 + patch`` as ``major.minor.patch``."""
    code = int(n)
    text = f"{code // 100}.{code // 10 % 10}.{code % 10}"
    return Value(text, (text, f"v{text}"), code)


def error_code(n: float) -> Value:
    return Value(f"E-{int(n)}", (f"E-{int(n)}", f"E{int(n)}"), int(n))


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
        # Up to ten neighbours can share a written prefix: 百分之二十 is inside 百分之二十一 .. 百分之二十九.
        for attempt in range(16):
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
