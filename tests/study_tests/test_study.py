from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
import yaml

from tuner.cli import main
from tuner.front import TrialRecord, study_summary
from tuner.study import load_study_file, run_study

SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 4},
    "retriever": {"type": "categorical", "choices": ["bm25", "dense"]},
    "chunk_size": {"type": "categorical", "choices": [20, 40]},
}


def write_study(folder: Path, dataset: Path, **overrides: object) -> Path:
    (folder / "space.yaml").write_text(yaml.safe_dump(SPACE))
    study = {
        "name": "tiny",
        "dataset": str(dataset),
        "search_space": "space.yaml",
        "settings": {"candidate_depth": 10},
        "budget": {"trials": 6},
        "pruning": {"batch_size": 2},
        "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0},
        "sampler": {"name": "tpe", "seed": 1},
        "enqueue": [{"top_k": 1, "retriever": "bm25", "chunk_size": 40}],
        "output": "out",
        **overrides,
    }
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def _evaluated(study: optuna.Study) -> int:
    summary = study_summary(study)
    return int(summary.n_complete + summary.n_pruned - summary.n_duplicates)


def test_study_runs_resumes_and_exports_a_config_that_reproduces_its_recall(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir)
    assert main(["run", str(study_file), "--trials", "3", "--no-report"]) == 0
    storage = f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}"
    assert _evaluated(optuna.load_study(study_name="tiny", storage=storage)) == 3
    assert main(["run", str(study_file), "--no-report"]) == 0  # resumes up to budget.trials
    study = optuna.load_study(study_name="tiny", storage=storage)
    assert _evaluated(study) == 6  # repeated configurations are not evaluated again and do not count
    assert study.trials[0].params == {"top_k": 1, "retriever": "bm25", "chunk_size": 40}
    evaluated_settings = []
    for trial in study.trials:
        record = TrialRecord.from_trial(trial)
        if record.duplicate_of is not None:
            assert record.calls is None and study.trials[record.duplicate_of].params == trial.params
        elif trial.state == optuna.trial.TrialState.COMPLETE:
            assert set(trial.user_attrs["ci"]) == {"recall_at_k", "v3_delta_faithful", "conflict_exposure"}
            assert trial.user_attrs["n_total"] == 6
            # per-case recall in the study's case order: what paired comparisons of recall read
            assert record.recall_cases is not None and len(record.recall_cases) == 6
            assert sum(record.recall_cases) / 6 == pytest.approx(trial.values[0])
            evaluated_settings.append(json.dumps(record.settings, sort_keys=True))
        else:
            evidence = trial.user_attrs["pruning"]
            assert evidence["dominated_by"] >= 0 and evidence["spending"] == "pocock"
            # 6 cases, looks at 10/20/35/50/70%: after 2, 3 and 5 cases (⌈0.6⌉ = 1 case is too few to test)
            assert evidence["cases_used"] <= round(evidence["fraction"] * 6) in (2, 3, 5)
            assert 0 < evidence["alpha"] <= evidence["alpha_spent"] <= 0.05
            evaluated_settings.append(json.dumps(record.settings, sort_keys=True))
    assert len(evaluated_settings) == len(set(evaluated_settings)) == 6
    capsys.readouterr()
    assert main(["pareto", str(study_file), "--json"]) == 0
    front = json.loads(capsys.readouterr().out)
    assert front["n_trials"] == len(study.trials) and front["front"]
    assert {"recall_at_k", "v3_delta_faithful"} <= set(front["front"][0]["values"])
    # neighbouring front members with the paired interval of their difference
    assert len(front["neighbours"]) == len(front["front"]) - 1
    for row in front["neighbours"]:
        low, high = row["recall_at_k"]["ci"]
        assert low <= row["recall_at_k"]["difference"] <= high and row["recall_at_k"]["n"] == 6

    exported = tmp_path / "deploy.yaml"
    number = front["front"][0]["trial"]
    assert main(["export", str(study_file), "--trial", str(number), "-o", str(exported)]) == 0
    text = exported.read_text()
    assert "provenance" in text and "dataset_hash" in text
    capsys.readouterr()
    assert main(["eval", str(tiny_dataset_dir), "--config", str(exported), "--json"]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    assert evaluated["recall_at_k"] == pytest.approx(front["front"][0]["values"]["recall_at_k"])
    # the exposure of the export is the trial's, recounted over every golden case
    assert set(evaluated["conflict_exposure"]) == {"value", "n", "n_total", "ci", "tied", "could_expose", "could_unexpose", "range"} and evaluated["conflict_exposure"]["n_total"] == 6
    for suffix in (".json", ".env"):
        assert main(["export", str(study_file), "--pick", "knee", "-o", str(tmp_path / f"deploy{suffix}")]) == 0
    assert "TUNER_TOP_K=" in (tmp_path / "deploy.env").read_text()


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"budget": {"trails": 3}}, "budget.trails: unknown key"),
        ({"sampler": {"name": "annealing"}}, "sampler.name"),
        ({"objectives": ["recall_at_k", "latency"]}, "objectives: unknown"),
        ({"generator": {"backend": "gpt"}}, "generator.backend"),
        ({"variants": {"soft_band": [0.9, 0.1]}}, "variants"),
        ({"noise": {"n": 1}, "variants": {"n": 2}}, "'noise' is the old spelling of 'variants'"),
        ({"settings": {"top_k": 0}}, "settings: top_k"),
    ],
)
def test_bad_study_files_are_rejected_before_any_work(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], overrides: dict, message: str
) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, **overrides)
    assert main(["run", str(study_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(study_file) in err[0] and message in err[0]
    assert not (tmp_path / "out").exists()


def test_the_old_noise_key_still_configures_the_variants(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    loaded = load_study_file(write_study(tmp_path, tiny_dataset_dir, noise={"n": 1, "position": "front"}))
    assert loaded.config.variants.position == "front" and loaded.config.variants.count("v4") == 1


def test_bad_search_space_names_the_file_and_key(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 5, "high": 1}}))
    assert main(["run", str(study_file)]) == 2
    err = capsys.readouterr().err
    assert "space.yaml: top_k" in err and "low" in err


def test_dry_run_estimates_calls_and_spends_nothing(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir)
    assert main(["run", str(study_file), "--dry-run"]) == 0
    err = capsys.readouterr().err
    # 6 trials x 6 cases x 2 variants = 72 generator calls; 7 keypoints x 2 variants x 2 questions x 6 = 168 judge calls
    assert "72 generator calls" in err and "168 judge calls" in err
    assert not (tmp_path / "out" / "tiny" / "study.db").exists()


@pytest.mark.slow
def test_interrupted_run_leaves_a_resumable_study(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, budget={"trials": 200})
    worker = subprocess.Popen(
        [sys.executable, "-m", "tuner", "run", str(study_file), "--no-report"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        # a shell running the tests in the background ignores SIGINT, and children inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    storage = f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}"

    seen = []
    assert worker.stdout is not None
    for line in worker.stdout:  # progress lines as they are printed: interrupt once 3 trials are finished
        seen.append(line)
        finished = re.search(r": (\d+)/200 finished", line)
        if finished and int(finished.group(1)) >= 3:
            break
    worker.send_signal(signal.SIGINT)
    rest, _ = worker.communicate(timeout=60)
    output = "".join(seen) + rest
    assert worker.returncode == 130, output
    assert "resume" in output
    done = len(optuna.load_study(study_name="tiny", storage=storage).trials)
    assert main(["run", str(study_file), "--trials", str(done + 1), "--no-report"]) == 0
    assert len(optuna.load_study(study_name="tiny", storage=storage).trials) >= done + 1


def test_calibrate_from_a_study_file_feeds_the_study(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir)
    assert main(["calibrate", "--study", str(study_file), "--runs", "2"]) == 0
    floor_file = tmp_path / "out" / "tiny" / "noise_floor.json"
    floor = json.loads(floor_file.read_text())
    assert floor["runs"] == 2 and floor["settings"]["top_k"] == 1  # the first enqueued configuration
    # offline backends are deterministic: only the case-sampling part of the floor remains
    assert floor["components"]["v3_delta_faithful"]["run_sd"] == 0.0
    study_file = write_study(tmp_path, tiny_dataset_dir, noise_floor=str(floor_file))
    assert main(["run", str(study_file), "--trials", "2", "--no-report"]) == 0
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}")
    assert study.user_attrs["noise_floor"] == floor["objectives"]


def test_pick_rule_is_checked_before_the_study_runs(tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, pick={"rule": "min-delta"})
    assert main(["run", str(study_file)]) == 2
    assert "pick: rule min-delta needs min_recall" in capsys.readouterr().err
    study_file = write_study(tmp_path, tiny_dataset_dir)
    assert main(["run", str(study_file), "--pick", "min-delta"]) == 2
    assert "--min-recall" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert main(["run", str(study_file), "--trials", "3", "--no-report", "--pick", "min-delta", "--min-recall", "0.5"]) == 0
    exported = yaml.safe_load((tmp_path / "out" / "tiny" / "config.yaml").read_text())
    assert exported["provenance"]["pick"] == "min-delta" and exported["provenance"]["values"]["recall_at_k"] >= 0.5


@pytest.mark.parametrize(
    "sampler,kind",
    [
        ("nsga2", optuna.samplers.NSGAIISampler),
        ("gp", optuna.samplers.GPSampler),
        ("random", optuna.samplers.RandomSampler),
        ("grid", optuna.samplers.GridSampler),
    ],
)
def test_every_sampler_runs_a_study(tiny_dataset_dir: Path, tmp_path: Path, sampler: str, kind: type) -> None:
    study_file = write_study(tmp_path, tiny_dataset_dir, sampler={"name": sampler, "seed": 0}, enqueue=[])
    run = run_study(load_study_file(study_file), trials=3)
    assert isinstance(run.study.sampler, kind)
    assert len(run.study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))) == 3


