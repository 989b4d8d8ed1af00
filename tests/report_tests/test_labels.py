"""The golden set's provenance on a study's front: ``tuner pareto`` (text and ``--json``) and the report show where the
labels came from and, per front member, its recall beside the lower bound counting no-answer cases as misses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import optuna
import pytest
import yaml
from optuna.distributions import IntDistribution
from optuna.trial import create_trial

from tuner.cli import main
from tuner.dataset import UNKNOWN_ORIGIN, LabelProvenance
from tuner.embedding import CachedEncoder
from tuner.report import render_report
from tuner.front import StudyRecord
from tuner.study import load_study, load_study_file

PROVENANCE = LabelProvenance(("bm25", "hybrid"), 10, cases=90, cases_found_by_search=4, labels_found_by_search=5, no_answer=10,
                             rejected=3)


def _study(storage: str, labels: LabelProvenance | None) -> optuna.Study:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name="labels", storage=storage, directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    study.set_user_attr("noise_floor", {"recall_at_k": 0.0, "v3_delta_faithful": 0.0})
    study.set_user_attr("labels", None if labels is None else labels.to_dict())
    for values, retriever, top_k in (([0.9, 0.2], "bm25", 5), ([0.8, 0.1], "dense", 3)):
        study.add_trial(create_trial(
            values=values, params={"top_k": top_k}, distributions={"top_k": IntDistribution(1, 20)},
            user_attrs={"settings": {"retriever": retriever, "top_k": top_k}, "ci": {"recall_at_k": [0.8, 1.0]}, "n": 90, "n_total": 90,
                        "context_words": 100.0}))
    return study


def _study_file(folder: Path, dataset: Path) -> list[str]:
    """``tuner pareto`` arguments finding the study ``labels`` in ``folder``/study.db."""
    (folder / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 20}}))
    (folder / "study.yaml").write_text(yaml.safe_dump({"name": "labels", "dataset": str(dataset), "search_space": "space.yaml"}))
    return [str(folder / "study.yaml"), "--storage", f"sqlite:///{folder / 'study.db'}"]


def test_pareto_json_and_text_carry_the_labels_block(tmp_path: Path, tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _study_file(tmp_path, tiny_dataset_dir)
    _study(args[-1], PROVENANCE)
    assert main(["pareto", *args, "--json"]) == 0
    labels = json.loads(capsys.readouterr().out)["labels"]
    assert labels["known"] is True and labels["pool_retrievers"] == ["bm25", "hybrid"] and labels["no_answer"] == 10
    # recall 0.9 on 90 answered cases, 10 marked no answer: 0.9 · 90 / 100 = 0.81; the interval maps the same way
    bm25 = labels["trials"]["0"]
    assert bm25["recall_lower_bound"] == pytest.approx(0.81) and bm25["recall_lower_bound_ci"] == pytest.approx([0.72, 0.90])
    assert bm25["pooled"].startswith("bm25 at top_k 5 is measured on questions bm25 helped label (pool depth 10)")
    assert labels["trials"]["1"]["pooled"] is None and labels["trials"]["1"]["recall_lower_bound"] == pytest.approx(0.72)
    assert main(["pareto", *args]) == 0
    out = capsys.readouterr().out
    assert ("labels: labels from a review of a bm25+hybrid pool (depth 10): 90 cases, 4 with labels found by search outside the "
            "pool (5 chunks), 10 marked no answer in the knowledge base, 3 rejected") in out
    assert "trial 0: recall with the 10 no-answer case(s) counted as misses (lower bound): 0.810 [0.720, 0.900]; bm25 at top_k 5" in out


def test_unknown_origin_is_said_and_the_report_shows_the_bound(tmp_path: Path, tiny_dataset_dir: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    args = _study_file(tmp_path, tiny_dataset_dir)
    unknown_study = _study(args[-1], None)
    assert main(["pareto", *args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["labels"] == {"known": False, "note": UNKNOWN_ORIGIN, "trials": {}}
    unknown = render_report(unknown_study)
    assert f"Labels: {UNKNOWN_ORIGIN}." in unknown
    known = render_report(_study(f"sqlite:///{tmp_path / 'other.db'}", PROVENANCE))
    assert "10 no-answer case(s) as misses (lower bound)</th>" in known and "<td>0.810 [0.720, 0.900]</td>" in known
    assert "bm25 at top_k 5 is measured on questions bm25 helped label" in known


def test_eval_shows_the_labels_and_the_lower_bound(tmp_path: Path, tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = tmp_path / "tiny"
    shutil.copytree(tiny_dataset_dir, dataset)
    args = ["eval", str(dataset), "--retriever", "bm25", "--top-k", "3", "--chunk-size", "40"]
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["labels"] == {"known": False, "note": UNKNOWN_ORIGIN}
    (dataset / "golden.provenance.json").write_text(json.dumps(PROVENANCE.to_dict()), "utf-8")
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    labels = report["labels"]
    assert labels["known"] is True and labels["recall_lower_bound"] == pytest.approx(report["recall_at_k"] * 0.9)
    assert labels["pooled"].startswith("bm25 at top_k 3 is measured on questions bm25 helped label")
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "labels: labels from a review of a bm25+hybrid pool (depth 10): 90 cases" in out
    assert "labels: recall with the 10 no-answer case(s) counted as misses (lower bound): " in out


def test_a_study_records_the_provenance_of_its_golden_set(tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """One trial of a real study (the session's encoder: no model load of its own)."""
    dataset = tmp_path / "tiny"
    shutil.copytree(tiny_dataset_dir, dataset)
    (dataset / "golden.provenance.json").write_text(json.dumps(PROVENANCE.to_dict()), "utf-8")
    (tmp_path / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 4}}))
    study_file = tmp_path / "study.yaml"
    study_file.write_text(yaml.safe_dump({
        "name": "recorded", "dataset": str(dataset), "search_space": "space.yaml", "budget": {"trials": 1},
        "settings": {"retriever": "bm25", "chunk_size": 40}, "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0},
        "sampler": {"name": "tpe", "seed": 1}, "output": "out"}))
    assert main(["run", str(study_file), "--no-report"]) == 0
    printed = " ".join(capsys.readouterr().err.split())
    assert "labels: labels from a review of a bm25+hybrid pool (depth 10): 90 cases" in printed
    assert "labels: recall with the 10 no-answer case(s) counted as misses (lower bound)" in printed
    study = load_study(load_study_file(str(study_file)))
    assert StudyRecord.from_study(study).provenance() == PROVENANCE
    assert main(["pareto", str(study_file), "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    trials = output["labels"]["trials"]
    assert trials and all(t["pooled"] and t["recall_lower_bound"] == pytest.approx(row["values"]["recall_at_k"] * 0.9)
                          for t, row in zip(trials.values(), output["front"]))


def test_trials_show_the_labels_and_each_trials_lower_bound(tmp_path: Path, tiny_dataset_dir: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = _study_file(tmp_path, tiny_dataset_dir)
    _study(args[-1], PROVENANCE)
    assert main(["trials", *args, "--json"]) == 0
    captured = capsys.readouterr()
    rows = {row["trial"]: row for row in json.loads(captured.out)}
    # recall 0.9 [0.8, 1.0] on 90 answered cases, 10 no answer: × 90/100 → 0.81 [0.72, 0.90]; dense 0.8 → 0.72
    assert rows[0]["recall_at_k.lower_bound"] == pytest.approx(0.81)
    assert [rows[0]["recall_at_k.lower_bound.low"], rows[0]["recall_at_k.lower_bound.high"]] == pytest.approx([0.72, 0.90])
    assert rows[0]["labels.pooled"].startswith("bm25 at top_k 5 is measured on questions bm25 helped label (pool depth 10)")
    assert rows[1]["recall_at_k.lower_bound"] == pytest.approx(0.72) and rows[1]["labels.pooled"] is None
    assert "labels: labels from a review of a bm25+hybrid pool (depth 10): 90 cases" in captured.err
    assert main(["trials", *args]) == 0
    out = capsys.readouterr().out
    assert "labels: labels from a review of a bm25+hybrid pool (depth 10): 90 cases" in out
    assert "  trials 0: bm25 at top_k 5 is measured on questions bm25 helped label" in out
    assert "trials 1" not in out
    assert main(["trials", *args, "--csv", str(tmp_path / "trials.csv")]) == 0
    assert "labels: labels from a review of a bm25+hybrid pool" in capsys.readouterr().out


def test_trials_of_a_study_without_provenance_say_so(tmp_path: Path, tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _study_file(tmp_path, tiny_dataset_dir)
    _study(args[-1], None)
    assert main(["trials", *args, "--json"]) == 0
    captured = capsys.readouterr()
    assert all(row["recall_at_k.lower_bound"] is None and row["labels.pooled"] is None for row in json.loads(captured.out))
    assert f"labels: {UNKNOWN_ORIGIN}" in captured.err
