from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.study_tests.test_workers_postgres import URL, require_postgres


@pytest.fixture
def postgres_server() -> None:
    """Skips the test when no PostgreSQL server answers at the test URL (fails it in CI: ``require_postgres``)."""
    require_postgres()


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    """The test server's URL with a fresh schema of its own first on the search path (the study, the call cache and
    the embedding store all land in it, apart from other tests'); the schema is dropped afterwards."""
    require_postgres()
    schema = f"tuner_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in URL else "?"
    try:
        yield f"{URL}{separator}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
