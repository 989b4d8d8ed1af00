"""LLM plumbing (answers, verdicts → **chat endpoint**): run a blocking function over many items with bounded
parallelism, keeping the input order."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from tuner.errors import NotStarted

T = TypeVar("T")
R = TypeVar("R")


def map_concurrent(fn: Callable[[T], R], items: Iterable[T], limit: int) -> list[R]:
    """``[fn(item) for item in items]`` with at most ``limit`` calls running at once (threads).

    Results come back in input order. The first exception raised by ``fn`` (in input order) is re-raised after the
    running calls finish; once one call has failed, no further call starts: a service that stalls every request costs
    one round of ``limit`` calls, not one per item.
    """
    work = list(items)
    if limit <= 1 or len(work) <= 1:
        return [fn(item) for item in work]
    failed = threading.Event()

    def call(item: T) -> R:
        if failed.is_set():
            raise NotStarted
        try:
            return fn(item)
        except BaseException:
            failed.set()
            raise

    with ThreadPoolExecutor(max_workers=min(limit, len(work))) as pool:
        futures = [pool.submit(call, item) for item in work]
        try:
            # calls run in submission order, so one skipped comes after the failure that skipped it
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise
