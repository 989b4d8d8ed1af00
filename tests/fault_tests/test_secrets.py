"""Fault injection (issue 14 §4): secrets planted in a storage URL (userinfo and query string), an API key variable,
a query parameter and a header of an LLM backend on a loopback server; a small study is run, reported, exported,
listed and gated, and no output file, stream, log, cache or storage row contains any of them."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import optuna
import pytest
import sqlalchemy

from tests.study_tests.test_study import write_study
from tests.study_tests.test_workers_postgres import require_postgres
from tuner.cli import main
from tuner.llm.testing import FakeChatServer

SERVER = os.environ.get("TUNER_TEST_POSTGRES_HOST", "127.0.0.1:5432")
SECRETS = {
    "userinfo password": "pw-SECRET-1a7f",
    "sslpassword": "ssl-SECRET-2b8e",
    "password=": "qs-SECRET-3c9d",
    "api key": "sk-SECRET-4d0c",
    "access_token": "tok-SECRET-5e1b",
    "api key header": "hdr-SECRET-6f2a",
}
STORAGE = (
    f"postgresql+psycopg://root:{SECRETS['userinfo password']}@{SERVER}/test"
    f"?sslpassword={SECRETS['sslpassword']}&application_name=tuner-secrets"
)




pytestmark = [
    pytest.mark.postgres,
    pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning"),
]


@pytest.fixture(autouse=True)
def postgres_server() -> None:
    require_postgres(STORAGE, SERVER)  # the URL holds the secrets this module checks outputs for


def _storage_text(url: str) -> str:
    """Every row of every table in the storage database, as text."""
    engine = sqlalchemy.create_engine(url)
    rows = []
    with engine.connect() as conn:
        for table in sqlalchemy.inspect(engine).get_table_names():
            rows += [repr(tuple(row)) for row in conn.execute(sqlalchemy.text(f'SELECT * FROM "{table}"'))]
    engine.dispose()
    return "\n".join(rows)


@pytest.mark.slow
def test_no_planted_secret_reaches_any_output(
    tiny_dataset_dir: Path, tmp_path: Path, fault_cache: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("TUNER_TEST_KEY", SECRETS["api key"])
    name = f"secrets-{uuid.uuid4().hex[:8]}"
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    streams = []
    # the "answer" repeats the prompt, contexts included, so trials score and reach the front
    with FakeChatServer(responder=lambda body: str(body["messages"][-1]["content"])) as server:
        generator = {
            "backend": "openai", "base_url": server.url, "model": "fake", "api_key_env": "TUNER_TEST_KEY",
            "default_query": {"access_token": SECRETS["access_token"], "api-version": "2024-10-21"},
            "extra_headers": {"X-Api-Key": SECRETS["api key header"]},
        }
        study = write_study(inputs, tiny_dataset_dir, name=name, output=str(out), budget={"trials": 3}, generator=generator)
        storage = ["--storage", STORAGE]
        try:
            assert main(["run", str(study), *storage, "--json"]) == 0
            assert main(["pareto", str(study), *storage, "--json"]) == 0
            assert main(["export", str(study), *storage, "--pick", "knee", "-o", str(out / "deploy.yaml")]) == 0
            assert main(["trials", str(study), *storage, "--json"]) == 0
            assert main(["trials", str(study), *storage, "--csv", str(out / "trials.csv")]) == 0
            assert main(["gate", "--config", str(out / "deploy.yaml"), "--dataset", str(tiny_dataset_dir),
                         "--baseline", str(out / "baseline.json"), "--write-baseline", "--out", str(out / "gate")]) == 0
            streams.append(capsys.readouterr())
            # a storage that cannot be opened: its URL is in the error line, without the secrets
            unreachable = STORAGE.replace(SERVER, "127.0.0.1:9").replace("&application", f"&password={SECRETS['password=']}&application")
            assert main(["pareto", str(study), "--storage", unreachable]) == 2
            streams.append(capsys.readouterr())
            assert "127.0.0.1:9" in streams[-1].err
            stored = _storage_text(STORAGE)
        finally:
            optuna.delete_study(study_name=name, storage=STORAGE.replace("&application_name=tuner-secrets", ""))
        # the secrets were really in use: the server saw the key, the query parameter and the header
        seen = server.requests[0]
        assert seen.headers["authorization"] == f"Bearer {SECRETS['api key']}" and SECRETS["access_token"] in seen.path
        assert seen.headers["x-api-key"] == SECRETS["api key header"]

    written = [p for root in (out, fault_cache) for p in root.rglob("*") if p.is_file()]
    assert {"report.html", "deploy.yaml", "trials.csv", "baseline.json"} <= {p.name for p in written}
    # the LLM call cache lives in the PostgreSQL storage (call_cache: auto): its requests are among the rows read
    assert '"model": "fake"' in stored
    texts = {str(p): p.read_bytes().decode("utf-8", "replace") for p in written}
    texts["stdout"] = "".join(s.out for s in streams)
    texts["stderr"] = "".join(s.err for s in streams)
    texts["log"] = caplog.text
    texts["storage"] = stored
    assert name in stored
    leaks = [(what, where) for what, secret in SECRETS.items() for where, text in texts.items() if secret in text]
    assert leaks == []
