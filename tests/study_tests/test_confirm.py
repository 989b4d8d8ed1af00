"""Issue 29 §3: a confirmation split the search never sees, each front member evaluated on it when the study ends."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import optuna
import pytest
import yaml

from tests.study_tests.test_study import write_study
from tests.tiny_dataset import GOLDEN, write_tiny_dataset
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.io import write_jsonl
from tuner.report import render_report
from tuner.front import StudyRecord, TrialRecord
from tuner.study import MIN_CONFIRM_CASES, split_cases


def _cases(counts: dict[str, int]) -> list[SimpleNamespace]:
    return [SimpleNamespace(id=f"{category}-{i:02d}", category=category, stratum=None)
            for category, n in counts.items() for i in range(n)]


def test_the_split_is_stratified_by_category_and_depends_only_on_ids_share_and_seed() -> None:
    cases = _cases({"single_hop": 28, "multi_hop": 7, "long_tail": 7})
    tuning, held = split_cases(cases, 0.75, seed=0)
    # 0.75 · 42 = 31.5 → 32 held out: 21 of 28 single_hop, then 5.25 and 5.25 rounded by largest remainder to 6 + 5
    assert len(held) == 32 and len(tuning) == 10 and not set(held) & set(tuning)
    per_category = {c: sum(h.startswith(c) for h in held) for c in ("single_hop", "multi_hop", "long_tail")}
    assert per_category["single_hop"] == 21 and sorted([per_category["multi_hop"], per_category["long_tail"]]) == [5, 6]
    # another order of the same cases (another worker, a resume) draws the same split; another seed another one
    assert split_cases(list(reversed(cases)), 0.75, seed=0)[1] == sorted(held, key=[c.id for c in reversed(cases)].index)
    assert set(split_cases(cases, 0.75, seed=1)[1]) != set(held)


def test_a_set_without_strata_splits_exactly_as_before_strata_were_kept() -> None:
    """Studies already recorded keep their split: the held-out ids the category-only split drew (pinned from it)."""
    cases = _cases({"single_hop": 5, "multi_hop": 4, "long_tail": 3})
    assert split_cases(cases, 0.5, seed=7)[1] == ["single_hop-02", "single_hop-03", "multi_hop-00", "multi_hop-01", "long_tail-00",
                                                   "long_tail-02"]


def test_a_drafted_set_is_split_within_each_category_and_stratum() -> None:
    strata = ["head"] * 20 + ["tail"] * 4 + ["known_bad"] * 2
    cases = [SimpleNamespace(id=f"log-{i:04d}", category="uncategorized", stratum=s) for i, s in enumerate(strata)]
    held = split_cases(cases, 0.5, seed=0)[1]
    # half of each stratum: 10 of 20 head, 2 of 4 tail, 1 of 2 known_bad (category alone drew 9, 4 and 0 with this seed)
    stratum_of = {c.id: c.stratum for c in cases}
    assert {name: sum(stratum_of[h] == name for h in held) for name in ("head", "tail", "known_bad")} == {"head": 10, "tail": 2, "known_bad": 1}


def _forty_two_cases(root: Path) -> Path:
    """The tiny dataset with each of its 6 questions asked 7 times (42 cases; share 0.75 holds out 32 ≥ 30)."""
    write_tiny_dataset(root)
    write_jsonl(root / "golden.jsonl", [
        {"id": f"{i}-{copy}", "question": q, "ground_truth": g, "keypoints": k, "relevant_doc_ids": r, "category": c,
         "wrong_answers": w}
        for copy in range(7) for i, q, g, k, r, c, w in GOLDEN
    ])
    return root


def test_too_few_confirmation_cases_is_one_line_and_exit_2_before_any_trial(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, confirm={"share": 0.3, "seed": 0})
    assert main(["run", str(study_file), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tuner: error: confirm.share 0.3: 2 confirmation case(s) of 6, fewer than {MIN_CONFIRM_CASES}; "
                   "raise confirm.share, add cases or remove confirm:"]
    assert not (tmp_path / "out").exists()
    assert main(["run", str(study_file), "--dry-run"]) == 2  # the estimate says it too
    assert "confirm.share 0.3" in capsys.readouterr().err
    bad = write_study(tmp_path, tiny_dataset_dir, confirm={"share": 1.5})
    assert main(["run", str(bad), "--no-report"]) == 2
    assert "confirm.share" in capsys.readouterr().err


def test_front_members_are_confirmed_on_held_out_cases_and_every_output_shows_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = _forty_two_cases(tmp_path / "data")
    space = {"top_k": {"type": "int", "low": 1, "high": 3}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    study_file = write_study(tmp_path, dataset, budget={"trials": 3}, confirm={"share": 0.75, "seed": 0},
                             enqueue=[{"top_k": 1, "retriever": "bm25"}], pick={"rule": "knee"})
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    assert main(["run", str(study_file), "--no-report"]) == 0
    storage = f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}"
    study = optuna.load_study(study_name="tiny", storage=storage)
    record = StudyRecord.from_study(study)
    assert len(record.confirm_cases) == 32 and len(record.case_order) == 10
    assert not set(record.confirm_cases) & set(record.case_order)  # the search saw only the tuning share
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert all(TrialRecord.from_trial(t).n_total == 10 for t in complete)
    capsys.readouterr()
    assert main(["pareto", str(study_file), "--json"]) == 0
    front = json.loads(capsys.readouterr().out)["front"]
    assert front and all(str(row["trial"]) in record.confirm for row in front)
    for row in front:
        assert set(row["confirm"]) == {"recall_at_k", "v3_delta_faithful"} and row["confirm_n"] == 32
        assert row["optimism"]["recall_at_k"] == pytest.approx(row["values"]["recall_at_k"] - row["confirm"]["recall_at_k"])
        assert row["confirm_ci"]["recall_at_k"] is not None
    assert main(["pareto", str(study_file)]) == 0
    assert "recall_at_k held out (optimism)" in capsys.readouterr().out
    assert main(["trials", str(study_file), "--json"]) == 0
    rows = {row["trial"]: row for row in json.loads(capsys.readouterr().out)}
    first = front[0]
    assert rows[first["trial"]]["recall_at_k.confirm"] == first["confirm"]["recall_at_k"]
    exported = yaml.safe_load((tmp_path / "out" / "tiny" / "config.yaml").read_text())
    held = exported["provenance"]["confirm"]
    assert held["values"] == record.confirm[str(exported["provenance"]["trial"])]["values"]
    # the per-case held-out scores the pick notes compare stay in the study; the export keeps the figures
    assert all(len(record.confirm[str(row["trial"])][key]) == 32 for row in front for key in ("recall_cases", "f0", "f3"))
    assert set(held) == {"values", "ci", "n", "n_total"}
    # the export names the whole golden set (the one the gate is given) and the split the study made of it
    assert exported["provenance"]["dataset_hash"] == load_dataset(dataset).content_hash != record.dataset_hash
    assert exported["provenance"]["confirm_split"] == {"tuning_dataset_hash": record.dataset_hash, "held_out_cases": 32}
    capsys.readouterr()
    assert main(["gate", "--config", str(tmp_path / "out" / "tiny" / "config.yaml"), "--dataset", str(dataset),
                 "--out", str(tmp_path / "gate")]) in (0, 1)
    gated = " ".join(capsys.readouterr().out.split())
    assert "another dataset" not in gated
    assert ("note: the configuration was chosen on this dataset's tuning share and confirmed on its 32 held-out cases "
            "(its study's confirm:): the gate measures every case") in gated
    # the report's picks table shows the held-out figures the pick rule used beside the tuning ones
    picks_section = render_report(study).split("5. Picked configurations by category", 1)[1]
    picked = exported["provenance"]["trial"]
    assert "recall@k held out" in picks_section and "recall@k optimism" in picks_section
    assert f"{record.confirm[str(picked)]['values']['recall_at_k']:.3f}" in picks_section
    # a resume keeps the split and confirms nothing twice
    confirmed = dict(record.confirm)
    assert main(["run", str(study_file), "--no-report"]) == 0
    again = StudyRecord.from_study(optuna.load_study(study_name="tiny", storage=storage))
    assert again.confirm_cases == record.confirm_cases
    assert {k: v for k, v in again.confirm.items() if k in confirmed} == confirmed


def test_resuming_with_another_split_names_the_split_not_another_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 38: the tuning share's hash changes with the split, and was checked first ("was run on another dataset")
    dataset = _forty_two_cases(tmp_path / "data")
    space = {"top_k": {"type": "int", "low": 1, "high": 2}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    study_file = write_study(tmp_path, dataset, budget={"trials": 1}, confirm={"share": 0.75, "seed": 0},
                             enqueue=[{"top_k": 1, "retriever": "bm25"}])
    assert main(["run", str(study_file), "--no-report"]) == 0
    capsys.readouterr()
    split = "tuner: error: study 'tiny' was run with another confirmation split (32 held-out cases, now {}): keep its confirm: "
    for confirm, now in (({"share": 0.75, "seed": 1}, "32"), (None, "none (no confirm:)")):
        changed = write_study(tmp_path, dataset, budget={"trials": 2}, enqueue=[{"top_k": 1, "retriever": "bm25"}],
                              **({"confirm": confirm} if confirm else {}))
        assert main(["run", str(changed), "--no-report"]) == 2
        assert capsys.readouterr().err.strip() == split.format(now) + "(share and seed) as it was, or use a new name or storage"
    # other data under the same study name is still "another dataset"
    rows = [json.loads(line) for line in (dataset / "golden.jsonl").read_text("utf-8").splitlines()]
    write_jsonl(dataset / "golden.jsonl", [{**row, "ground_truth": row["ground_truth"] + "."} for row in rows])
    write_study(tmp_path, dataset, budget={"trials": 2}, confirm={"share": 0.75, "seed": 0}, enqueue=[{"top_k": 1, "retriever": "bm25"}])
    assert main(["run", str(study_file), "--no-report"]) == 2
    assert "was run on another dataset" in capsys.readouterr().err
