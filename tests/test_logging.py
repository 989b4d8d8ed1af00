"""What ``tuner`` commands print on stderr through logging (issue 30 §5): tuner's own lines once each, libraries'
debug lines (bm25s, jieba set their loggers to DEBUG) only with ``-v``, even after a library's ``basicConfig``."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tuner.cli import configure_logging


@pytest.fixture
def clean_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers = []  # as in a real run: pytest's own capture handlers would stop basicConfig from adding one
    yield
    root.handlers, root.level = handlers, level
    logging.getLogger("tuner").setLevel(logging.NOTSET)


def _emit() -> None:
    logging.getLogger("bm25s").setLevel(logging.DEBUG)  # what importing bm25s does
    logging.getLogger("bm25s").debug("Building index from tokens")
    logging.getLogger("tuner.study").info("trial 3 complete")
    logging.getLogger("somelib").warning("a library warning")


def test_only_tuner_s_lines_once_by_default(clean_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(verbose=False, quiet=False)
    configure_logging(verbose=False, quiet=False)  # main() called twice in one process
    logging.basicConfig()  # a library that configures logging on import
    _emit()
    assert capsys.readouterr().err.splitlines() == [
        "tuner: INFO: tuner.study: trial 3 complete", "tuner: WARNING: somelib: a library warning"]


def test_verbose_shows_libraries_debug_lines_and_quiet_only_warnings(clean_root: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(verbose=True, quiet=False)
    _emit()
    assert "tuner: DEBUG: bm25s: Building index from tokens" in capsys.readouterr().err
    configure_logging(verbose=False, quiet=True)
    _emit()
    assert capsys.readouterr().err.splitlines() == ["tuner: WARNING: somelib: a library warning"]
