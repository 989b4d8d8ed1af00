"""The command line's contract: exit codes, --version and internal errors that never read as a gate regression."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner import __version__
from tuner.cli import EXIT_INTERNAL, EXIT_USER_ERROR, main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.strip() == f"tuner {__version__}"


def test_an_internal_error_is_one_line_with_its_own_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tuner.commands.validate as validate

    def broken(args: object) -> int:
        raise KeyError("boom")

    monkeypatch.setattr(validate, "run", broken)
    assert main(["validate", "somewhere"]) == EXIT_INTERNAL != 1  # 1 is the gate's "regression"
    err = capsys.readouterr().err
    assert err == "tuner: internal error: KeyError: 'boom' (a bug in tuner; run with --debug for the traceback)\n"
    with pytest.raises(KeyError):
        main(["--debug", "validate", "somewhere"])


def test_a_user_error_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "/nonexistent/dataset"]) == EXIT_USER_ERROR
    assert capsys.readouterr().err.startswith("tuner: ")


def test_quiet_hides_progress_and_verbose_logs_debug(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    assert main(["-q", "demo-data", str(tmp_path / "demo")]) == 0
    assert logging.getLogger("tuner").level == logging.WARNING
    assert main(["-v", "validate", str(tmp_path / "demo")]) == 0
    assert logging.getLogger("tuner").level == logging.DEBUG
    logging.getLogger("tuner.test").debug("a debug line")
    assert "tuner: DEBUG: tuner.test: a debug line" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["-q", "-v", "validate", str(tmp_path / "demo")])  # one or the other
    main(["validate", str(tmp_path / "demo")])  # back to the default: INFO, progress shown
    assert logging.getLogger("tuner").level == logging.INFO


def test_every_retrieval_setting_has_a_flag_with_its_description_and_the_flag_sets_it(tiny_dataset_dir: Path) -> None:
    from tuner.cli import build_parser
    from tuner.commands._common import settings_from_args
    from tuner.settings import RetrievalSettings

    parser = build_parser()
    eval_parser = next(a for a in parser._subparsers._group_actions[0].choices.values() if a.prog.endswith(" eval"))  # type: ignore[union-attr]
    flags = {action.dest: action.help for action in eval_parser._actions}
    for name, info in RetrievalSettings.model_fields.items():
        assert flags[name] == info.description and info.description
    args = parser.parse_args(["eval", str(tiny_dataset_dir), "--hybrid-weight", "0.7", "--dense-index", "hnsw", "--top-k", "3"])
    settings = settings_from_args(args)
    assert (settings.hybrid_weight, settings.dense_index, settings.top_k) == (0.7, "hnsw", 3)


def test_export_s_formats_are_the_registered_ones_read_only_when_asked() -> None:
    """``tuner export --format`` offers ``tuner`` and every ``tuner.export.FRAMEWORKS`` name, refuses another with exit
    2, and building the parser (every start of tuner) does not import the export package, which loads the engines."""
    import subprocess
    import sys

    code = ("import sys; from tuner.cli import build_parser; parser = build_parser(); print('tuner.export' in sys.modules); "
            "parser.parse_args(['export', 'study.yaml', '--trial', '1', '-o', 'x.yaml', '--format', 'nope'])")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                          text=True)
    from tuner.export import FRAMEWORKS

    choices = ", ".join(repr(name) for name in ("tuner", *FRAMEWORKS))
    assert (done.returncode, done.stdout) == (2, "False\n")
    assert done.stderr.splitlines()[-1] == f"tuner export: error: argument --format: invalid choice: 'nope' (choose from {choices})"
    assert list(FRAMEWORKS) == ["langchain", "llamaindex", "dify", "ragflow", "milvus"]
