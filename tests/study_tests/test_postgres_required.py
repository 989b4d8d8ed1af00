"""Issue 31 §3: the PostgreSQL tests skip when no server answers, except in CI (``CI=true``), where they fail."""

from __future__ import annotations

import pytest

from tests.study_tests.test_workers_postgres import require_postgres

NOWHERE = "postgresql+psycopg://root@127.0.0.1:1/none"  # port 1: refused at once


def test_a_missing_server_skips_the_test_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL server at 127.0.0.1:1"):
        require_postgres(NOWHERE, "127.0.0.1:1")


def test_a_missing_server_fails_the_test_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no PostgreSQL server at 127.0.0.1:1, and CI=true"):
        require_postgres(NOWHERE, "127.0.0.1:1")
