"""One answering service (contexts → **answers → verdicts**): the generator answers, the judge gives keypoint
verdicts, each memoized by its inputs. Robustness, stress, the gate and calibration all go through it, so
a context seen twice costs one answer and one judging, whoever asks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from tuner.dataset import GoldenCase
from tuner.errors import BackendFailure, UserError
from tuner.generation import Answer, Generator
from tuner.judging import Judge
from tuner.verdicts import KeypointVerdict

K = TypeVar("K")
V = TypeVar("V")
R = TypeVar("R")


class Memo(Generic[K, V]):
    """Thread-safe memo: a key is computed once even when concurrent callers ask for it at the same time
    (the others wait for the first), so concurrent requests for one context cost one call."""

    def __init__(self) -> None:
        self._futures: dict[K, Future[V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            future = self._futures.get(key)
            owner = future is None
            if future is None:
                future = self._futures[key] = Future()
        if owner:
            try:
                future.set_result(compute())
            except BaseException as exc:
                future.set_exception(exc)
                with self._lock:
                    del self._futures[key]  # a later call may try again
                raise
        return future.result()


def _isolated(backend: str, call: Callable[..., R], *args: Any) -> R:
    """``call(*args)``; an exception other than a user error (bad configuration, an unreachable endpoint: a
    :class:`~tuner.errors.FatalBackendError`) becomes a :class:`BackendFailure` naming the backend, which a study
    isolates to one trial (a :class:`~tuner.errors.TransientBackendError` past its retries among them)."""
    try:
        return call(*args)
    except UserError:
        raise
    except Exception as exc:
        raise BackendFailure(f"{backend} raised {type(exc).__name__}: {exc}") from exc


class Responder:
    """Answers and keypoint verdicts for (question, ordered passages), memoized and thread-safe.

    ``calls()`` reports the requests the backends made (they count them themselves, see
    :class:`~tuner.llm.RequestCount`), so memo hits cost nothing and an LLM judge's repair prompts count.

    >>> responder = Responder(generator, judge)  # doctest: +SKIP
    >>> answer = responder.answer(case.question, passages)  # doctest: +SKIP
    >>> verdicts = responder.judge(case, answer, passages, dataset.wrong_answers(case))  # doctest: +SKIP
    """

    def __init__(self, generator: Generator, judge: Judge) -> None:
        self.generator = generator
        self.judge_backend = judge
        self._answers: Memo[tuple[str, tuple[str, ...]], Answer] = Memo()
        self._verdicts: Memo[tuple[str, str, tuple[str, ...]], tuple[KeypointVerdict, ...]] = Memo()

    @property
    def concurrency(self) -> int:
        """How many (answer, judge) jobs may run at once: the tighter of the two backends' limits."""
        return min(self.generator.concurrency, self.judge_backend.concurrency)

    def answer(self, question: str, passages: Sequence[str]) -> Answer:
        key = (question, tuple(passages))
        return self._answers.get(key, lambda: _isolated(self.generator.name, self.generator.generate, question, list(passages)))

    def judge(
        self, case: GoldenCase, answer: Answer, passages: Sequence[str], wrong_answers: Sequence[str]
    ) -> tuple[KeypointVerdict, ...]:
        """The verdicts on ``case``'s keypoints; none for a missing answer (its reason is the answer's)."""
        if answer.missing_reason:
            return ()
        return self._verdicts.get(
            (case.id, answer.text, tuple(passages)),
            lambda: tuple(
                _isolated(
                    self.judge_backend.name, self.judge_backend.judge,
                    case.question, answer.text, list(passages), case.keypoints, wrong_answers,
                )
            ),
        )

    def calls(self) -> dict[str, int]:
        """Requests made so far: ``generator``, ``judge`` and their ``total``."""
        generator, judge = self.generator.requests_made.value, self.judge_backend.requests_made.value
        return {"generator": generator, "judge": judge, "total": generator + judge}
