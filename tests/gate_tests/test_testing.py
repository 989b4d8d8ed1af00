"""tuner.testing: the gate as pytest assertions, with readable failure messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gate_tests.conftest import FlakyJudge
from tuner.embedding import CachedEncoder
from tuner.gate import measure, write_baseline
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.testing import assert_retrieval_gate, assert_robustness


def test_assert_retrieval_gate(tmp_path: Path, tiny_dataset_dir: Path, pipeline: RetrievalPipeline,
                               encoder: CachedEncoder) -> None:
    baseline = tmp_path / "baseline.json"
    ids = [c.id for c in pipeline.dataset.golden]
    write_baseline(baseline, measure(pipeline, RetrievalSettings(top_k=5), ids, None).to_baseline(), None)
    result = assert_retrieval_gate({"top_k": 5}, tiny_dataset_dir, baseline=baseline, encoder=encoder)
    assert result.verdict == "pass"
    with pytest.raises(AssertionError) as info:
        assert_retrieval_gate({"top_k": 1}, tiny_dataset_dir, baseline=baseline, encoder=encoder)
    assert str(info.value) == (
        "retrieval gate: regression (1 failed check(s))\n"
        "  retrieval.recall_at_k: 1.000 → 0.917 (-8.3% relative, n=6): fell by more than 3%"
    )
    assert_retrieval_gate({"top_k": 1}, tiny_dataset_dir, baseline=baseline, encoder=encoder, recall_at_k=0.10)


def test_assert_robustness(tiny_dataset_dir: Path, encoder: CachedEncoder) -> None:
    assert_robustness({"top_k": 5}, tiny_dataset_dir, max_delta=0.25, encoder=encoder)
    with pytest.raises(AssertionError) as info:
        assert_robustness({"top_k": 5}, tiny_dataset_dir, max_delta=0.25, categories={"single_hop": 0.10},
                          category_min_cases=1, encoder=encoder)
    assert str(info.value).splitlines() == [
        "robustness gate: regression (1 failed check(s))",
        "  robustness.v3.delta_faithful[single_hop]: Δfaithful 25.0% > 10% (n=4)",
    ]


def test_assert_robustness_reports_an_unstable_judge(tiny_dataset_dir: Path, encoder: CachedEncoder) -> None:
    with pytest.raises(AssertionError, match=r"^robustness gate: judge unstable \(1 failed check\(s\)\)\n  judge.self_check: judge unstable: "):
        assert_robustness({"top_k": 5}, tiny_dataset_dir, max_delta=0.25, judge=FlakyJudge(1),
                          recheck_judge=FlakyJudge(2), encoder=encoder)
