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


DEEP = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
"""The issue's body: 50,000 nested objects, which made Python's JSON parser raise RecursionError (a 500)."""


@pytest.mark.parametrize("body", [DEEP, b"[" * 50_000 + b"]" * 50_000, b'{"query": "x", "filters": ' + DEEP + b"}"])
def test_a_body_nested_too_deep_is_refused_in_one_line_as_a_malformed_one_on_every_endpoint(body: bytes) -> None:
    headers = {"Content-Type": "application/json", "Authorization": "Bearer k", **WRITE_HEADERS}
    app = build_app(_never_loads, SERVE_TOKEN, api_key="k")
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        reply = client.post("/retrieval", content=body, headers=headers)
        assert reply.status_code == 400 and reply.json()["error_code"] == 400
        assert reply.json()["error_msg"].startswith("body: JSON nested ") and reply.json()["error_msg"].endswith(
            " levels deep, at most 64 allowed")
        for path in ("/retrieve", "/documents", "/documents/delete"):  # where malformed JSON is a 422
            reply = client.post(path, content=body, headers=headers)
            assert reply.status_code == 422 and "at most 64 allowed" in reply.json()["error"] and "\n" not in reply.text


def test_nesting_within_the_limit_reaches_the_endpoint() -> None:
    from tuner.deploy.service import ServiceLimits

    shallow = build_app(_never_loads, SERVE_TOKEN, ServiceLimits(max_json_depth=3), api_key="k")
    with TestClient(shallow, base_url="http://127.0.0.1:8000") as client:
        assert client.post("/retrieve", json={"query": "x", "filters": {"team": ["hr"]}}).status_code == 503
        reply = client.post("/retrieve", json={"query": "x", "filters": {"team": [["hr"]]}})
        assert reply.json() == {"error": "body: JSON nested 4 levels deep, at most 3 allowed"}


def _conditions(count: int, value: object = "hr") -> dict[str, object]:
    return {"knowledge_id": "tiny", "query": "laptop", "retrieval_setting": {"top_k": 3},
            "metadata_condition": {"conditions": [{"name": "team", "comparison_operator": "in", "value": value}] * count}}


def test_metadata_conditions_beyond_the_limits_are_a_400_naming_the_limit() -> None:
    headers = {"Authorization": "Bearer k"}
    with TestClient(build_app(_never_loads, SERVE_TOKEN, api_key="k"), base_url="http://127.0.0.1:8000") as client:
        assert client.post("/retrieval", json=_conditions(100), headers=headers).status_code == 503  # read, then not loaded
        reply = client.post("/retrieval", json=_conditions(20_000), headers=headers)
        assert reply.status_code == 400 and reply.json() == {"error_code": 400, "error_msg": (
            "metadata_condition.conditions: 20000 conditions, at most 100 allowed (max_conditions)")}
        reply = client.post("/retrieval", json=_conditions(1, ["x" * 4000, "y" * 96]), headers=headers)
        assert reply.json()["error_msg"] == (
            "metadata_condition.conditions.0.value: 4097 characters, at most 4096 allowed (max_condition_chars)")
    from tuner.deploy.service import ServiceLimits

    narrow = ServiceLimits(max_conditions=2, max_condition_chars=2)
    with TestClient(build_app(_never_loads, SERVE_TOKEN, narrow, api_key="k"), base_url="http://127.0.0.1:8000") as client:
        assert "at most 2 allowed (max_conditions)" in client.post("/retrieval", json=_conditions(3), headers=headers).text
        assert "name: 4 characters, at most 2" in client.post("/retrieval", json=_conditions(1), headers=headers).text


@pytest.mark.parametrize("flags,message", [
    (["--max-conditions", "0"], "--max-conditions: Input should be greater than or equal to 1, got 0"),
    (["--max-json-depth", "5000"], "--max-json-depth: Input should be less than or equal to 1000, got 5000"),
    (["--max-condition-chars", "-1"], "--max-condition-chars: Input should be greater than or equal to 1, got -1"),
])
def test_serve_limits_out_of_range_are_one_line_naming_the_flag(tiny_dataset_dir: Path, tmp_path: Path, flags: list[str],
                                                                message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.cli import main
    from tuner.export import export_document, write_export

    config = write_export(tmp_path / "deploy.yaml", export_document({"top_k": 2}, {}))
    assert main(["serve", "--config", str(config), "--dataset", str(tiny_dataset_dir), "--port", "0", *flags]) == 2
    assert capsys.readouterr().err.strip().endswith(message)
