"""LLM plumbing (answers, verdicts → **chat endpoint**): thread-safe counters of model calls, cache hits and tokens,
readable per trial and summable per study."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class UsageCounts:
    """A snapshot of :class:`Usage`. Subtract two snapshots for one trial's usage; add them to aggregate."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0

    def __add__(self, other: UsageCounts) -> UsageCounts:
        return UsageCounts(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def __sub__(self, other: UsageCounts) -> UsageCounts:
        return UsageCounts(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


class Usage:
    """Live counters shared by every client of a study.

    ``calls`` counts requests that reached the endpoint and succeeded, ``cache_hits`` requests served
    from the call cache, ``retries`` extra attempts after a retryable failure, ``failures`` requests
    that gave up. Tokens are those the endpoint reported, so cache hits add none; ``cached_tokens`` are the prompt
    tokens the provider served from its own prefix cache (``usage.prompt_tokens_details.cached_tokens`` at OpenAI,
    ``usage.prompt_cache_hit_tokens`` at DeepSeek), a part of ``prompt_tokens``; ``cost`` is what the requests cost at
    the prices of each backend's ``pricing`` (0 without one).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = UsageCounts()

    def add(self, cost: float = 0.0, **deltas: int) -> None:
        with self._lock:
            self._counts = self._counts + UsageCounts(cost=cost, **deltas)

    def snapshot(self) -> UsageCounts:
        with self._lock:
            return self._counts


class RequestCount:
    """Requests one generator or judge backend made, counted by the backend itself (thread-safe).

    A request is one question to the model: one answer for a generator; for a judge, one verdict
    prompt (two per keypoint for the two-question judges, plus any repair prompts). Memoized answers
    and verdicts never reach a backend, so they are not counted; replies served by the call cache are.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._value = 0

    def add(self, count: int = 1) -> None:
        with self._lock:
            self._value += count

    @property
    def value(self) -> int:
        with self._lock:
            return self._value
