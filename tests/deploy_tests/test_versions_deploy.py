"""Issue 22 §5: ``tuner gate`` and ``tuner serve`` apply the version knobs and the metadata filter as the study did."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import optuna
import pytest
import yaml

from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.io import write_jsonl
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.front import TrialRecord

from tests.deploy_tests.test_serve import _serve
from tests.net import free_port, wait_until_ready
pytestmark = pytest.mark.slow  # the module's server (or study) takes tens of seconds to start

KNOBS = {"top_k": 3, "retriever": "hybrid", "chunk_size": 32, "version_policy": "latest", "recency_weight": 0.2,
         "recency_half_life_days": 30.0, "dedupe": 0.9, "metadata_filter": "current"}
RETIRED = "mercury-router"


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def trial(tiny_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory, encoder: CachedEncoder) -> dict[str, Path]:
    """The tiny dataset dated, each conflict an older version in its document's family, one document retired
    (``status: retired``, the others ``current``); a one-trial study of ``KNOBS`` and that trial's export."""
    root = tmp_path_factory.mktemp("versions-deploy")
    data = root / "data"
    data.mkdir()
    (data / "golden.jsonl").write_bytes((tiny_dataset_dir / "golden.jsonl").read_bytes())
    corpus = _rows(tiny_dataset_dir / "corpus.jsonl")
    for month, row in enumerate(corpus, start=1):
        row["metadata"] = {"family": row["doc_id"], "date": f"2024-{month:02d}-01",
                           "status": "retired" if row["doc_id"] == RETIRED else "current"}
    conflicts = _rows(tiny_dataset_dir / "conflicts.jsonl")
    for row in conflicts:
        row["metadata"] = {"family": row["conflicts_with"], "date": "2023-01-01", "status": "current"}
    write_jsonl(data / "corpus.jsonl", corpus)
    write_jsonl(data / "conflicts.jsonl", conflicts)
    (root / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 3}}))
    study_file = root / "study.yaml"
    study_file.write_text(yaml.safe_dump({
        "name": "versions", "dataset": str(data), "search_space": "space.yaml", "filters": {"current": {"status": "current"}},
        "settings": {"candidate_depth": 8, **{k: v for k, v in KNOBS.items() if k != "top_k"}}, "budget": {"trials": 1},
        "pruning": {"enabled": False}, "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0},
        "enqueue": [{"top_k": KNOBS["top_k"]}], "output": "out",
    }))
    assert main(["-q", "run", str(study_file), "--no-report"]) == 0
    exported = root / "deploy.yaml"
    assert main(["export", str(study_file), "--trial", "0", "-o", str(exported)]) == 0
    return {"root": root, "data": data, "study": study_file, "export": exported,
            "storage": root / "out" / "versions" / "study.db"}


def _measured(trial: dict[str, Path]) -> tuple[optuna.trial.FrozenTrial, RetrievalSettings]:
    study = optuna.load_study(study_name="versions", storage=f"sqlite:///{trial['storage']}")
    frozen = study.trials[0]
    return frozen, RetrievalSettings(**(TrialRecord.from_trial(frozen).settings or {}))


def test_the_export_carries_the_filter_definition_and_the_knobs(trial: dict[str, Path]) -> None:
    settings = yaml.safe_load(trial["export"].read_text("utf-8"))["settings"]
    assert settings["metadata_filter"] == "current" and settings["metadata_filters"] == {"current": {"status": "current"}}
    assert {name: settings[name] for name in KNOBS} == KNOBS


def test_serve_returns_the_chunks_the_trial_ranked(trial: dict[str, Path]) -> None:
    _, measured = _measured(trial)
    dataset = load_dataset(trial["data"])
    expected = RetrievalPipeline(dataset).retrieve(measured, "clean")
    unfiltered = RetrievalPipeline(dataset).retrieve(measured.model_copy(update={"metadata_filter": "none"}), "clean")
    assert any(RETIRED in context.doc_ids for context in unfiltered), "without the filter the retired document is retrieved"
    port = free_port()
    process = _serve(["--config", str(trial["export"]), "--dataset", str(trial["data"]), "--port", str(port)])
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(process, url)
        for context, case in zip(expected, dataset.golden):
            chunks = httpx.post(f"{url}/retrieve", json={"query": case.question}, timeout=60).json()["chunks"]
            assert [c["metadata"]["chunk_id"] for c in chunks] == [c.chunk_id for c in context.chunks], case.id
            assert [c["score"] for c in chunks] == pytest.approx(list(context.scores), abs=1e-6)
            assert RETIRED not in [c["doc_id"] for c in chunks]
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_gate_measures_what_the_trial_measured(trial: dict[str, Path]) -> None:
    frozen, _ = _measured(trial)
    baseline = trial["root"] / "gate" / "baseline.json"
    assert main(["gate", "--config", str(trial["export"]), "--dataset", str(trial["data"]), "--baseline", str(baseline),
                 "--write-baseline"]) == 0
    stored = json.loads(baseline.read_text("utf-8"))
    recalls = stored["retrieval"]["recall_at_k"]
    assert sum(recalls.values()) / len(recalls) == pytest.approx(frozen.values[0])
    assert stored["summary"]["v3_delta_faithful"] == pytest.approx(frozen.values[1])
