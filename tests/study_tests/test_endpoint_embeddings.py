"""A study and a robustness run whose embedding model is an OpenAI-compatible endpoint on loopback (serving the local
MiniLM) give the same figures as the local model, and ask the endpoint only for texts never embedded before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest
import torch

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.embedding import CachedEncoder
from tuner.llm.testing import FakeChatServer, Failure

CONFIGS = [
    {"top_k": 2, "retriever": "dense", "chunk_size": 40},
    {"top_k": 3, "retriever": "dense", "chunk_size": 20},
]


@pytest.fixture
def embedding_server(encoder: CachedEncoder) -> Iterator[FakeChatServer]:
    local = encoder.inner
    with FakeChatServer(embedder=lambda texts: local.encode(texts).tolist()) as server:
        yield server


def _values(folder: Path, dataset: Path, **overrides: object) -> list[tuple[float, ...]]:
    folder.mkdir()
    study_file = write_study(folder, dataset, enqueue=CONFIGS, **overrides)
    assert main(["run", str(study_file), "--trials", "2", "--no-report"]) == 0
    study = optuna.load_study(study_name="tiny", storage=f"sqlite:///{folder / 'out' / 'tiny' / 'study.db'}")
    return [tuple(t.values) for t in sorted(study.trials, key=lambda t: t.number)]


@pytest.mark.slow
def test_study_on_an_endpoint_matches_the_local_model(
    tiny_dataset_dir: Path, tmp_path: Path, embedding_server: FakeChatServer
) -> None:
    endpoint = f"openai:all-MiniLM-L6-v2@{embedding_server.url}"
    settings = {"candidate_depth": 10, "embedding_model": endpoint}
    remote = _values(tmp_path / "endpoint", tiny_dataset_dir, settings=settings, embedding={"batch_size": 16})
    sent = len(embedding_server.requests)
    assert sent > 0 and all(len(r.body["input"]) <= 16 for r in embedding_server.requests)
    local = _values(tmp_path / "local", tiny_dataset_dir)
    assert [v for values in remote for v in values] == pytest.approx([v for values in local for v in values], abs=1e-6)
    assert len(embedding_server.requests) == sent  # the local study asked the endpoint nothing


def test_robustness_on_an_endpoint_matches_the_local_model(
    tiny_dataset_dir: Path, embedding_server: FakeChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    def robustness(model: str) -> dict[str, object]:
        args = ["robustness", str(tiny_dataset_dir), "--json", "--retriever", "dense", "--top-k", "2"]
        assert main([*args, "--embedding-model", model]) == 0
        payload = json.loads(capsys.readouterr().out)
        payload.pop("settings")
        payload.pop("usage")
        return dict(payload)

    assert robustness(f"openai:all-MiniLM-L6-v2@{embedding_server.url}") == robustness("all-MiniLM-L6-v2")
    assert embedding_server.requests


def test_an_unavailable_device_stops_the_study_before_any_output(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    study_file = write_study(tmp_path, tiny_dataset_dir, embedding={"device": "cuda"})
    assert main(["run", str(study_file), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "embedding.device: cuda is not available" in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("failure", "message"), [(Failure(400), "HTTP 400 request rejected"), (Failure(503), "HTTP 503")])
def test_an_embeddings_endpoint_that_keeps_failing_stops_a_command_as_one_line(
    tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str], failure: Failure, message: str
) -> None:
    # a rejected request is a BackendError of its own and a 503 a TransientBackendError (once its 3 retries are spent),
    # neither of them a user error: the CLI prints them as one line all the same
    with FakeChatServer(embedder=lambda texts: [[1.0, 0.0]] * len(texts)) as server:
        server.script("", failure)
        model = f"openai:all-MiniLM-L6-v2@{server.url}"
        assert main(["eval", str(tiny_dataset_dir), "--retriever", "dense", "--embedding-model", model]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tuner: error: all-MiniLM-L6-v2 at http://127.0.0.1:") and message in err[0], err
