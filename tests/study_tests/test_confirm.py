"""Issue 29 §3: a confirmation split the search never sees, each front member evaluated on it when the study ends; issue
37 §3: both shares of at least 30 cases, a question and its copies on one side, figures that say where they come from."""

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
    return [SimpleNamespace(id=f"{category}-{i:02d}", category=category, stratum=None, question=f"{category} question {i}")
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
    cases = [SimpleNamespace(id=f"log-{i:04d}", category="uncategorized", stratum=s, question=f"logged question {i}")
             for i, s in enumerate(strata)]
    held = split_cases(cases, 0.5, seed=0)[1]
    # half of each stratum: 10 of 20 head, 2 of 4 tail, 1 of 2 known_bad (category alone drew 9, 4 and 0 with this seed)
    stratum_of = {c.id: c.stratum for c in cases}
    assert {name: sum(stratum_of[h] == name for h in held) for name in ("head", "tail", "known_bad")} == {"head": 10, "tail": 2, "known_bad": 1}


def test_a_question_and_its_copies_fall_on_one_side_of_the_split() -> None:
    """A reviewed draft of a question already in the set, a re-cased copy, a near duplicate in Chinese: held out with
    the question or kept with it, under every seed, while distinct questions split as before."""
    cases = _cases({"single_hop": 30})
    copies = {
        "single_hop-03": ["single_hop-17", "single_hop-25"],  # exact, once normalized
        "single_hop-05": ["single_hop-11"],  # near: 要 / 需要
    }
    by_id = {c.id: c for c in cases}
    by_id["single_hop-03"].question = "How long does a refund take?"
    by_id["single_hop-17"].question = "how long does a refund take"
    by_id["single_hop-25"].question = "  HOW LONG does a refund take？"
    by_id["single_hop-05"].question = "退款要多久才能到账户里"
    by_id["single_hop-11"].question = "退款需要多久才能到账户里"
    for seed in range(20):
        tuning, held = split_cases(cases, 0.5, seed)
        assert len(held) + len(tuning) == 30 and abs(len(held) - 15) <= 2
        for first, others in copies.items():
            side = first in held
            assert all((other in held) == side for other in others), (seed, first)


def test_a_tuning_share_under_thirty_cases_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = _distinct_cases(tmp_path / "data", 7)  # 42 cases: share 0.75 holds out 32 and tunes on 10
    study_file = write_study(tmp_path, dataset, confirm={"share": 0.75, "seed": 0})
    assert main(["run", str(study_file), "--no-report"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"tuner: error: confirm.share 0.75: 10 tuning case(s) of 42, fewer than {MIN_CONFIRM_CASES}; lower "
        "confirm.share, add cases or remove confirm:"]
    assert not (tmp_path / "out").exists()


def _distinct_cases(root: Path, copies: int) -> Path:
    """The tiny dataset with each of its 6 questions asked ``copies`` times, each copy a distinct question (its number
    differs, so it is neither an exact nor a near duplicate)."""
    write_tiny_dataset(root)
    write_jsonl(root / "golden.jsonl", [
        {"id": f"{i}-{copy}", "question": f"{q} (case {copy})", "ground_truth": g, "keypoints": k, "relevant_doc_ids": r,
         "category": c, "wrong_answers": w}
        for copy in range(copies) for i, q, g, k, r, c, w in GOLDEN
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


@pytest.mark.slow
def test_front_members_are_confirmed_on_held_out_cases_and_every_output_shows_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = _distinct_cases(tmp_path / "data", 11)  # 66 cases: share 0.5 holds out 33 and tunes on 33
    space = {"top_k": {"type": "int", "low": 1, "high": 3}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    study_file = write_study(tmp_path, dataset, budget={"trials": 3}, confirm={"share": 0.5, "seed": 0},
                             enqueue=[{"top_k": 1, "retriever": "bm25"}], pick={"rule": "knee"})
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    assert main(["run", str(study_file), "--no-report"]) == 0
    closing = capsys.readouterr().err
    storage = f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}"
    study = optuna.load_study(study_name="tiny", storage=storage)
    record = StudyRecord.from_study(study)
    assert len(record.confirm_cases) == 33 and len(record.case_order) == 33
    assert not set(record.confirm_cases) & set(record.case_order)  # the search saw only the tuning share
    complete = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert all(TrialRecord.from_trial(t).n_total == 33 for t in complete)
    # the closing line names the cases its figures come from, each figure with its own interval
    picked_line = next(line for line in closing.splitlines() if "picked trial" in line)
    assert "on the 33 held-out cases: recall_at_k " in picked_line and picked_line.count("[") == 2
    capsys.readouterr()
    assert main(["pareto", str(study_file), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    front = shown["front"]
    assert front and all(row["trial"] in record.confirm for row in front)
    # neighbours and the pick against its runner-up say how many cases would separate each difference (null: none)
    for row in shown["neighbours"] + ([shown["pick"]["runner_up"]] if shown["pick"]["runner_up"] else []):
        for name in ("recall_at_k", "v3_delta_faithful"):
            needed = row[name]["cases_to_separate"]
            assert (needed is None) == (row[name]["difference"] == 0) and (needed is None or needed >= 1)
    assert shown["pick"]["figures"] == "on the 33 held-out cases"
    for row in front:
        assert set(row["confirm"]) == {"recall_at_k", "v3_delta_faithful", "conflict_exposure"} and row["confirm_n"] == 33
        # optimism in each objective's direction: recall is maximized (tuning − held out), Δ minimized (held out − tuning)
        # the held-out exposure beside the held-out Δ: the mean of the per-case flags kept for paired comparisons
        shown = record.confirm[row["trial"]].exposed_cases
        assert shown is not None and row["confirm"]["conflict_exposure"] == pytest.approx(sum(shown) / len(shown))
        assert row["optimism"]["recall_at_k"] == pytest.approx(row["values"]["recall_at_k"] - row["confirm"]["recall_at_k"])
        assert row["optimism"]["v3_delta_faithful"] == pytest.approx(
            row["confirm"]["v3_delta_faithful"] - row["values"]["v3_delta_faithful"])
        low, high = row["confirm_ci"]["recall_at_k"]
        assert low < row["confirm"]["recall_at_k"] <= high and (row["confirm"]["recall_at_k"] < 1 or low < 1)
    assert main(["pareto", str(study_file)]) == 0
    assert "recall_at_k held out (optimism)" in capsys.readouterr().out
    assert main(["trials", str(study_file), "--json"]) == 0
    rows = {row["trial"]: row for row in json.loads(capsys.readouterr().out)}
    first = front[0]
    assert rows[first["trial"]]["recall_at_k.confirm"] == first["confirm"]["recall_at_k"]
    exported = yaml.safe_load((tmp_path / "out" / "tiny" / "config.yaml").read_text())
    held = exported["provenance"]["confirm"]
    assert held["values"] == record.confirm[exported["provenance"]["trial"]].values
    # the per-case held-out scores the pick notes compare stay in the study; the export keeps the figures and optimism
    assert all(len(getattr(record.confirm[row["trial"]], key) or ()) == 33 for row in front
               for key in ("recall_cases", "f0", "f3"))
    assert set(held) == {"values", "ci", "n", "n_total", "optimism"}
    # the export names the whole golden set (the one the gate is given) and the split the study made of it
    assert exported["provenance"]["dataset_hash"] == load_dataset(dataset).content_hash != record.dataset_hash
    assert exported["provenance"]["confirm_split"] == {"tuning_dataset_hash": record.dataset_hash, "held_out_cases": 33}
    capsys.readouterr()
    assert main(["gate", "--config", str(tmp_path / "out" / "tiny" / "config.yaml"), "--dataset", str(dataset),
                 "--out", str(tmp_path / "gate")]) in (0, 1)
    gated = " ".join(capsys.readouterr().out.split())
    assert "another dataset" not in gated
    assert ("note: the configuration was chosen on this dataset's tuning share and confirmed on its 33 held-out cases "
            "(its study's confirm:): the gate measures every case") in gated
    # the report's picks table shows the held-out figures the pick rule used beside the tuning ones
    picks_section = render_report(study).split("5. Picked configurations by category", 1)[1]
    picked = exported["provenance"]["trial"]
    assert "recall@k held out" in picks_section and "recall@k optimism" in picks_section
    assert f"{record.confirm[picked].values['recall_at_k']:.3f}" in picks_section
    # a resume keeps the split and confirms nothing twice
    confirmed = dict(record.confirm)
    assert main(["run", str(study_file), "--no-report"]) == 0
    again = StudyRecord.from_study(optuna.load_study(study_name="tiny", storage=storage))
    assert again.confirm_cases == record.confirm_cases
    assert {k: v for k, v in again.confirm.items() if k in confirmed} == confirmed


def test_resuming_with_another_split_names_the_split_not_another_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 38: the tuning share's hash changes with the split, and was checked first ("was run on another dataset")
    dataset = _distinct_cases(tmp_path / "data", 11)  # 66 cases: share 0.5 holds out 33
    space = {"top_k": {"type": "int", "low": 1, "high": 2}, "retriever": {"type": "categorical", "choices": ["bm25"]}}
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    study_file = write_study(tmp_path, dataset, budget={"trials": 1}, confirm={"share": 0.5, "seed": 0},
                             enqueue=[{"top_k": 1, "retriever": "bm25"}])
    assert main(["run", str(study_file), "--no-report"]) == 0
    capsys.readouterr()
    split = "tuner: error: study 'tiny' was run with another confirmation split (33 held-out cases, now {}): keep its confirm: "
    for confirm, now in (({"share": 0.5, "seed": 1}, "33"), (None, "none (no confirm:)")):
        changed = write_study(tmp_path, dataset, budget={"trials": 2}, enqueue=[{"top_k": 1, "retriever": "bm25"}],
                              **({"confirm": confirm} if confirm else {}))
        assert main(["run", str(changed), "--no-report"]) == 2
        assert capsys.readouterr().err.strip() == split.format(now) + "(share and seed) as it was, or use a new name or storage"
    # other data under the same study name is still "another dataset"
    rows = [json.loads(line) for line in (dataset / "golden.jsonl").read_text("utf-8").splitlines()]
    write_jsonl(dataset / "golden.jsonl", [{**row, "ground_truth": row["ground_truth"] + "."} for row in rows])
    write_study(tmp_path, dataset, budget={"trials": 2}, confirm={"share": 0.5, "seed": 0}, enqueue=[{"top_k": 1, "retriever": "bm25"}])
    assert main(["run", str(study_file), "--no-report"]) == 2
    assert "was run on another dataset" in capsys.readouterr().err
