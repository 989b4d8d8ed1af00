"""``tuner serve``'s writes against a hostile page in a browser on the same machine: JSON only, no foreign Origin,
the run's token, and a Host the service answers to (DNS rebinding); reads stay open to any local client."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.net import SERVE_TOKEN, WRITE_HEADERS, free_port
from tuner.deploy import Retriever

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from tuner.deploy.service import build_app  # noqa: E402
from tuner.http_guard import answered_hosts  # noqa: E402

WRITES = {"/documents": json.dumps({"documents": [{"doc_id": "pwned", "text": "forged"}]}),
          "/documents/delete": json.dumps({"doc_ids": ["aurora-x200"]})}


def _never_loads() -> Retriever:
    raise RuntimeError("no index in this test")  # requests the guard lets through get 503 from the app


@pytest.fixture
def client() -> TestClient:
    return TestClient(build_app(_never_loads, SERVE_TOKEN), base_url="http://127.0.0.1:8000")


@pytest.mark.parametrize("headers,status", [
    ({"Origin": "http://evil.example", "Content-Type": "text/plain", **WRITE_HEADERS}, 403),
    ({"Content-Type": "text/plain", **WRITE_HEADERS}, 415),
    ({"Content-Type": "application/json"}, 403),
    ({"Content-Type": "application/json", "X-Tuner-Token": "guessed"}, 403),
    ({"Host": "evil.example:8000", "Content-Type": "application/json", **WRITE_HEADERS}, 421),
    ({"Content-Type": "application/json", **WRITE_HEADERS}, 503),
    ({"Origin": "http://127.0.0.1:8000", "Content-Type": "application/json", **WRITE_HEADERS}, 503),
])
def test_writes_need_json_their_own_origin_and_host_and_the_token(
        client: TestClient, headers: dict[str, str], status: int) -> None:
    with client:
        for path, body in WRITES.items():
            reply = client.post(path, content=body, headers=headers)
            assert reply.status_code == status and "error" in reply.json()


def test_reads_need_no_token_but_a_host_it_answers_to(client: TestClient) -> None:
    with client:
        assert client.post("/retrieve", json={"query": "laptop"}).status_code == 503
        assert client.post("/retrieve", json={"query": "laptop"}, headers={"Host": "evil.example"}).status_code == 421
        assert client.get("/healthz", headers={"Host": "localhost:8000"}).status_code == 503
        assert client.get("/config", headers={"Host": "evil.example:8000"}).status_code == 421


def test_hosts_follow_the_bound_address() -> None:
    assert answered_hosts("0.0.0.0") is None and answered_hosts("::") is None
    assert answered_hosts("192.168.1.20") == {"127.0.0.1", "localhost", "::1", "192.168.1.20"}
    assert answered_hosts("[::1]") == {"127.0.0.1", "localhost", "::1"}


def test_serve_prints_a_new_token_unless_one_is_set(tmp_path: Path, tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import tuner.http_guard
    from tuner.cli import main
    from tuner.export import export_document, write_export

    served: list[tuple[str, str | None]] = []

    def run(app: object, sock: socket.socket) -> None:  # in place of uvicorn serving forever on the bound socket
        guard = next(m for m in app.user_middleware if m.cls.__name__ == "WriteGuard")  # type: ignore[attr-defined]
        served.append((guard.kwargs["token"], guard.kwargs["hosts"]))
        sock.close()

    monkeypatch.setattr(tuner.http_guard, "serve_on", run)
    config = write_export(tmp_path / "deploy.yaml", export_document({"top_k": 2}, {}))
    serve = ["serve", "--config", str(config), "--dataset", str(tiny_dataset_dir), "--port", str(free_port())]
    monkeypatch.delenv("TUNER_SERVE_TOKEN", raising=False)
    assert main(serve) == 0 and main(serve) == 0
    printed = capsys.readouterr().out
    assert [token in printed for token, _ in served] == [True, True] and served[0][0] != served[1][0]
    assert served[0][1] == {"127.0.0.1", "localhost", "::1"}
    monkeypatch.setenv("TUNER_SERVE_TOKEN", SERVE_TOKEN)
    assert main([*serve, "--host", "0.0.0.0"]) == 0
    assert served[2] == (SERVE_TOKEN, None) and SERVE_TOKEN not in capsys.readouterr().out


@pytest.mark.parametrize("metadata,message", [
    ({"date": "not-a-date"}, "documents.0.metadata: Value error, field 'metadata.date': 'not-a-date' is not a date"),
    ({"date": 20240301}, "documents.0.metadata: Value error, field 'metadata.date': 20240301 is not a date"),
    ({"family": ""}, "documents.0.metadata: Value error, field 'metadata.family' must be a non-empty string, got ''"),
])
def test_documents_metadata_follows_the_rule_of_validate(client: TestClient, metadata: dict[str, object], message: str) -> None:
    # checked before the retriever is asked: a document validate refuses never reaches the index
    with client:
        reply = client.post("/documents", headers=WRITE_HEADERS,
                            json={"documents": [{"doc_id": "d", "text": "Some text.", "metadata": metadata}]})
        assert reply.status_code == 422 and reply.json()["error"].startswith(message)


def test_documents_metadata_is_normalized_as_validate_normalizes_it() -> None:
    from tuner.deploy.service import DocumentIn

    document = DocumentIn(doc_id="d", text="Some text.", metadata={"date": "2024年3月1日", "team": "hr"})
    assert document.metadata == {"date": "2024-03-01", "team": "hr"}
