"""Tracking: a tiny study logged to a real local MLflow store (and W&B offline files), read back with each tool's reader."""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import Any

import optuna
import pytest

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.front import TrialRecord

STORAGE = "out/tiny/study.db"


def _settings_as_params(record: TrialRecord) -> dict[str, str]:
    assert record.settings is not None
    return {key: str(value) for key, value in record.settings.items()}


def test_mlflow_gets_one_run_per_trial_with_objective_metrics_and_full_settings(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("optuna_integration.mlflow")
    mlflow_tracking = pytest.importorskip("mlflow.tracking")
    # MLflow 3 keeps the plain-folder store for compatibility only; it is the store that needs no server
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    study_file = write_study(
        tmp_path, tiny_dataset_dir, tracking={"mlflow": {"tracking_uri": uri, "tags": {"team": "rag"}}}
    )
    assert main(["run", str(study_file), "--trials", "3", "--no-report"]) == 0

    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / STORAGE}")
    client = mlflow_tracking.MlflowClient(uri)
    experiment = client.get_experiment_by_name("tiny")
    assert experiment is not None
    runs = {int(run.data.tags["number"]): run for run in client.search_runs([experiment.experiment_id])}
    assert sorted(runs) == [t.number for t in study.trials]
    evaluated = 0
    for trial in study.trials:
        run = runs[trial.number]
        record = TrialRecord.from_trial(trial)
        assert run.data.tags["state"] == trial.state.name and run.data.tags["team"] == "rag"
        if trial.values is not None:
            evaluated += 1
            assert run.data.metrics == dict(zip(["recall_at_k", "v3_delta_faithful"], trial.values))
        else:
            assert run.data.metrics == {}
        # every setting of the trial, searched or fixed (candidate_depth is fixed at 10 by the study file)
        assert run.data.params == _settings_as_params(record)
        assert run.data.params["candidate_depth"] == "10"
        assert run.data.params["top_k"] == str(trial.params["top_k"])
    assert evaluated >= 1


def test_unreachable_mlflow_server_stops_the_run_before_any_trial(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("optuna_integration.mlflow")
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    # port 9 (discard) has no listener on loopback: the connection is refused at once
    study_file = write_study(
        tmp_path, tiny_dataset_dir, tracking={"mlflow": {"tracking_uri": "http://user:s3cret@127.0.0.1:9"}}
    )
    assert main(["run", str(study_file), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tracking: mlflow at http://user:***@127.0.0.1:9" in err[0]
    assert "s3cret" not in err[0]
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / STORAGE}") if (tmp_path / STORAGE).exists() else None
    assert study is None or not study.trials


def test_missing_extra_is_one_line_naming_it(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow now raises ImportError, as when not installed
    study_file = write_study(tmp_path, tiny_dataset_dir, tracking={"mlflow": {}})
    assert main(["run", str(study_file), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'tuner[mlflow]'" in err[0]


def test_a_secret_in_the_tracking_section_is_rejected(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, tracking={"wandb": {"api_key": "k-123"}})
    assert main(["run", str(study_file), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(study_file) in err[0] and "tracking.wandb.api_key" in err[0]
    assert "k-123" not in err[0]


def _wandb_records(path: Path) -> list[Any]:
    """The records of a W&B offline run file: a LevelDB-style log (7-byte file header, then 32 KiB blocks of
    chunks, each with a 7-byte header: CRC32, length, type 1 full / 2 first / 3 middle / 4 last)."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    records, position, pending = [], 7, b""
    while position + 7 <= len(data):
        block_left = 32768 - position % 32768
        if block_left < 7:  # too small for a chunk header: the writer padded to the next block
            position += block_left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        if length == 0 and kind == 0:
            position += block_left
            continue
        pending += data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


@pytest.mark.slow
def test_wandb_offline_runs_carry_metrics_and_settings(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("optuna_integration.wandb")
    pytest.importorskip("wandb")
    import json

    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    folder = tmp_path / "wandb-files"
    study_file = write_study(
        tmp_path, tiny_dataset_dir, tracking={"wandb": {"mode": "offline", "dir": str(folder), "project": "p"}}
    )
    assert main(["run", str(study_file), "--trials", "2", "--no-report"]) == 0
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / STORAGE}")
    seen: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
    for run_file in sorted(folder.glob("wandb/offline-run-*/run-*.wandb")):
        config: dict[str, Any] = {}
        history: dict[str, Any] = {}
        for record in _wandb_records(run_file):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                config.update({i.key: json.loads(i.value_json) for i in record.run.config.update})
            elif kind == "config":
                config.update({i.key: json.loads(i.value_json) for i in record.config.update})
            elif kind == "history":
                history.update({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item})
        seen[int(history["trial_number"])] = (config, history)
    assert sorted(seen) == [t.number for t in study.trials]
    for trial in study.trials:
        config, history = seen[trial.number]
        record = TrialRecord.from_trial(trial)
        assert record.settings is not None
        assert {k: config[k] for k in record.settings} == record.settings
        if trial.values is not None:
            assert [history["recall_at_k"], history["v3_delta_faithful"]] == pytest.approx(trial.values)
