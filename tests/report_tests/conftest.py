from __future__ import annotations

from pathlib import Path

import optuna
import pytest

from tests.report_tests.synthetic import build_study, sqlite_storage
from tuner.report import write_report


@pytest.fixture(scope="session")
def study_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("study")


@pytest.fixture(scope="session")
def synthetic_study(study_folder: Path) -> optuna.Study:
    return build_study(sqlite_storage(study_folder))


@pytest.fixture(scope="session")
def report_path(synthetic_study: optuna.Study, study_folder: Path) -> Path:
    return write_report(synthetic_study, study_folder / "report" / "synthetic.html", storage_url=sqlite_storage(study_folder))
