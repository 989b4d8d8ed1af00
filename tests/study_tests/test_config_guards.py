"""Configuration a user can get wrong or an attacker can craft (issue 38): every YAML tuner reads goes through one
loader (no aliases: the billion-laughs attack; nesting bounded), and sampler options are checked against the
sampler's constructor when the study file is read. Each is one line naming the file (and line or key), exit 2, before
any work, ``--dry-run`` included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.errors import UserError
from tuner.llm import load_llm_config


def _alias_bomb(levels: int = 10) -> str:
    """The issue's ``extra_body``: ten lists of nine references to the previous one (9**10 leaves once copied)."""
    lines = ["    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"    a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines)


def test_an_alias_bomb_in_a_backend_config_is_refused_before_any_work(tiny_dataset_dir: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    study = write_study(tmp_path, tiny_dataset_dir)
    study.write_text(study.read_text() + "generator:\n  backend: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n"
                     "  api_key_env: null\n  extra_body:\n" + _alias_bomb() + "\n")
    line = study.read_text().splitlines().index("    a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]") + 1
    for argv in (["run", str(study), "--dry-run"], ["run", str(study), "--no-report"]):
        assert main(argv) == 2
        assert capsys.readouterr().err.strip() == f"tuner: error: {study}:{line}: malformed YAML: aliases are not allowed"
    assert not (tmp_path / "out").exists()


def test_an_llm_config_file_and_dataset_yaml_go_through_the_same_loader(tiny_dataset_dir: Path, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    llm = tmp_path / "llm.yaml"
    llm.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\nextra_body:\n" + _alias_bomb(3) + "\n")
    with pytest.raises(UserError, match=rf"^{llm}:5: malformed YAML: aliases are not allowed$"):
        load_llm_config(llm)
    kb = tmp_path / "kb"
    shutil.copytree(tiny_dataset_dir, kb)
    (kb / "dataset.yaml").write_text("language: en\nextra: " + "[" * 5000 + "\n")  # PyYAML's composer recursed to a crash
    assert main(["validate", str(kb)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == f"{kb / 'dataset.yaml'}:2: malformed YAML: nested deeper than 100 levels"


def test_a_sampler_option_typo_is_named_before_the_run(tiny_dataset_dir: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    study = write_study(tmp_path, tiny_dataset_dir, sampler={"name": "tpe", "seed": 1, "options": {"n_startup_trial": 5}})
    for argv in (["run", str(study), "--dry-run"], ["run", str(study), "--no-report"]):
        assert main(argv) == 2
        assert capsys.readouterr().err.strip() == (f"tuner: error: {study}: sampler.options: unknown option 'n_startup_trial' "
                                                   "for the tpe sampler (did you mean 'n_startup_trials'?)")
    study.write_text(yaml.safe_dump({**yaml.safe_load(study.read_text()), "sampler": {"name": "random", "options": {"seed": 3}}}))
    assert main(["run", str(study), "--dry-run"]) == 2
    assert capsys.readouterr().err.strip() == f"tuner: error: {study}: sampler.options: 'seed' is set by tuner: write sampler.seed"
    study.write_text(yaml.safe_dump({**yaml.safe_load(study.read_text()), "sampler": {"name": "tpe", "options": {"n_startup_trials": 2}}}))
    assert main(["run", str(study), "--dry-run"]) == 0
