"""Per-trial search latency (issue 45): each trial records how long its first stage takes to search one question,
and ``constraints.max_latency_ms`` makes a slower trial infeasible before any answer."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest

from tests.study_tests.test_study import write_study
from tuner.cache import DiskCache
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.front import TrialRecord
from tuner.retrieval import LATENCY_QUESTIONS, RetrievalPipeline
from tuner.settings import RetrievalSettings


def test_search_latency_is_timed_once_per_first_stage(tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    pipeline = RetrievalPipeline(dataset, DiskCache(tmp_path), encoder=encoder)
    bm25 = RetrievalSettings(retriever="bm25", chunk_size=40, candidate_depth=5)
    latency = pipeline.search_latency(bm25)
    assert latency is not None and latency.n == min(LATENCY_QUESTIONS, len(dataset.golden))
    assert 0 < latency.p50_ms <= latency.p95_ms
    # a final-ranking change searches the same first stage: the same figure; another first stage is timed anew
    assert pipeline.search_latency(bm25.model_copy(update={"top_k": 1})) is latency
    assert pipeline.search_latency(bm25.model_copy(update={"retriever": "dense"})) is not latency


def _study(tmp_path: Path) -> optuna.Study:
    return optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}")


@pytest.mark.parametrize("bound", [1e-6, 1e6])
def test_max_latency_ms_makes_slower_trials_infeasible_without_an_answer(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], bound: float
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, constraints={"max_latency_ms": bound}, budget={"trials": 3})
    assert main(["run", str(study_file), "--no-report"]) == 0
    complete = _study(tmp_path).get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert complete
    for trial in complete:
        latency = TrialRecord.from_trial(trial).search_latency
        assert latency is not None and trial.constraints["max_latency_ms"] == pytest.approx(latency.p95_ms - bound)
        skipped = TrialRecord.from_trial(trial).skipped
        assert (skipped is not None and "max_latency_ms" in skipped) == (bound < 1)
    capsys.readouterr()
    assert main(["trials", str(study_file), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    timed = {row["trial"]: row["latency.p95_ms"] for row in rows if row["state"] == "complete"}
    assert timed == {t.number: TrialRecord.from_trial(t).search_latency.p95_ms for t in complete}  # type: ignore[union-attr]


def test_max_latency_ms_is_refused_for_a_retrieval_service(tiny_dataset_dir: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, constraints={"max_latency_ms": 50},
                             retriever={"backend": "external", "url": "http://127.0.0.1:9/api/v1/dify", "knowledge_id": "kb"})
    assert main(["run", str(study_file)]) == 2
    assert "constraints.max_latency_ms: the search time of a retrieval service" in capsys.readouterr().err
