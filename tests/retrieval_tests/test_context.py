"""The :class:`EmbeddingContext` of a run: one loaded model per name within it, its options applied to every encoder
it made, and nothing shared with another context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.embedding import EmbeddingContext, EmbeddingOptions, SentenceTransformerEncoder

MODEL = "all-MiniLM-L6-v2"


def test_one_context_shares_a_model_across_stores_and_two_contexts_share_nothing(tmp_path: Path) -> None:
    context = EmbeddingContext(EmbeddingOptions(device="cpu", batch_size=5))
    first = context.encoder(MODEL, tmp_path / "a")
    assert context.encoder(MODEL, tmp_path / "a") is first
    second = context.encoder(MODEL, tmp_path / "b")
    assert second is not first and second.inner is first.inner and second.store is not first.store
    other = EmbeddingContext(EmbeddingOptions(device="cpu", batch_size=7))
    assert other.encoder(MODEL, tmp_path / "a").inner is not first.inner
    assert (first.inner.batch_size, other.encoder(MODEL, tmp_path / "a").inner.batch_size) == (5, 7)
    context.configure(EmbeddingOptions(device="cpu", batch_size=3))  # reaches the encoders it made, and only those
    assert (first.inner.batch_size, other.encoder(MODEL, tmp_path / "a").inner.batch_size) == (3, 7)
    assert context.options.batch_size == 3 and other.options.batch_size == 7


def test_a_study_loads_its_embedding_model_once_for_retrieval_and_answering(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[str] = []
    original = SentenceTransformerEncoder.__init__

    def counting(self: SentenceTransformerEncoder, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        loads.append(self.model_id)

    monkeypatch.setattr(SentenceTransformerEncoder, "__init__", counting)
    # dense retrieval embeds chunks and questions; the default extractive generator embeds sentences with the same model
    # a query prompt no other test uses: the questions are new to the session's store, so they are embedded here
    study_file = write_study(tmp_path, tiny_dataset_dir, enqueue=[{"top_k": 2, "retriever": "dense", "chunk_size": 40}],
                             settings={"candidate_depth": 10, "query_prompt": "context test: "})
    assert main(["run", str(study_file), "--trials", "1", "--no-report", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert loads == [MODEL]
    assert summary["texts_embedded"] >= 3  # counted by the study's context: at least the tiny set's questions
