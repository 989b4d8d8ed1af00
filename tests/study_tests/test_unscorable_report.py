"""A study whose every trial is unscorable still writes its report (issue 30 §5), saying why nothing is on the front,
and exits 2 with the reason (issue 38)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.study_tests.test_study import write_study
from tuner.cli import main

# bm25 normalizes a chunk's score by the query's attainable Σ idf: nothing reaches 0.99 on the tiny data, so every
# configuration of this space retrieves nothing and Δfaithful is undefined
NOTHING_RETRIEVED = {"top_k": {"type": "int", "low": 1, "high": 3},
                     "relevance_threshold": {"type": "categorical", "choices": [0.99]},
                     "retriever": {"type": "categorical", "choices": ["bm25"]}}


def test_a_study_of_unscorable_trials_writes_a_report_that_says_why_the_front_is_empty(
        tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, budget={"trials": 2}, enqueue=[])
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(NOTHING_RETRIEVED))
    assert main(["run", str(study_file)]) == 2  # no trial could be scored: a failure, said in one line (issue 38)
    err = capsys.readouterr().err
    assert "no complete scorable trial yet: nothing to export" in err
    assert err.strip().splitlines()[-1].startswith("tuner: error: no trial could be scored (2 failed or unscorable; trial #0: "
                                                   "unscorable: retrieval returned nothing for every case); the report says")
    reports = list(tmp_path.rglob("report.html"))
    assert len(reports) == 1 and not list(tmp_path.rglob("config.yaml"))
    page = reports[0].read_text("utf-8")
    assert ("Nothing is on the front: every complete trial is unscorable (2: trial #0: retrieval returned nothing for "
            "every case; all are listed under warnings above). Nothing was exported.") in page
