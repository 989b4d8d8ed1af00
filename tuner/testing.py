"""Serve (export → **gate** in pytest): pytest helpers: the checks of ``tuner gate`` as assertions in a project's own
test suite.

They call the gate's own code (:func:`tuner.gate.measure` and :func:`tuner.gate.evaluate_gate`), so
a test and the CI gate can never disagree about what a regression is::

    from tuner.testing import assert_retrieval_gate, assert_robustness

    def test_retrieval_did_not_regress():
        assert_retrieval_gate("deploy.yaml", "data/golden", baseline="gate/baseline.json", recall_at_k=0.03)

    def test_conflicts_do_not_mislead():
        assert_robustness("deploy.yaml", "data/golden", max_delta=0.15, categories={"pricing": 0.10})

A test (or a bench) that starts ``tuner serve`` itself waits for it with :func:`wait_until_ready`;
:func:`canned_service` stands in for a misbehaving External Knowledge API service.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tuner.dataset import Dataset, load_dataset, resolve_dataset
from tuner.embedding import CachedEncoder, EmbeddingContext
from tuner.gate import (
    GateResult,
    RobustnessSetup,
    evaluate_gate,
    load_baseline,
    measure,
    select_cases,
    thresholds_from_mapping,
)
from tuner.generation import Generator
from tuner.judging import Judge
from tuner.variants import VariantsConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings, load_settings_file, settings_from_mapping

Config = RetrievalSettings | Mapping[str, Any] | str | Path
"""Settings as an object, a mapping of settings, or the path of a settings file (e.g. from ``tuner export``)."""


def _settings(config: Config) -> RetrievalSettings:
    if isinstance(config, RetrievalSettings):
        return config
    if isinstance(config, Mapping):
        return settings_from_mapping(dict(config), "config")
    return load_settings_file(str(config))


def _pipeline(dataset: Dataset | str | Path, encoder: CachedEncoder | None,
              embeddings: EmbeddingContext | None = None) -> RetrievalPipeline:
    loaded = dataset if isinstance(dataset, Dataset) else load_dataset(resolve_dataset(dataset))
    return RetrievalPipeline(loaded, encoder=encoder, embeddings=embeddings)


def _raise_on_failure(result: GateResult, what: str) -> GateResult:
    if result.failures:
        head = f"{what}: {result.verdict} ({len(result.failures)} failed check(s))"
        raise AssertionError("\n  ".join([head, *result.failure_lines()]))
    return result


def assert_retrieval_gate(
    config: Config,
    dataset: Dataset | str | Path,
    baseline: str | Path,
    *,
    encoder: CachedEncoder | None = None,
    **limits: float | None,
) -> GateResult:
    """Raise ``AssertionError`` listing every retrieval metric that fell by more than its limit vs ``baseline``.

    ``limits`` are relative drops keyed by metric (``recall_at_k``, ``hit_at_k``, ``mrr``,
    ``context_precision``; ``None`` = not gated); unnamed metrics keep the gate defaults (3% recall@k,
    2% hit@k). No generator or judge is called. Returns the gate result when it passes.
    """
    thresholds = thresholds_from_mapping({"retrieval": limits}, "assert_retrieval_gate")
    pipeline = _pipeline(dataset, encoder)
    measurement = measure(pipeline, _settings(config), [c.id for c in pipeline.dataset.golden], None)
    result = evaluate_gate(measurement, thresholds, load_baseline(baseline), baseline_source=str(baseline))
    return _raise_on_failure(result, "retrieval gate")


def assert_robustness(
    config: Config,
    dataset: Dataset | str | Path,
    max_delta: float = 0.15,
    categories: Mapping[str, float] | None = None,
    *,
    variants: Sequence[str] = ("v3",),
    generator: Generator | None = None,
    judge: Judge | None = None,
    recheck_judge: Judge | None = None,
    variant_config: VariantsConfig | None = None,
    category_min_cases: int = 5,
    sample: int | None = None,
    always_include: Sequence[str] = (),
    encoder: CachedEncoder | None = None,
) -> GateResult:
    """Raise ``AssertionError`` when Δfaithful of a variant exceeds ``max_delta`` overall or in a category.

    ``categories`` maps a category to its own limit (e.g. ``{"critical": 0.10}``); other categories
    use ``max_delta``; categories with fewer than ``category_min_cases`` paired cases are not gated.
    ``generator`` / ``judge`` default to the offline extractive generator and lexical judge. With
    ``recheck_judge`` (e.g. a second, uncached judge instance) the sampled cases are judged again and
    a judge that disagrees with itself fails the assertion as "judge unstable".
    """
    from tuner.generation import build_generator, parse_generator_config
    from tuner.judging import build_judge, parse_judge_config
    from tuner.backends import BackendResources

    warn = min(0.05, max_delta)
    thresholds = thresholds_from_mapping(
        {
            "delta_faithful": {"warn": warn, "fail": max_delta},
            "category_default": {"warn": warn, "fail": max_delta},
            "categories": {name: {"warn": min(warn, limit), "fail": limit} for name, limit in (categories or {}).items()},
            "category_min_cases": category_min_cases,
        },
        "assert_robustness",
    )
    resources = BackendResources(encoder=encoder)
    pipeline = _pipeline(dataset, encoder, resources.embeddings)  # the generator's model is the retrieval's: one load
    setup = RobustnessSetup(
        generator=generator or build_generator(parse_generator_config(None, "default"), resources),
        judge=judge or build_judge(parse_judge_config(None, "default"), resources),
        variant_config=variant_config or VariantsConfig(),
        variants=("v0", *variants),
        recheck=recheck_judge,
        judge_cases=thresholds.judge_check.cases,
    )
    ids = select_cases([c.id for c in pipeline.dataset.golden], sample, 0, always_include)
    measurement = measure(pipeline, _settings(config), ids, setup)
    if measurement.robustness is None:
        raise AssertionError(f"robustness gate: {pipeline.dataset.path} has no keypoints; nothing to judge")
    return _raise_on_failure(evaluate_gate(measurement, thresholds), "robustness gate")


def wait_until_ready(process: subprocess.Popen[Any], url: str, seconds: float = 180, path: str = "/healthz") -> None:
    """Poll ``url``'s ``path`` (a ``tuner serve`` started as ``process``: ``/healthz``) until it answers 200. Raises
    ``RuntimeError`` with the server's stderr (when piped) if it exits first, ``TimeoutError`` after ``seconds``.

    One client polls: ``httpx.get`` makes a client per call, and loading its TLS certificates costs ~30 ms of CPU each
    time, which at 20 polls a second took half a core from the server it waited for (bench/HISTORY.md, "Suite time,
    second round")."""
    import httpx

    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=5) as client:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode} before it was ready: "
                                   f"{process.communicate()[1]}")
            try:
                if client.get(f"{url}{path}").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() >= deadline:
                raise TimeoutError(f"server not ready in {seconds:.0f} s")
            time.sleep(0.05)


@contextmanager
def canned_service(reply: bytes | Callable[[bytes], bytes] | None, trickle: float = 0.0) -> Iterator[str]:
    """A local HTTP server whose every POST gets HTTP 200 and ``reply`` (JSON; a function: of the request's body) at
    once; ``trickle`` > 0: one byte of it every ``trickle`` seconds; ``reply`` None: the connection is accepted and
    never answered (a stalled service). Its URL; the server stops at the end of the block. For tests of ``tuner eval
    --external`` against a service that misbehaves (too large a reply, a trickle, no answer) or answers as another
    retrieval would."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    stop = threading.Event()

    class Canned(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            if reply is None:
                stop.wait()
                return
            answer = reply(body) if callable(reply) else reply
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            try:
                if trickle <= 0:
                    self.wfile.write(answer)
                for byte in (answer if trickle > 0 else b""):
                    if stop.wait(trickle):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            except OSError:
                pass  # the client gave up

    server = ThreadingHTTPServer(("127.0.0.1", 0), Canned)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
