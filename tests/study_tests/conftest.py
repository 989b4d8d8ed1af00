from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.study_tests.test_workers_postgres import URL, postgres_available


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    """The test server's URL with a fresh schema of its own first on the search path (the study, the call cache and
    the embedding store all land in it, apart from other tests'); the schema is dropped afterwards."""
    if not postgres_available():
        pytest.skip(f"no PostgreSQL server at {URL}")
    schema = f"tuner_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in URL else "?"
    try:
        yield f"{URL}{separator}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
