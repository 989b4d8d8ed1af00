"""``tuner gate`` end to end: write a baseline, gate against it, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.embedding import CachedEncoder


@pytest.fixture
def files(tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder) -> dict[str, Path]:
    """A deployed config, lenient thresholds (Δfaithful of the tiny set is 18%) and paths to write to.

    Depends on ``encoder`` so the model is loaded once per session, not per CLI call.
    """
    deploy = tmp_path / "deploy.yaml"
    deploy.write_text("settings:\n  top_k: 5\n  retriever: hybrid\nprovenance: {study: s}\n", "utf-8")
    thresholds = tmp_path / "thresholds.yaml"
    thresholds.write_text("delta_faithful: {warn: 0.05, fail: 0.30}\n", "utf-8")
    return {"deploy": deploy, "thresholds": thresholds, "baseline": tmp_path / "gate" / "baseline.json",
            "out": tmp_path / "out", "dataset": tiny_dataset_dir, "tmp": tmp_path}


def _gate(files: dict[str, Path], *extra: str, config: Path | None = None) -> int:
    return main(["gate", "--config", str(config or files["deploy"]), "--dataset", str(files["dataset"]),
                 "--baseline", str(files["baseline"]), "--thresholds", str(files["thresholds"]),
                 "--out", str(files["out"]), *extra])


@pytest.mark.slow
def test_write_baseline_then_gate_unchanged_passes(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _gate(files, "--write-baseline") == 0
    stored = json.loads(files["baseline"].read_text("utf-8"))
    assert stored["settings"]["top_k"] == 5 and stored["variants"] == ["v0", "v3"]
    assert set(stored["retrieval"]["recall_at_k"]) == {"q1", "q2", "q3", "q4", "q5", "q6"}
    assert stored["summary"]["v3_delta_faithful"] == pytest.approx(2 / 11)
    assert stored["tool_version"] and len(stored["dataset_hash"]) == 64 and stored["history"] == []
    assert not files["out"].exists()
    assert _gate(files) == 0
    out = capsys.readouterr().out
    assert "tuner gate: pass (0 failed, 1 warning(s))" in out
    summary = (files["out"] / "gate-summary.md").read_text("utf-8")
    assert summary.startswith("# tuner gate: PASS")
    assert "- labels: labels of unknown origin (no golden.provenance.json)" in summary and "  labels: labels of unknown origin" in out
    assert (files["out"] / "gate-junit.xml").is_file()
    assert _gate(files, "--write-baseline") == 0
    assert len(json.loads(files["baseline"].read_text("utf-8"))["history"]) == 1


def test_dropping_top_k_is_a_regression(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _gate(files, "--write-baseline") == 0
    narrow = files["tmp"] / "narrow.yaml"
    narrow.write_text("top_k: 1\n", "utf-8")
    assert _gate(files, config=narrow) == 1
    out = capsys.readouterr().out
    assert "tuner gate: regression (1 failed" in out
    assert "FAIL retrieval.recall_at_k: 1.000 → 0.917 (-8.3% relative, n=6): fell by more than 3%" in out


def test_delta_beyond_default_limit_is_a_regression(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _gate(files, "--write-baseline") == 0
    default = files["tmp"] / "default.yaml"
    default.write_text("{}\n", "utf-8")
    assert main(["gate", "--config", str(files["deploy"]), "--dataset", str(files["dataset"]), "--baseline",
                 str(files["baseline"]), "--thresholds", str(default), "--out", str(files["out"])]) == 1
    assert "FAIL robustness.v3.delta_faithful: Δfaithful 18.2%" in capsys.readouterr().out


def test_sample_with_always_included_cases(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    known_bad = files["tmp"] / "known-bad.txt"
    known_bad.write_text("q1\n", "utf-8")
    args = ("--sample", "2", "--always-include", str(known_bad))
    assert _gate(files, "--write-baseline", *args) == 0
    stored = json.loads(files["baseline"].read_text("utf-8"))
    assert "q1" in stored["faithful"]["v0"] and len(stored["faithful"]["v0"]) == 3
    assert len(stored["retrieval"]["recall_at_k"]) == 6
    # the always-included known-bad case q1 (misled by the stale price) weighs 1 in 3 now
    assert _gate(files, *args) == 1
    assert "FAIL robustness.v3.delta_faithful: Δfaithful 40.0%" in capsys.readouterr().out
    known_bad.write_text("q1\nq42\n", "utf-8")
    assert _gate(files, *args) == 2
    assert f"{known_bad}:2: unknown case id 'q42'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing-baseline", "baseline.json: baseline not found"),
        ("malformed-baseline", "baseline.json: malformed baseline: not JSON"),
        ("missing-config", "nowhere.yaml: cannot read"),
        ("malformed-config", "bad.yaml: top_k: Input should be greater than or equal to 1"),
        ("bad-thresholds", "thresholds.yaml: retrieval.recal_at_k: unknown key"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], setup: str, message: str
) -> None:
    config = None
    if setup == "malformed-baseline":
        files["baseline"].parent.mkdir(parents=True)
        files["baseline"].write_text("{oops", "utf-8")
    elif setup == "missing-config":
        config = files["tmp"] / "nowhere.yaml"
    elif setup == "malformed-config":
        config = files["tmp"] / "bad.yaml"
        config.write_text("top_k: 0\n", "utf-8")
    elif setup == "bad-thresholds":
        files["thresholds"].write_text("retrieval: {recal_at_k: 0.03}\n", "utf-8")
    assert _gate(files, config=config) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not files["out"].exists()


def test_history_needs_a_noise_floor(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _gate(files, "--history", "3") == 2
    assert "--history N > 1 needs --noise-floor" in capsys.readouterr().err


def test_noise_floor_from_calibrate_gates_trends(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.noisefloor import NoiseFloor

    floor_path = files["tmp"] / "noise_floor.json"
    NoiseFloor(objectives={"faithful_v0": 0.2, "v3_delta_faithful": 0.1}, components={}, runs=3, n_cases=6, settings={},
               dataset_hash="", generator={}, judge={}, variant_config={}).write(floor_path)
    assert _gate(files, "--write-baseline") == 0
    assert _gate(files, "--noise-floor", str(floor_path), "--history", "2") == 0
    summary = (files["out"] / "gate-summary.md").read_text("utf-8")
    assert "mean of last 1 runs 0.182 → 0.182: change +0.000 within noise floor 0.100" in summary
    floor_path.write_text('{"objectives": {"v3_delta_faithful": 0.1}}', "utf-8")
    assert _gate(files, "--noise-floor", str(floor_path)) == 2
    assert "noise_floor.json: not a noise floor written by 'tuner calibrate'" in capsys.readouterr().err


def test_outputs_go_to_a_folder_of_their_own_by_default(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _gate(files, "--write-baseline") == 0
    monkeypatch.chdir(files["tmp"])
    assert main(["gate", "--config", str(files["deploy"]), "--dataset", str(files["dataset"]),
                 "--baseline", str(files["baseline"]), "--thresholds", str(files["thresholds"])]) == 0
    assert sorted(p.name for p in (files["tmp"] / "tuner-gate").iterdir()) == ["gate-junit.xml", "gate-summary.md"]
    assert not (files["tmp"] / "gate-summary.md").exists()
