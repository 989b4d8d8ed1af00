"""Two `tuner run` workers on one study, made to overlap without sleeps: a stand-in server's replies wait until each
worker has taken a trial, so neither can finish the budget before the other has started."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

Responder = Callable[[dict[str, Any]], str]


def gated(gate: threading.Event, responder: Responder, timeout: float = 300) -> Responder:
    """``responder``, answering only once ``gate`` is set (or after ``timeout`` s)."""

    def reply(body: dict[str, Any]) -> str:
        gate.wait(timeout)
        return responder(body)

    return reply


def open_when_two_workers_run(gate: threading.Event, name: str, storage: str, timeout: float = 300) -> threading.Thread:
    """Start a thread that sets ``gate`` once trials of study ``name`` in ``storage`` carry two workers' names (a
    worker records its name on a trial right after taking it), or after ``timeout`` s."""
    import optuna

    from tuner.front import TrialRecord
    from tuner.study import open_storage

    def watch() -> None:
        deadline, opened = time.monotonic() + timeout, open_storage(storage)
        while not gate.is_set() and time.monotonic() < deadline:
            try:
                trials = optuna.load_study(study_name=name, storage=opened).get_trials(deepcopy=False)
            except KeyError:  # not created yet
                trials = []
            if len({TrialRecord.from_trial(t).worker for t in trials} - {None}) >= 2:
                break
            time.sleep(0.1)
        gate.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread
