"""Issue 37 §3: ``tuner validate`` lists duplicate questions (exact once normalized, and near) and cases with empty
keypoints, which count a question twice or drop out of every faithfulness figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiny_dataset import GOLDEN, write_tiny_dataset
from tuner.cli import main
from tuner.io import write_jsonl


def test_validate_lists_duplicate_questions_and_cases_without_keypoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tiny_dataset(tmp_path / "data")
    rows = [{"id": i, "question": q, "ground_truth": g, "keypoints": k, "relevant_doc_ids": r, "category": c,
             "wrong_answers": w} for i, q, g, k, r, c, w in GOLDEN]
    rows.append({**rows[0], "id": "q1-copy", "question": "  how much does the AURORA X200 laptop cost？"})
    rows.append({**rows[4], "id": "q5-near", "question": "How many countries does Mercury Logistics deliver too?"})
    rows.append({**rows[5], "id": "q6-empty", "question": "Is express shipping tracked?", "keypoints": []})
    write_jsonl(root / "golden.jsonl", rows)
    assert main(["validate", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"{root}: warning: 1 case(s) with empty keypoints (left out of every faithfulness figure): q6-empty" in out
    assert (f"{root}: warning: duplicate questions (exact): q1 'How much does the Aurora X200 laptop cost?', "
            "q1-copy '  how much does the AURORA X200 laptop cost？'") in out
    assert f"{root}: warning: duplicate questions (near): q5 " in out and "q5-near" in out
    # the tiny set as written has neither
    write_tiny_dataset(tmp_path / "clean")
    assert main(["validate", str(tmp_path / "clean")]) == 0
    assert "warning" not in capsys.readouterr().out
