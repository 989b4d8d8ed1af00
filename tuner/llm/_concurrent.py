"""LLM plumbing (answers, verdicts → **chat endpoint**): run a blocking function over many items with bounded
parallelism, keeping the input order."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def map_concurrent(fn: Callable[[T], R], items: Iterable[T], limit: int) -> list[R]:
    """``[fn(item) for item in items]`` with at most ``limit`` calls running at once (threads).

    Results come back in input order. The first exception raised by ``fn`` is re-raised after the
    running calls finish; calls not yet started are cancelled.
    """
    work = list(items)
    if limit <= 1 or len(work) <= 1:
        return [fn(item) for item in work]
    with ThreadPoolExecutor(max_workers=min(limit, len(work))) as pool:
        futures = [pool.submit(fn, item) for item in work]
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise
