"""Issue 24 §1: the gate compares a case with the baseline only while it asks what the baseline measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tiny_dataset import GOLDEN, write_tiny_dataset
from tuner.cli import main
from tuner.embedding import CachedEncoder
from tuner.errors import UserError
from tuner.dataset import load_dataset
from tuner.gate import GateThresholds, RobustnessSetup, evaluate_gate, measure
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

ALL = [case[0] for case in GOLDEN]
SETTINGS = RetrievalSettings(retriever="bm25", top_k=1)


def _rebuilt(root: Path, changed: int) -> Path:
    """The tiny dataset with the first ``changed`` cases' questions and relevant documents rotated among
    them (the ids q1, q2, ... kept), as a golden set rebuilt from other questions would be."""
    write_tiny_dataset(root)
    rows = [json.loads(line) for line in (root / "golden.jsonl").read_text("utf-8").splitlines()]
    content = ("question", "ground_truth", "keypoints", "relevant_doc_ids", "wrong_answers")
    moved = [{key: rows[(n + 1) % changed][key] for key in content} for n in range(changed)]
    for row, new in zip(rows, moved):
        row.update(new)
    (root / "golden.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return root


def test_changed_cases_are_not_compared_and_are_counted(tmp_path: Path, pipeline: RetrievalPipeline, encoder: CachedEncoder) -> None:
    baseline = measure(pipeline, SETTINGS, ALL, None).to_baseline()
    rebuilt = RetrievalPipeline(load_dataset(_rebuilt(tmp_path / "two", 2)), encoder=encoder)
    result = evaluate_gate(measure(rebuilt, SETTINGS, ALL, None), GateThresholds(), baseline)
    assert "compared 4 of 6 cases with the baseline; 2 changed since it (q1, q2), not compared" in result.notes
    recall = next(c for c in result.checks if c.name == "recall_at_k")
    assert "n=4" in recall.message
    assert "the dataset changed since the baseline was written (compared on the unchanged cases)" in result.notes


def test_too_few_unchanged_cases_stop_the_gate(tmp_path: Path, pipeline: RetrievalPipeline, encoder: CachedEncoder) -> None:
    baseline = measure(pipeline, SETTINGS, ALL, None).to_baseline()
    # the case: every id kept, every question another one; retrieval would "pass" if paired by id
    rebuilt = RetrievalPipeline(load_dataset(_rebuilt(tmp_path / "all", 6)), encoder=encoder)
    with pytest.raises(UserError, match=r"^b.json: only 0 of 6 measured cases ask what the baseline measured \(6 changed"):
        evaluate_gate(measure(rebuilt, SETTINGS, ALL, None), GateThresholds(), baseline, baseline_source="b.json")


def test_faithfulness_trends_pair_only_unchanged_cases(tmp_path: Path, pipeline: RetrievalPipeline, setup: RobustnessSetup,
                                                       encoder: CachedEncoder) -> None:
    baseline = measure(pipeline, SETTINGS, ALL, setup).to_baseline()
    rebuilt = RetrievalPipeline(load_dataset(_rebuilt(tmp_path / "two", 2)), encoder=encoder)
    result = evaluate_gate(measure(rebuilt, SETTINGS, ALL, setup), GateThresholds(), baseline)
    trend = next(c for c in result.checks if c.name == "faithful_v0")
    assert "on 4 paired cases" in trend.message


def test_cli_notes_a_config_chosen_on_another_dataset_and_exits_2_on_a_rebuilt_set(
    tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "deploy.yaml"
    config.write_text("settings: {retriever: bm25, top_k: 1}\nprovenance: {study: s, dataset_hash: " + "ab" * 32 + "}\n", "utf-8")
    baseline = tmp_path / "baseline.json"

    def gate(dataset: Path, *extra: str) -> int:
        return main(["gate", "--config", str(config), "--dataset", str(dataset), "--baseline", str(baseline),
                     "--out", str(tmp_path / "out"), *extra])

    assert gate(tiny_dataset_dir, "--write-baseline") == 0
    capsys.readouterr()
    gate(tiny_dataset_dir)
    out = capsys.readouterr().out
    assert "note: the configuration was chosen on another dataset (provenance dataset_hash abababababab" in out
    assert "note: compared 6 of 6 cases with the baseline; 0 changed since it, not compared" in out
    assert gate(_rebuilt(tmp_path / "rebuilt", 6)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "only 0 of 6 measured cases ask what the baseline measured" in err[0]