def test_context_cost_objective_and_recall_constraint(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    study_file = write_study(
        tmp_path, tiny_dataset_dir, objectives=["recall_at_k", "v3_delta_faithful", "context_words"],
        constraints={"min_recall": 0.8},
    )
    assert main(["run", str(study_file), "--trials", "4", "--no-report"]) == 0
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{tmp_path / 'out' / 'tiny' / 'study.db'}")
    assert [d.name for d in study.directions] == ["MAXIMIZE", "MINIMIZE", "MINIMIZE"]
    for trial in study.get_trials(states=(optuna.trial.TrialState.COMPLETE,)):
        recall, _delta, words = trial.values
        assert words == pytest.approx(trial.user_attrs["context_words"])
        assert trial.constraints == {"min_recall": pytest.approx(0.8 - recall)}  # ≤ 0 means feasible


def test_the_report_header_counts_repeated_configurations_as_the_run_line_does(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23 §6: a repeated configuration is stored as pruned by Optuna; the run's last summary line and the
    report's header both count it as repeated, not as pruned, and agree on every count."""
    twice = {"top_k": 1, "retriever": "bm25", "chunk_size": 40}
    study_file = write_study(tmp_path, tiny_dataset_dir, budget={"trials": 2}, pruning={"enabled": False},
                             enqueue=[twice, dict(twice)])  # the second enqueued trial repeats the first (a copy: study files have no YAML aliases)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(
        {"top_k": {"type": "int", "low": 1, "high": 2}, "retriever": {"type": "categorical", "choices": ["bm25"]},
         "chunk_size": {"type": "categorical", "choices": [40]}}))
    assert main(["run", str(study_file)]) == 0
    err = capsys.readouterr().err
    run = re.findall(r"(\d+) complete \(\d+ unscorable, \d+ not answered\), (\d+) pruned, "
                     r"(\d+) repeated configurations not evaluated again, (\d+) failed", err)
    page = (tmp_path / "out" / "tiny" / "report.html").read_text("utf-8")
    header = re.findall(r"(\d+) complete, (\d+) pruned, (\d+) repeated configurations not evaluated again, (\d+) failed", page)
    assert len(run) == 1 and header == run, (run, header)
    complete, pruned, repeated, failed = map(int, run[0])
    assert (complete, pruned, failed) == (2, 0, 0) and repeated >= 1
