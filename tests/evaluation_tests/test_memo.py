from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.evaluation import Memo, Responder, RobustnessEvaluator
from tuner.generation import Answer
from tuner.judging import build_judge, parse_judge_config
from tuner.llm import RequestCount
from tuner.backends import BackendResources
from tuner.variants import VariantsConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings


T = TypeVar("T")


def _together(count: int, fn: Callable[[], T]) -> list[T | RuntimeError | None]:
    """Run ``fn`` in ``count`` threads released at the same instant; a RuntimeError is returned, not raised."""
    results: list[T | RuntimeError | None] = [None] * count
    start = threading.Barrier(count)

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = fn()
        except RuntimeError as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_concurrent_callers_share_one_computation() -> None:
    memo: Memo[str, int] = Memo()
    runs = Counter[str]()

    def slow() -> int:
        runs["x"] += 1
        time.sleep(0.1)
        return 42

    results = _together(8, lambda: memo.get("x", slow))
    assert runs["x"] == 1
    assert results == [42] * 8


def test_a_failure_reaches_every_waiter_and_a_later_call_retries() -> None:
    memo: Memo[str, int] = Memo()

    def broken() -> int:
        time.sleep(0.05)
        raise RuntimeError("backend down")

    results = _together(4, lambda: memo.get("x", broken))
    assert all(isinstance(r, RuntimeError) for r in results)
    assert memo.get("x", lambda: 7) == 7


class SlowConcurrentGenerator:
    """Answers with the first context after a pause, with four calls allowed at once."""

    name = "slow"
    concurrency = 4

    def __init__(self) -> None:
        self.requests = Counter[tuple[str, tuple[str, ...]]]()
        self.requests_made = RequestCount()
        self._lock = threading.Lock()

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        self.requests_made.add()
        with self._lock:
            self.requests[(question, tuple(contexts))] += 1
        time.sleep(0.02)
        return Answer.of(contexts[0] if contexts else "I don't know.")


@pytest.mark.parametrize("top_k", [1, 3])
def test_identical_contexts_cost_one_generator_call_under_concurrency(
    tiny_dataset_dir: Path, encoder: CachedEncoder, top_k: int
) -> None:
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir), encoder=encoder)
    generator = SlowConcurrentGenerator()
    judge = build_judge(parse_judge_config({}, "test"), BackendResources(encoder=encoder))
    responder = Responder(generator, judge)
    evaluator = RobustnessEvaluator(pipeline, responder, VariantsConfig())
    outcomes = evaluator.evaluate(RetrievalSettings(top_k=top_k, chunk_size=40), ("v0", "v3"))
    pairs = {(o.case.question, tuple(v.context.passages)) for o in outcomes for v in o.variants.values()}
    assert len(pairs) < 2 * len(outcomes)  # some cases have no conflict in reach: v3 repeats v0's context
    assert set(generator.requests.values()) == {1}
    assert responder.calls()["generator"] == len(generator.requests) == len(pairs)
