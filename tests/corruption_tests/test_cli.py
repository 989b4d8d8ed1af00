from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import load_dataset


def corrupt(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["corrupt", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_writes_a_valid_conflicts_file_and_a_one_line_summary(dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = corrupt(capsys, str(dataset_dir), "--types", "factual_corruption,numeric_typo", "--severities", "subtle,obvious")
    assert (code, err) == (0, "")
    dataset = load_dataset(dataset_dir)
    assert {(c.kind, c.severity) for c in dataset.conflicts} == {
        (k, s) for k in ("factual_corruption", "numeric_typo") for s in ("subtle", "obvious")
    }
    assert len(dataset.conflicts) == 12
    assert out.count("\n") == 1
    assert out.startswith(f"{dataset_dir / 'conflicts.jsonl'}: wrote 12 conflicting documents from 3 relevant documents: ")
    assert "factual_corruption subtle 3, obvious 3; numeric_typo subtle 3, obvious 3" in out


def test_same_seed_same_bytes(dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert corrupt(capsys, str(dataset_dir), "--seed", "5")[0] == 0
    first = (dataset_dir / "conflicts.jsonl").read_bytes()
    assert corrupt(capsys, str(dataset_dir), "--seed", "5", "--force")[0] == 0
    assert (dataset_dir / "conflicts.jsonl").read_bytes() == first
    assert corrupt(capsys, str(dataset_dir), "--seed", "6", "--force")[0] == 0
    assert (dataset_dir / "conflicts.jsonl").read_bytes() != first


def test_refuses_to_overwrite_without_force(dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (dataset_dir / "conflicts.jsonl").write_text("", "utf-8")
    code, out, err = corrupt(capsys, str(dataset_dir))
    assert code == 2 and out == "" and err.count("\n") == 1 and "--force" in err
    assert (dataset_dir / "conflicts.jsonl").read_text("utf-8") == ""
    assert corrupt(capsys, str(dataset_dir), "--force")[0] == 0
    assert len(load_dataset(dataset_dir).conflicts) > 0


def test_force_replaces_even_a_broken_conflicts_file(dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (dataset_dir / "conflicts.jsonl").write_text("{not json\n", "utf-8")
    assert corrupt(capsys, str(dataset_dir), "--force", "--types", "numeric_typo")[0] == 0
    assert {c.kind for c in load_dataset(dataset_dir).conflicts} == {"numeric_typo"}


@pytest.mark.parametrize(
    ("flag", "value", "listed"),
    [("--types", "factual_corruption,typo", "relevance_poisoning"), ("--severities", "subtle,extreme", "obvious")],
)
def test_unknown_name_exits_2_with_one_line_listing_the_valid_ones(
    dataset_dir: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, listed: str
) -> None:
    code, out, err = corrupt(capsys, str(dataset_dir), flag, value)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert value.split(",")[1] in err and listed in err
    assert not (dataset_dir / "conflicts.jsonl").exists()


def test_bad_dataset_exits_2_names_the_line_and_writes_nothing(dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = dataset_dir / "golden.jsonl"
    golden.write_text(golden.read_text("utf-8") + '{"id": "broken", "question": "?"}\n', "utf-8")
    before = sorted(p.name for p in dataset_dir.iterdir())
    code, out, err = corrupt(capsys, str(dataset_dir), "--also-wrong-answers")
    assert code == 2 and out == ""
    assert f"{golden}:5: missing field" in err and "nothing was written" in err
    assert sorted(p.name for p in dataset_dir.iterdir()) == before


def test_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = corrupt(capsys, str(tmp_path / "nowhere"))
    assert code == 2 and err.count("\n") == 1 and "not found" in err


def test_also_wrong_answers_extends_golden(dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = corrupt(capsys, str(dataset_dir), "--types", "factual_corruption", "--severities", "moderate", "--also-wrong-answers")
    assert code == 0 and "wrong answers to" in out
    dataset = load_dataset(dataset_dir)
    cases = {case.id: case for case in dataset.golden}
    (x200,) = [c for c in dataset.conflicts if c.conflicts_with == "x200"]
    price, release = x200.wrong_values
    assert (cases["price"].wrong_answers, cases["release"].wrong_answers) == ((price,), (release,))
    assert cases["carrier"].wrong_answers[0] == "Polar Express"
    records = [json.loads(line) for line in (dataset_dir / "golden.jsonl").read_text("utf-8").splitlines()]
    assert [r["id"] for r in records] == ["price", "release", "window", "carrier"]


def test_nothing_to_corrupt_is_an_error_not_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "flat"
    root.mkdir()
    (root / "corpus.jsonl").write_text(json.dumps({"doc_id": "d", "text": "plain words only"}) + "\n", "utf-8")
    golden = {"id": "q", "question": "?", "ground_truth": "x", "keypoints": ["x"], "relevant_doc_ids": ["d"]}
    (root / "golden.jsonl").write_text(json.dumps(golden) + "\n", "utf-8")
    code, _, err = corrupt(capsys, str(root), "--severities", "subtle")
    assert code == 2 and "nothing to corrupt" in err and err.count("\n") == 1
    assert not (root / "conflicts.jsonl").exists()
