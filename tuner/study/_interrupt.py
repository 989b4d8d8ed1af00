"""Study (**trials**, interrupts): what Ctrl-C does during ``tuner run``. The first one stops the run cleanly: the
running trial's evaluation stops at once (its trial is failed, stops beating and is queued again), storage writes in
progress finish, the report of what is done is written, and the run exits 130. A second one exits at once; the
trial it leaves RUNNING is failed when the study next starts (see ``tuner.study._workers``)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

EXIT_INTERRUPTED = 130
FIRST = "interrupt: stopping cleanly after the running step (Ctrl-C again to exit at once)"
SECOND = ("interrupt: exiting now; a trial left running is failed and queued again when the study next starts "
          "(run the same command to resume)")


WAIT_SLICE = 0.2
"""Seconds between two checks of :meth:`InterruptGuard.call`'s wait (an interrupt itself ends the wait at once)."""

T = TypeVar("T")


def _stop_thread(thread: threading.Thread) -> None:
    """Raise :class:`KeyboardInterrupt` in ``thread`` at its next Python instruction (CPython's asynchronous
    exception; a call into C it is inside finishes first)."""
    if thread.ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt))


def _stderr(line: str) -> None:
    """One line straight to file descriptor 2: safe inside a signal handler, whatever the main thread was printing."""
    os.write(2, f"tuner: {line}\n".encode())


class InterruptGuard:
    """SIGINT while a study runs. Outside :meth:`interruptible` sections (storage writes, ``ask()``, ``tell()``) the
    first interrupt is only recorded and the run stops at the next check; inside them (case evaluation, the noise
    floor calibration, waiting for another worker) it raises :class:`KeyboardInterrupt` at once. The second
    interrupt ends the process with exit 130 without running any more Python code.

    Used as a context manager it installs its handler (main thread only) and restores the previous one; unused,
    it never fires, so library calls keep Python's default behaviour. A :class:`KeyboardInterrupt` raised while the
    main thread happens to run a finalizer (a ``__del__`` or weakref callback) cannot propagate: Python would print it
    as "Exception ignored" with a traceback. While installed, the guard drops that report for its own interrupt, which
    stays recorded, so the next :meth:`check` stops the run."""

    def __init__(self, write: Callable[[str], None] | None = None) -> None:
        self.requested = False
        self.count = 0
        self._depth = 0
        self._write = write or _stderr
        self._previous: Callable[[int, FrameType | None], object] | int | None = None
        self._previous_unraisable = sys.unraisablehook
        self._installed = False

    def __enter__(self) -> InterruptGuard:
        # a run started in the background of a shell ignores SIGINT: keep it that way
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._previous_unraisable = sys.unraisablehook
            sys.unraisablehook = self._unraisable
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            sys.unraisablehook = self._previous_unraisable
            self._installed = False

    def _unraisable(self, report: sys.UnraisableHookArgs) -> None:
        if not (self.requested and report.exc_type is KeyboardInterrupt):
            self._previous_unraisable(report)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            self._write(SECOND)
            os._exit(EXIT_INTERRUPTED)  # no cleanup may block: heartbeat threads die with the process
        self.requested = True
        self._write(FIRST)
        if self._depth:
            raise KeyboardInterrupt

    def check(self) -> None:
        """Raise :class:`KeyboardInterrupt` if an interrupt was recorded (at a point where stopping is safe)."""
        if self.requested:
            raise KeyboardInterrupt

    def call(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` run in a worker thread while the main thread waits for it in short slices, so an interrupt
        is handled within a slice even while the work sits in one long call into C (a model's forward pass, an index
        build, a database wait), where Python runs no signal handler. The first interrupt raises here, at once, and
        the worker is stopped at its next Python instruction (its own :class:`KeyboardInterrupt`); the second ends the
        process. Used inside an :meth:`interruptible` section; without the guard installed, or off the main thread,
        ``work`` simply runs here."""
        if not self._installed or threading.current_thread() is not threading.main_thread():
            return work(*args)
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                outcome["value"] = work(*args)
            except BaseException as exc:  # handed over to the waiting main thread
                outcome["error"] = exc
            finally:
                done.set()

        worker = threading.Thread(target=run, name="tuner-work", daemon=True)
        worker.start()
        try:
            while not done.wait(WAIT_SLICE):
                self.check()  # an interrupt a finalizer swallowed stops the wait too
        except BaseException:
            _stop_thread(worker)
            raise
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]  # type: ignore[no-any-return]

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """A section an interrupt may stop at any point (no storage write inside)."""
        self.check()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
