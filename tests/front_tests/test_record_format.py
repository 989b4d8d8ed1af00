"""A study written before issue 53's records (main at 9fe7f21) still reads and exports the same bytes.

``data/study_9fe7f21.json``: the trials and study attributes of a 14-trial study over the tiny dataset (bm25, extractive
reader, lexical judge) run with that commit's code, plus the attributes that code's ``TrialRecord.to_attrs`` wrote for
the records that study did not produce (pruned by evidence and exactly, a duplicate, skipped, unscorable, failed).
``data/export_9fe7f21.yaml`` is what that commit's ``tuner export --pick knee`` wrote for it. The study is rebuilt in a
fresh SQLite storage at test time from the attributes as stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from optuna.distributions import json_to_distribution
from optuna.trial import TrialState, create_trial

from tests.tiny_dataset import write_tiny_dataset
from tuner.cli import main
from tuner.front import TrialRecord

DATA = Path(__file__).parent / "data"
OLD = json.loads((DATA / "study_9fe7f21.json").read_text("utf-8"))
STORED = [trial["user_attrs"] for trial in OLD["trials"]] + OLD["made"]


@pytest.mark.parametrize("attrs", STORED, ids=[f"attrs{i}" for i in range(len(STORED))])
def test_stored_attributes_read_back_and_write_the_same_json(attrs: dict[str, Any]) -> None:
    again = TrialRecord.from_attrs(attrs).to_attrs()
    assert json.dumps(again, sort_keys=True) == json.dumps(attrs, sort_keys=True)  # the storage keeps each key apart


def _rebuild(folder: Path) -> tuple[Path, str]:
    storage = f"sqlite:///{folder / 'old.db'}"
    study = optuna.create_study(study_name=OLD["study_name"], storage=storage,
                                directions=[d.lower() for d in OLD["directions"]])
    for key, value in OLD["study"].items():
        study.set_user_attr(key, value)
    for trial in OLD["trials"]:
        study.add_trial(create_trial(
            state=TrialState[trial["state"]], values=trial["values"], params=trial["params"],
            distributions={k: json_to_distribution(v) for k, v in trial["distributions"].items()},
            user_attrs=trial["user_attrs"], system_attrs=trial["system_attrs"]))
    data = write_tiny_dataset(folder / "data")
    (folder / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 6}}))
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({
        "name": OLD["study_name"], "dataset": str(data), "search_space": "space.yaml", "storage": storage,
        "settings": {"candidate_depth": 10, "retriever": "bm25"}, "generator": {"backend": "extractive"},
        "judge": {"backend": "lexical"}, "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}, "output": "out"}))
    return path, storage


def test_a_study_written_before_exports_the_same_bytes(tmp_path: Path) -> None:
    study_file, storage = _rebuild(tmp_path)
    out = tmp_path / "export.yaml"
    assert main(["export", str(study_file), "--pick", "knee", "-o", str(out)]) == 0
    assert out.read_text("utf-8") == (DATA / "export_9fe7f21.yaml").read_text("utf-8").replace("{storage}", storage)
