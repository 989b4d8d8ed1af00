"""A study records the rules by which tuner turned text into scores when it is created (the text layer and the BM25
list rule, :data:`tuner.retrieval.TEXT_RULES`), and a resumed one created under other rules is refused in one line:
trials measured under two BM25 rules in one front are not comparable."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.front import StudyRecord
from tuner.retrieval import TEXT_RULES
from tuner.study._resume import changed_text_rules

OLD = {"text_layer": "text-v3-analyzer-jieba", "bm25_list": "bm25-list-filled"}


def test_a_changed_rule_is_found_where_it_acts() -> None:
    assert changed_text_rules(TEXT_RULES, TEXT_RULES, bm25=True) == []
    assert changed_text_rules(OLD, TEXT_RULES, bm25=True) == ["text_layer", "bm25_list"]
    only_list = {**TEXT_RULES, "bm25_list": OLD["bm25_list"]}
    assert changed_text_rules(only_list, TEXT_RULES, bm25=True) == ["bm25_list"]
    assert changed_text_rules(only_list, TEXT_RULES, bm25=False) == []  # a dense-only study scores no BM25 list
    assert changed_text_rules({"text_layer": TEXT_RULES["text_layer"]}, TEXT_RULES, bm25=True) == []  # not recorded


@pytest.mark.slow
def test_a_study_records_its_text_rules_and_refuses_to_resume_under_others(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, budget={"trials": 1})
    assert main(["run", str(study_file), "--no-report"]) == 0
    storage = f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}"
    study = optuna.load_study(study_name="tiny", storage=storage)
    assert StudyRecord.from_study(study).text_rules == TEXT_RULES
    study.set_user_attr("text_rules", {**TEXT_RULES, "bm25_list": OLD["bm25_list"]})  # created by the tuner before
    capsys.readouterr()
    assert main(["run", str(study_file), "--trials", "1", "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tuner: error: study 'tiny' in {storage} was measured under bm25_list bm25-list-filled, this tuner "
                   f"scores text under {TEXT_RULES['bm25_list']}: trials under two rules are not comparable; use a new "
                   "name or storage, or the tuner version it was created with"]
    assert len(optuna.load_study(study_name="tiny", storage=storage).trials) == 1  # nothing measured
    study.set_user_attr("text_rules", None)  # a study recorded before tuner kept them: resumed, said in one line
    assert main(["run", str(study_file), "--trials", "1", "--no-report"]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "recorded no text rules" in line]
    assert len(said) == 1 and "its earlier BM25 trials may have been measured under another rule" in said[0]
