"""An OpenAI-compatible server that answers HTTP 200 with something that is not a reply — a truncated JSON body, a
proxy's HTML page, an error object without choices — (issue 38): a transient ``malformed`` failure, retried like a 5xx,
then a missing score counted as ``malformed_reply``; never "internal error ... (a bug in tuner)", exit 3. A ``tuner
run`` in which no trial could be scored exits 2 with the reason, its report written. All against a real HTTP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.study_tests.test_study import write_study
from tuner.cli import main
from tuner.llm import ChatClient, EmbeddingClient, LLMConfig, TransientBackendError
from tuner.llm.testing import FakeChatServer, Garbled, Reply

TRUNCATED = Garbled('{"id": "chatcmpl-1", "choices": [{"message": {"content": "24 mon')
HTML = Garbled("<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", "text/html")


def _config(server: FakeChatServer, **overrides: Any) -> LLMConfig:
    return LLMConfig(**{"base_url": server.url, "model": "m", "api_key_env": None, "cache": False, "backoff_base": 0.01,
                        "max_retries": 2, **overrides})


@pytest.mark.parametrize("garbled", [TRUNCATED, HTML, Garbled('{"error": {"message": "overloaded"}}'), Garbled("[1, 2]"),
                                     Garbled('{"choices": [{"message": 5}]}'), Garbled("[" * 100_000)])
def test_a_malformed_reply_is_retried_like_a_5xx(garbled: Garbled) -> None:
    with FakeChatServer() as server:
        server.script("[[once]]", garbled, Reply("24 months"))
        server.script("[[always]]", garbled)
        client = ChatClient(_config(server))
        assert client.complete([{"role": "user", "content": "[[once]]"}]).text == "24 months"
        with pytest.raises(TransientBackendError) as failed:
            client.complete([{"role": "user", "content": "[[always]]"}])
        assert failed.value.kind == "malformed" and str(failed.value).endswith("after 3 attempts")
        assert "HTTP 200 but" in str(failed.value)
        assert server.count("[[always]]") == 3
        counts = client.usage.snapshot()
        assert (counts.retries, counts.failures, counts.calls) == (3, 1, 1)


def test_the_html_page_is_quoted_in_the_failure_line() -> None:
    with FakeChatServer() as server:
        server.script("", HTML)
        with pytest.raises(TransientBackendError, match=r"HTTP 200 but the body is not a JSON object \(text/html: "
                                                        r"'<html><head><title>502 Bad Gateway</title>"):
            ChatClient(_config(server, max_retries=0)).complete([{"role": "user", "content": "hi"}])


def test_an_embeddings_reply_that_is_not_one_is_malformed_too() -> None:
    with FakeChatServer(embedder=lambda texts: [[1.0, 0.0]] * len(texts)) as server:
        client = EmbeddingClient(_config(server))
        assert np.asarray(client.embed(["a", "b"])).shape == (2, 2)
        server.script("broken", HTML)
        with pytest.raises(TransientBackendError) as failed:
            client.embed(["broken"])
        assert failed.value.kind == "malformed"


def _backend_file(folder: Path, name: str, server: FakeChatServer, backend: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"backend": backend, "base_url": server.url, "model": "m", "api_key_env": None,
                                    "cache": False, "max_retries": 1, "backoff_base": 0.01}))
    return path


@pytest.mark.parametrize("side, backend", [("generator", "openai"), ("judge", "llm")])
def test_robustness_counts_malformed_replies_by_reason(side: str, backend: str, tiny_dataset_dir: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with FakeChatServer() as server:
        server.script("", TRUNCATED)
        config = _backend_file(tmp_path, side, server, backend)
        # every reply failed: the report still says what was done, and the command exits 2 with the reason, as run does
        assert main(["robustness", str(tiny_dataset_dir), "--retriever", "bm25", f"--{side}", str(config), "--json"]) == 2
    printed = capsys.readouterr()
    report = json.loads(printed.out)
    assert report["missing"]["v0"] == {"malformed_reply": 6}
    every = "; ".join(f"{variant} malformed_reply 6" for variant in ("v0", "v1", "v2", "v3", "v4"))
    assert printed.err.strip().splitlines()[-1] == f"tuner: error: no case could be scored (every score is missing: {every})"


def test_robustness_with_some_scores_exits_0(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    with FakeChatServer() as server:
        server.script("", Reply("24 months"))
        config = _backend_file(tmp_path, "generator", server, "openai")
        assert main(["robustness", str(tiny_dataset_dir), "--retriever", "bm25", "--generator", str(config),
                     "--variants", "v3", "--json"]) == 0


def test_a_run_in_which_no_trial_could_be_scored_exits_2_with_the_reason(tiny_dataset_dir: Path, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    with FakeChatServer() as server:
        server.script("", HTML)
        generator = {"backend": "openai", "base_url": server.url, "model": "m", "api_key_env": None, "cache": False,
                     "max_retries": 1, "backoff_base": 0.01}
        study = write_study(tmp_path, tiny_dataset_dir, generator=generator, budget={"trials": 2}, pruning={"enabled": False})
        assert main(["run", str(study)]) == 2
    err = capsys.readouterr().err
    report = tmp_path / "out" / "tiny" / "report.html"
    assert report.is_file() and not (tmp_path / "out" / "tiny" / "config.yaml").exists()
    assert err.strip().splitlines()[-1] == (
        "tuner: error: no trial could be scored (2 failed or unscorable; trial #0: unscorable: no case has scores at both "
        "v0 and v3 (every answer or verdict is missing: v3 malformed_reply 6)); the report says what was done "
        f"({report}); nothing exported")


@pytest.mark.parametrize("command", ["gate", "stress"])
def test_a_gate_or_stress_run_whose_every_reply_failed_exits_2_and_writes_nothing(
        command: str, tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tuner.export import export_document, write_export

    config = write_export(tmp_path / "deploy.yaml", export_document({"top_k": 3, "retriever": "bm25"}, {}))
    with FakeChatServer() as server:
        server.script("", HTML)
        generator = _backend_file(tmp_path, "generator", server, "openai")
        code = main([command, "--config", str(config), "--dataset", str(tiny_dataset_dir), "--generator", str(generator),
                     "--out", str(tmp_path / "out")])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    # before issue 47 both exited 0, the gate with "pass" and a warning that Δfaithful was undefined
    assert code == 2 and last.startswith("tuner: error: no case could be scored (") and "malformed_reply 6" in last
    assert not (tmp_path / "out").exists()


def test_a_calibration_whose_every_reply_failed_exits_2_and_writes_no_floor(tiny_dataset_dir: Path, tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "noise_floor.json"
    with FakeChatServer() as server:
        server.script("", HTML)
        generator = _backend_file(tmp_path, "generator", server, "openai")
        code = main(["calibrate", str(tiny_dataset_dir), "--retriever", "bm25", "--generator", str(generator),
                     "--runs", "2", "--out", str(out)])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    # before: exit 0 and a floor of the retrieval metrics alone, its faithfulness "undefined", that a study would use
    assert code == 2 and not out.exists()
    assert last == ("tuner: error: no case could be scored (no case was scored in every run: malformed_reply 6); "
                    f"no noise floor written to {out}")
