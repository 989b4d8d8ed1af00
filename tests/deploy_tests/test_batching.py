"""The service's micro-batcher (:class:`tuner.embedding.BatchingEncoder`): the questions of concurrent requests are
embedded in one forward pass, and what comes back is what each question gets alone: the same vectors (to float
rounding) and the same retrieved chunks."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

from tests.deploy_tests.test_retriever import _config, _shop
from tuner.cli import main
from tuner.deploy import Retriever
from tuner.embedding import BatchingEncoder, CachedEncoder
from tuner.export import read_export

T = TypeVar("T")
QUESTIONS = [f"{q} (ticket {n})" for n, q in enumerate((
    "How long is the warranty on laptops?", "Can I return a product after 30 days?", "How much does express shipping cost?",
    "Is accidental damage covered?", "How many business days does standard shipping take?", "Do I get a full refund?",
    "What does the warranty cover?", "笔记本电脑的保修期是多久？"))]


def at_once(calls: list[Callable[[], T]]) -> list[T]:
    """Run ``calls`` in threads released together; their results in order (a failure fails the test)."""
    results: list[T | None] = [None] * len(calls)
    barrier = threading.Barrier(len(calls))

    def run(i: int) -> None:
        barrier.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


@pytest.mark.slow
def test_concurrent_questions_share_one_forward_pass_and_get_their_own_vectors(encoder: CachedEncoder) -> None:
    batcher = BatchingEncoder(encoder.inner, max_wait=5.0, max_texts=len(QUESTIONS))  # waits only until all arrived
    vectors = at_once([lambda q=q: batcher.encode([q]) for q in QUESTIONS])
    assert batcher.forward_passes == 1
    for question, batched in zip(QUESTIONS, vectors):
        alone = encoder.inner.encode([question])
        assert batched.shape == alone.shape == (1, 384)
        assert np.abs(batched - alone).max() < 1e-5 and float(batched[0] @ alone[0]) > 0.99999


def test_a_large_call_or_no_wait_runs_alone(encoder: CachedEncoder) -> None:
    batcher = BatchingEncoder(encoder.inner, max_wait=5.0, max_texts=2)
    assert batcher.encode(QUESTIONS[:2]).shape == (2, 384) and batcher.forward_passes == 1  # did not wait 5 s for company
    off = BatchingEncoder(encoder.inner, max_wait=0.0)
    assert off.encode(QUESTIONS[:1]).shape == (1, 384) and off.forward_passes == 1


def test_a_failed_batch_fails_every_caller_in_its_own_thread(encoder: CachedEncoder, monkeypatch: pytest.MonkeyPatch) -> None:
    batcher = BatchingEncoder(encoder.inner, max_wait=5.0, max_texts=3)
    monkeypatch.setattr(encoder.inner, "encode", lambda texts, prompt="": (_ for _ in ()).throw(RuntimeError("model gone")))

    def call(question: str) -> str:
        try:
            batcher.encode([question])
        except RuntimeError as exc:
            return str(exc)
        return "no error"

    assert at_once([lambda q=q: call(q) for q in QUESTIONS[:3]]) == ["model gone"] * 3


def test_batched_service_retrieves_what_each_question_retrieves_alone(tmp_path: Path) -> None:
    exported = read_export(_config(tmp_path))
    alone = Retriever.from_export(exported, _shop(), batch_wait=0.0)
    expected = [alone.retrieve(q) for q in QUESTIONS]
    batched = Retriever.from_export(exported, _shop(), batch_wait=5.0, batch_texts=len(QUESTIONS))
    passes = batched.batcher.forward_passes
    got = at_once([lambda q=q: batched.retrieve(q) for q in QUESTIONS])
    assert batched.batcher.forward_passes - passes == 1  # eight unseen questions, one forward pass
    for want, have in zip(expected, got):
        assert [(c.doc_id, c.span) for c in have] == [(c.doc_id, c.span) for c in want]
        assert [c.score for c in have] == pytest.approx([c.score for c in want], abs=1e-5)


def test_a_negative_batch_wait_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--config", str(_config(tmp_path)), "--dataset", "demo", "--batch-wait-ms", "-1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["tuner: error: --batch-wait-ms: must be 0 or more, got -1"]
