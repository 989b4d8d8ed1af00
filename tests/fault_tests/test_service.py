"""Issue 24 §4: ``tuner serve`` under concurrent first writes, oversized and malformed bodies, and SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net import SERVE_TOKEN, WRITE_HEADERS, free_port, wait_until_ready
from tuner.deploy import Retriever
from tuner.export import export_document, write_export
from tuner.settings import RetrievalSettings

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytestmark = pytest.mark.slow  # the module's server (or study) takes tens of seconds to start

REPO = Path(__file__).resolve().parents[2]
LIMIT_BYTES = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, tiny_dataset_dir: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A fresh ``tuner serve`` process over a cache that already holds the chunks and vectors: so its first
    ``POST /documents`` are the first calls of the tokenizer in that process, as on a restarted service."""
    settings = RetrievalSettings(top_k=3, chunk_size=32, chunk_unit="tokens", retriever="hybrid", candidate_depth=8)
    config = write_export(tmp_path_factory.mktemp("serve") / "deploy.yaml", export_document(settings.model_dump(), {}))
    Retriever.from_config(config, corpus=tiny_dataset_dir)  # warms the chunk cache and the embedding store
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TUNER_SERVE_TOKEN": SERVE_TOKEN}
    process = subprocess.Popen(
        [sys.executable, "-m", "tuner", "serve", "--config", str(config), "--dataset", str(tiny_dataset_dir),
         "--port", str(port), "--max-body-mb", str(LIMIT_BYTES / 1024 / 1024)],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(process, url)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=60)


def test_six_concurrent_first_adds_all_succeed(server: tuple[str, subprocess.Popen[str]]) -> None:
    url, _ = server
    before = httpx.get(f"{url}/healthz").json()["documents"]
    barrier = threading.Barrier(6)
    replies: list[httpx.Response] = []

    def add(n: int) -> None:
        document = {"doc_id": f"new-{n}", "title": f"Note {n}", "text": f"Warehouse {n} opens at {n + 6} am. 仓库{n}号早上开门。"}
        barrier.wait()
        replies.append(httpx.post(f"{url}/documents", headers=WRITE_HEADERS, json={"documents": [document]}, timeout=120))

    threads = [threading.Thread(target=add, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.status_code for r in replies) == [200] * 6, [r.text for r in replies]
    assert httpx.get(f"{url}/healthz").json()["documents"] == before + 6


@pytest.mark.parametrize("top_k", [True, "3", 2.0])
def test_top_k_must_be_a_json_integer(server: tuple[str, subprocess.Popen[str]], top_k: object) -> None:
    reply = httpx.post(f"{server[0]}/retrieve", json={"query": "laptop price", "top_k": top_k})
    assert reply.status_code == 422 and reply.json()["error"].startswith("top_k: ")


def test_oversized_non_utf8_and_malformed_bodies_get_one_error_line(server: tuple[str, subprocess.Popen[str]]) -> None:
    url = server[0]
    headers = {"content-type": "application/json"}
    huge = httpx.post(f"{url}/retrieve", json={"query": "laptop " * LIMIT_BYTES})
    assert huge.status_code == 413 and huge.json() == {"error": f"request body over {LIMIT_BYTES} bytes"}

    def chunked() -> Iterator[bytes]:  # no Content-Length: the limit is found while the body streams in
        yield b'{"query": "'
        for _ in range(LIMIT_BYTES // 1024 + 1):
            yield b"x" * 1024
        yield b'"}'

    streamed = httpx.post(f"{url}/retrieve", content=chunked(), headers=headers)
    assert streamed.status_code == 413 and "error" in streamed.json()
    latin1 = httpx.post(f"{url}/retrieve", content='{"query": "prix café"}'.encode("latin-1"), headers=headers)
    assert latin1.status_code == 422 and latin1.json() == {"error": "body: not UTF-8 (byte 19)"}
    broken = httpx.post(f"{url}/retrieve", content=b'{"query": "laptop", }', headers=headers)
    assert broken.status_code == 422
    assert broken.json()["error"].startswith("body: malformed JSON at character 20")


@pytest.mark.parametrize("text", ["\u3000\u3000", "\u200b", " \u200b\u3000\n"])
def test_a_document_with_nothing_to_read_is_refused(server: tuple[str, subprocess.Popen[str]], text: str) -> None:
    url = server[0]
    before = httpx.get(f"{url}/healthz").json()["documents"]
    reply = httpx.post(f"{url}/documents", headers=WRITE_HEADERS, json={"documents": [{"doc_id": "blank", "text": text}]}, timeout=60)
    assert reply.status_code == 422
    assert reply.json()["error"] == "documents.0.text: Value error, is empty (only whitespace or invisible characters)"
    assert httpx.get(f"{url}/healthz").json()["documents"] == before


SENTENCES = 300


def test_sigterm_finishes_the_request_in_flight_and_exits_0(server: tuple[str, subprocess.Popen[str]]) -> None:
    url, process = server
    # new sentences enough that embedding them keeps the request busy after SIGTERM is sent (~1.2 s idle; 250 left 0.8 s,
    # 150 0.06 s): the reply must come after the signal, so a request that finished first fails the test
    text = " ".join(f"Depot {n} in district {n * 7} stores {n * 13} pallets of item {n * 31}." for n in range(SENTENCES))
    replies: list[tuple[httpx.Response, float]] = []

    def send() -> None:
        reply = httpx.post(f"{url}/documents", headers=WRITE_HEADERS, json={"documents": [{"doc_id": "depots", "text": text}]},
                           timeout=300)
        replies.append((reply, time.monotonic()))

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(1.0)
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)
    sender.join(timeout=300)
    assert process.wait(timeout=120) == 0
    assert [reply.status_code for reply, _ in replies] == [200]
    reply, replied = replies[0]
    assert replied > signalled, "the reply came before SIGTERM: the request was not in flight (raise SENTENCES)"
    assert reply.json()["chunks_added"] > 0
