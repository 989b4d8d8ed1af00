"""Worker processes for the CPU-bound loops over a whole corpus (issue 39 §2): cutting documents into chunks and making
the BM25 terms of the chunks are pure Python and Rust holding the GIL, so threads do not share them across cores;
:func:`map_shards` runs them in processes, one per core, on consecutive shards of the texts, and hands the results
back in shard order, so what is built from them is the same, byte for byte, as one pass in this process.

Workers are forked from a fresh server process (``forkserver``), never from this one: a fork of a process that runs
other threads (the tokenizer's, a progress display's, a server's requests) may inherit a lock one of them held. The
server starts once per process and imports the module of the first work it is given (about a second of CPU); each
worker then starts in milliseconds. Texts shorter than :data:`PARALLEL_MIN_CHARS` in all are worked in this process.

As with every start method but ``fork``, each worker imports the main module first: a script that chunks or indexes a
large corpus through tuner's Python API must do so under ``if __name__ == "__main__":`` (Python's rule for
``multiprocessing``), or its workers run the script again and fail (``BrokenProcessPool``). The ``tuner`` command,
``python -m tuner``, notebooks and ``python -c`` need nothing.
"""

from __future__ import annotations

import bisect
import itertools
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

R = TypeVar("R")

PARALLEL_MIN_CHARS = 2_000_000
"""Below this many characters in all, :func:`map_shards` works in this process: starting the workers (a second of
CPU each) would cost more than half the work saves (a Chinese corpus of 2M characters is chunked and indexed in about
5 s of CPU, ``bench/coldpath.py``)."""

SHARDS_PER_WORKER = 4
"""Shards per worker process: several, so a worker slowed by other load on its core leaves the rest of its share to
the others instead of making everyone wait for it."""


def worker_count() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def shard_bounds(sizes: Sequence[int], parts: int) -> list[int]:
    """Bounds ``[0, …, len(sizes)]`` of at most ``parts`` consecutive, non-empty shards of items of ``sizes``, each
    holding about an equal share of the total size.

    >>> shard_bounds([5, 1, 1, 1, 1, 1], 2), shard_bounds([1, 1], 4), shard_bounds([], 3)
    ([0, 1, 6], [0, 1, 2], [0])
    """
    ends = list(itertools.accumulate(sizes))
    total = ends[-1] if ends else 0
    cuts = {min(bisect.bisect_left(ends, total * part / parts) + 1, len(sizes)) for part in range(1, parts)}
    return sorted({0, len(sizes), *cuts})


def _one_core_each() -> None:
    # the tokenizer's own threads (Rust's rayon) would spin beside the other workers on the cores they share
    os.environ["TOKENIZERS_PARALLELISM"] = "false"


def map_shards(work: Callable[[list[str]], R], texts: Sequence[str]) -> Iterator[R]:
    """``work`` of consecutive shards of ``texts``, in shard order: in worker processes (see the module docs) when
    there is more than one core and the texts hold at least :data:`PARALLEL_MIN_CHARS` characters, else
    ``work(list(texts))`` here as the one shard. ``work`` must be a module-level function (or a ``functools.partial``
    of one) whose result for a list of texts is the concatenation of its results for consecutive parts of it, as the
    caller merges them; it and its result travel between processes by pickle. Each result is yielded as soon as it
    and those before it are done, so the caller merges one shard while the workers still cut the next ones."""
    workers = worker_count()
    sizes = [len(text) for text in texts]
    if workers < 2 or sum(sizes) < PARALLEL_MIN_CHARS:
        yield work(list(texts))
        return
    bounds = shard_bounds(sizes, workers * SHARDS_PER_WORKER)
    shards = [list(texts[start:end]) for start, end in itertools.pairwise(bounds)]
    context = multiprocessing.get_context("forkserver")
    # heard only when the server starts: the first work's module, so its workers import nothing
    context.set_forkserver_preload([getattr(work, "func", work).__module__])
    with ProcessPoolExecutor(min(workers, len(shards)), mp_context=context, initializer=_one_core_each) as pool:
        yield from pool.map(work, shards)
