"""Beside the flows (progress of long work): progress for long work: a small interface, a rich implementation for the
terminal, a silent one for code."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

PROGRESS_EVERY = 5.0
"""Seconds between the progress lines of a :class:`LoggedTask`."""


class Reporter(Protocol):
    def stage(self, message: str) -> None:
        """A one-line note that a step started or finished."""
        ...

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Task]:
        """A bar for ``total`` units of work; advance it with ``task.advance(n)``."""
        ...


class Task(Protocol):
    def advance(self, amount: int = 1) -> None: ...


class NullTask:
    def advance(self, amount: int = 1) -> None:
        return None


class LoggedTask:
    """A task that also prints ``line(done)`` as a stage line once ``every`` seconds (default
    :data:`PROGRESS_EVERY`) have passed since the last one (checked at each advance, from any thread): a long step then moves in a log too, where bars are hidden."""

    def __init__(self, task: Task, reporter: Reporter, line: Callable[[int], str], every: float | None = None) -> None:
        self.task = task
        self.reporter = reporter
        self.line = line
        self.every = PROGRESS_EVERY if every is None else every
        self.done = 0
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def advance(self, amount: int = 1) -> None:
        with self._lock:
            self.done += amount
            self.task.advance(amount)
            now = time.monotonic()
            if now - self._last >= self.every:
                self._last = now
                self.reporter.stage(self.line(self.done))


class SilentReporter:
    def stage(self, message: str) -> None:
        return None

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Task]:
        yield NullTask()


def _shown() -> bool:
    """Progress shows unless the ``tuner`` logger is set above INFO (``tuner -q``); unset counts as shown."""
    level = logging.getLogger("tuner").level
    return level == logging.NOTSET or level <= logging.INFO


class RichReporter:
    """Progress bars and stage lines on stderr, so stdout stays clean for ``--json`` output. Both are INFO-level
    progress: with the ``tuner`` logger above INFO (``tuner -q``) they are not shown."""

    def __init__(self) -> None:
        from rich.console import Console

        # piped or logged output keeps whole table rows instead of wrapping at 80 columns
        self.console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)

    def stage(self, message: str) -> None:
        if _shown():
            self.console.print(f"[dim]·[/dim] {message}")

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Task]:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        hidden = not sys.stderr.isatty() or not _shown()
        with Progress(*columns, console=self.console, transient=True, disable=hidden) as bar:
            task_id = bar.add_task(description, total=total)
            done = 0

            class _Task:
                def advance(self, amount: int = 1) -> None:
                    nonlocal done
                    done += amount
                    bar.advance(task_id, amount)

            yield _Task()
        # what happened, not what was planned: an interrupted or stopped run did less than its total
        self.stage(f"{description}: {done} of {total} done")
