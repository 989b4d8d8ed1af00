from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.embedding import CachedEncoder

FAST = ["--chunk-size", "40", "--top-k", "3"]


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich wraps to 80 columns when not on a terminal; tables are checked whole."""
    monkeypatch.setenv("COLUMNS", "250")


def test_robustness_json(tiny_dataset_dir: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["robustness", str(tiny_dataset_dir), *FAST, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["variants"]) == {"v0", "v1", "v2", "v3", "v4"}
    for summary in data["variants"].values():
        assert {"faithful", "delta_faithful", "ci", "misled_rate", "n", "n_total"} <= set(summary)
        assert summary["n_total"] == 6
    assert {"by_category", "missing", "calls"} <= set(data)
    assert data["calls"]["generator"] > 0
    assert data["retrieval"]["recall_at_k"]["n_total"] == 6
    v3 = data["variants"]["v3"]
    assert set(v3["exposure"]) == {"value", "n", "n_total", "ci", "tied", "could_expose", "could_unexpose", "range"} and v3["exposure"]["n_total"] == 6
    assert v3["exposure"]["value"] == v3["exposure"]["n"] / 6
    if v3["exposure"]["n"] == 0:
        assert v3["susceptibility"] is None
    else:  # Δ = at risk × susceptibility + the loss on unexposed cases
        assert v3["delta_faithful"] == pytest.approx(v3["at_risk"] * v3["susceptibility"] + v3["unexposed_loss"])
    assert "exposure" not in data["variants"]["v1"]


def test_robustness_table_goes_to_stderr(tiny_dataset_dir: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["robustness", str(tiny_dataset_dir), *FAST, "--variants", "v3", "--hard-mode", "inject"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "v3 relevant-hard" in captured.err and "v1 irrelevant" not in captured.err and "recall@k" in captured.err
    assert "v3 inject" in captured.err


def test_robustness_table_names_the_v3_mode_and_warns_of_a_shortfall(
    tiny_dataset_dir: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]
) -> None:
    # the tiny corpus has no near-miss chunk to spare in the default top-5% band: v2 is short of every slot
    assert main(["robustness", str(tiny_dataset_dir), *FAST, "--variants", "v2,v4"]) == 0
    err = capsys.readouterr().err
    assert "v3 in_index" in err and "relative bands" in err and "n=v1 3, v2 3, v3 3, v4 4" in err
    assert "warning: v2: 18 of 18 injection slots unfilled (100%)" in err
    assert "not graded" in err


def test_bad_generator_file_is_one_line_naming_it(tmp_path: Path, tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "gen.yaml"
    bad.write_text("generator:\n  backend: extractive\n  temprature: 0.5\n", "utf-8")
    assert main(["robustness", str(tiny_dataset_dir), "--generator", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "temprature" in err[0]
    assert main(["calibrate", str(tiny_dataset_dir), "--generator", str(tmp_path / "absent.yaml")]) == 2
    assert "absent.yaml: cannot read" in capsys.readouterr().err


def test_robustness_needs_keypoints(tmp_path: Path, tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "no-keypoints"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text((tiny_dataset_dir / "corpus.jsonl").read_text("utf-8"), "utf-8")
    golden = [json.loads(line) for line in (tiny_dataset_dir / "golden.jsonl").read_text("utf-8").splitlines()]
    (folder / "golden.jsonl").write_text("".join(json.dumps({**g, "keypoints": []}) + "\n" for g in golden), "utf-8")
    assert main(["robustness", str(folder)]) == 2
    assert "robustness needs keypoints" in capsys.readouterr().err


def test_bad_variant_and_injected_flags(tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["robustness", str(tiny_dataset_dir), "--variants", "v0,v7"]) == 2
    assert "--variants: unknown variant 'v7'" in capsys.readouterr().err
    for flag in ("--injected", "--noise-n"):  # --noise-n: the spelling before issue 39
        assert main(["robustness", str(tiny_dataset_dir), flag, "0"]) == 2
        assert "command line: --injected: " in capsys.readouterr().err


def test_calibrate_writes_the_noise_floor(
    tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "floor" / "noise_floor.json"
    assert main(["calibrate", str(tiny_dataset_dir), *FAST, "--runs", "2", "--out", str(out)]) == 0
    data = json.loads(out.read_text("utf-8"))
    assert {"recall_at_k", "v3_delta_faithful", "faithful_v0", "hit_at_k", "mrr", "context_precision"} <= set(data["objectives"])
    assert data["runs"] == 2 and data["n_cases"] == 6 and data["judge"]["backend"] == "lexical"
    assert data["settings"]["chunk_size"] == 40
    err = capsys.readouterr().err
    assert "noise floor" in err and f"wrote {out}" in err
    assert main(["calibrate", str(tiny_dataset_dir), "--runs", "1", "--out", str(out)]) == 2
