"""The OpenAI-compatible path against a real model: llama-cpp-python's server with Gemma 3 270M on loopback, the
``openai`` generator and the ``llm`` judge through it on a demo case (issue 32 §4); skipped without
``tuner[local]``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net import free_port, wait_until_ready
from tuner.dataset import load_dataset, resolve_dataset
from tuner.generation import build_generator, parse_generator_config
from tuner.judging import build_judge, parse_judge_config
from tuner.backends import BackendResources
from tuner.verdicts import GENERATION_MISSING, MISSING_REASONS, VERDICTS

pytestmark = [pytest.mark.local_model, pytest.mark.slow]
CASES = 1  # each case is two requests of a few hundred prompt tokens on one thread


SERVER = """
import json, sys
import uvicorn
import llama_cpp.llama_cpp as api
from llama_cpp.server.app import create_app
from llama_cpp.server.settings import ModelSettings, ServerSettings
from tuner.generation._llama import extra_buffers_here

model, server = ModelSettings(**json.loads(sys.argv[1])), ServerSettings(**json.loads(sys.argv[2]))
defaults, safe = api.llama_model_default_params, extra_buffers_here()

def load_defaults():
    params = defaults()
    params.use_extra_bufts = safe
    return params

api.llama_model_default_params = load_defaults
try:
    app = create_app(server_settings=server, model_settings=[model])  # loads the model
finally:
    api.llama_model_default_params = defaults
uvicorn.run(app, host=server.host, port=server.port)
"""
"""llama-cpp-python's server app, its model loaded as the local generator loads it: with llama.cpp's extra buffer
types only where :func:`tuner.generation._llama.extra_buffers_here` says they are safe (its AMX kernels segfault in the
first decode on some AMX CPUs). The server's ``Llama`` takes no argument for that model parameter, so its defaults are
replaced in this child process while the app loads the model, and restored before it serves (llama-cpp-python
0.3.36, the version pyproject pins)."""


@pytest.fixture(scope="module")
def llama_server(local_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's server on a free loopback port, serving the model as ``gemma-3-270m`` with Gemma's chat
    format, loaded with extra buffers only where they are safe (:data:`SERVER`); its log goes to a file (llama.cpp logs
    more than a pipe holds, and a full pipe stops the server)."""
    port = free_port()
    model = {
        "model": str(local_model_path), "model_alias": "gemma-3-270m", "chat_format": "gemma", "n_ctx": 2048,
        "n_threads": max(1, len(os.sched_getaffinity(0)) - 1), "verbose": False,
    }
    command = [sys.executable, "-c", SERVER, json.dumps(model), json.dumps({"host": "127.0.0.1", "port": port})]
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(process, url, seconds=120, path="/v1/models")
        yield f"{url}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_openai_generator_and_llm_judge_get_real_replies(llama_server: str, tmp_path: Path) -> None:
    endpoint = {"base_url": llama_server, "model": "gemma-3-270m", "api_key_env": None, "seed": 0, "concurrency": 1}
    resources = BackendResources(cache_path=tmp_path / "calls.sqlite")
    generator = build_generator(parse_generator_config({"backend": "openai", **endpoint, "max_tokens": 16}, "test"), resources)
    judge = build_judge(parse_judge_config({"backend": "llm", **endpoint, "max_tokens": 48, "parse_retries": 0, "batch_keypoints": True}, "test"), resources)
    dataset = load_dataset(resolve_dataset("demo"))
    texts = {doc.doc_id: doc.text for doc in dataset.corpus}
    answers, verdicts = [], []
    # the cases with the shortest prompts: the model's time is mostly reading them, on one thread
    shortest = sorted((c for c in dataset.golden if c.keypoints),
                      key=lambda c: len(c.question) + sum(len(texts[doc_id]) for doc_id in c.relevant_doc_ids))
    for case in shortest[:CASES]:
        passages = [texts[doc_id] for doc_id in case.relevant_doc_ids]
        answer = generator.generate(case.question, passages)
        answers.append(answer)
        verdicts += judge.judge(case.question, answer.text, passages, case.keypoints, dataset.wrong_answers(case))

    usage = resources.usage.snapshot()
    assert usage.calls == generator.requests_made.value + judge.requests_made.value  # every request reached the model
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0 and usage.failures == 0
    assert any(answer.text for answer in answers)
    assert all(answer.text or answer.missing_reason in GENERATION_MISSING for answer in answers)
    missing = Counter(v.missing_reason for v in verdicts if v.missing_reason is not None)
    assert set(missing) <= set(MISSING_REASONS)
    scored = [v for v in verdicts if v.missing_reason is None]
    assert all(v.answer in VERDICTS and v.context in VERDICTS for v in scored)
    assert len(scored) + sum(missing.values()) == len(verdicts) > 0
    print(f"answers {[a.text or a.missing_reason for a in answers]}; verdicts scored {len(scored)}, missing {dict(missing)}")
