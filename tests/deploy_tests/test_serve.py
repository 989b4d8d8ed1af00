from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net import SERVE_TOKEN, WRITE_HEADERS, serving, start_serve
from tuner.deploy import Retriever
from tuner.export import export_document, write_export
from tuner.settings import RetrievalSettings

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytestmark = pytest.mark.slow  # the module's server (or study) takes tens of seconds to start



_serve = start_serve


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    settings = RetrievalSettings(top_k=3, chunk_size=32, retriever="hybrid", rerank_strength=0.3, candidate_depth=8)
    provenance = {"study": "tiny", "trial": 4, "storage": "postgresql://tuner:s3cret@127.0.0.1/test"}
    return write_export(tmp_path_factory.mktemp("serve") / "deploy.yaml", export_document(settings.model_dump(), provenance))


@pytest.fixture(scope="module")
def server(config: Path, tiny_dataset_dir: Path) -> Iterator[str]:
    with serving(["--config", str(config), "--dataset", str(tiny_dataset_dir)]) as (url, _):
        yield url


def test_the_service_returns_what_the_library_returns(server: str, config: Path, tiny_dataset_dir: Path) -> None:
    library = Retriever.from_config(config, corpus=tiny_dataset_dir)
    for query in ("How much does the Aurora X200 laptop cost?", "How long is the laptop warranty?"):
        reply = httpx.post(f"{server}/retrieve", json={"query": query}, timeout=30)
        assert reply.status_code == 200
        chunks = reply.json()["chunks"]
        expected = library.retrieve(query)
        assert [(c["doc_id"], tuple(c["span"])) for c in chunks] == [(c.doc_id, c.span) for c in expected]
        assert [c["score"] for c in chunks] == pytest.approx([c.score for c in expected], abs=1e-6)
    one = httpx.post(f"{server}/retrieve", json={"query": "laptop memory", "top_k": 1, "filters": {"doc_id": ["aurora-x210"]}})
    assert [c["doc_id"] for c in one.json()["chunks"]] == ["aurora-x210"]


def test_health_and_config_without_secret(server: str) -> None:
    health = httpx.get(f"{server}/healthz").json()
    assert health["status"] == "ready" and health["documents"] == 8
    config = httpx.get(f"{server}/config")
    assert config.json()["settings"]["top_k"] == 3 and config.json()["provenance"]["trial"] == 4
    assert "s3cret" not in config.text and "tuner:***@" in config.text


@pytest.mark.parametrize("body,message", [
    ({}, "query: Field required"),
    ({"query": ""}, "query: String should have at least 1 character"),
    ({"query": "x", "top_k": 0}, "top_k: Input should be greater than or equal to 1"),
    ({"query": "x", "top_k": 9}, "candidate_depth (8)"),
    ({"query": "x", "topk": 2}, "topk: Extra inputs are not permitted"),
])
def test_bad_requests_get_one_clear_4xx_line(server: str, body: dict[str, object], message: str) -> None:
    reply = httpx.post(f"{server}/retrieve", json=body)
    assert reply.status_code == 422 and message in reply.json()["error"]


def test_documents_added_and_deleted_while_serving(server: str) -> None:
    query = "What is the price of the Aurora X300 tablet?"
    added = httpx.post(f"{server}/documents", headers=WRITE_HEADERS, json={"documents": [
        {"doc_id": "aurora-x300", "title": "Aurora X300 tablet", "text": "The Aurora X300 tablet costs $899.",
         "metadata": {"team": "sales"}}]}, timeout=60)
    assert added.status_code == 200 and added.json()["documents"] == 9
    best = httpx.post(f"{server}/retrieve", json={"query": query}).json()["chunks"][0]
    assert best["doc_id"] == "aurora-x300" and best["metadata"]["team"] == "sales"
    # a write without the token (a hostile page, a client not told it) changes nothing
    assert httpx.post(f"{server}/documents/delete", json={"doc_ids": ["aurora-x300"]}).status_code == 403
    deleted = httpx.post(f"{server}/documents/delete", headers=WRITE_HEADERS, json={"doc_ids": ["aurora-x300"]}, timeout=60)
    assert deleted.json()["deleted"] == 1
    assert "aurora-x300" not in {c["doc_id"] for c in httpx.post(f"{server}/retrieve", json={"query": query}).json()["chunks"]}


def test_bad_config_or_port_is_one_line_and_exit_2(tmp_path: Path, tiny_dataset_dir: Path, config: Path) -> None:
    bad = tmp_path / "bad.env"
    bad.write_text("TUNER_RETRIEVER=splade\n")
    result = _serve(["--config", str(bad), "--dataset", str(tiny_dataset_dir)])
    _, err = result.communicate(timeout=60)
    assert result.returncode == 2 and "bad.env: retriever" in err and len(err.strip().splitlines()) == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = _serve(["--config", str(config), "--dataset", str(tiny_dataset_dir), "--port", str(taken.getsockname()[1])])
        _, err = busy.communicate(timeout=60)
    assert busy.returncode == 2 and "cannot listen there" in err


def test_not_ready_until_the_indexes_are_loaded_and_a_failed_load_says_why(config: Path, tiny_dataset_dir: Path) -> None:
    import threading

    from fastapi.testclient import TestClient

    from tuner.deploy.service import build_app

    release = threading.Event()

    def slow_load() -> dict[str, Retriever]:
        release.wait(60)
        return {"tiny": Retriever.from_config(config, corpus=tiny_dataset_dir)}

    with TestClient(build_app(slow_load, SERVE_TOKEN), base_url="http://127.0.0.1:8000") as client:
        assert client.get("/healthz").status_code == 503 and client.get("/healthz").json() == {"error": "loading indexes"}
        assert client.post("/retrieve", json={"query": "warranty"}).status_code == 503
        release.set()
        deadline = time.monotonic() + 60
        while client.get("/healthz").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert client.post("/retrieve", json={"query": "warranty"}).json()["chunks"]

    def broken() -> dict[str, Retriever]:
        raise FileNotFoundError("no such dataset")

    with TestClient(build_app(broken, SERVE_TOKEN), base_url="http://127.0.0.1:8000") as client:
        deadline = time.monotonic() + 30
        while "failed" not in client.get("/healthz").text:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert client.get("/healthz").status_code == 503 and "FileNotFoundError: no such dataset" in client.get("/healthz").text
