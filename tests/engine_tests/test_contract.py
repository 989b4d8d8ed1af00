"""One suite over every registered engine (issue 53), as Optuna runs one suite over every storage: each engine of
:data:`tuner.engine.ENGINES` is measured here the same way, and an engine registered without a case below fails
:func:`test_every_registered_engine_has_a_case` and every test parametrized over the registry.

- parity: recall@k of one configuration, case by case, equals the memory engine's (milvus on a Lite file; external
  against an in-process service answering Dify's External Knowledge API from tuner's own retrieval);
- faults: an unreachable or a mistyped address is one line on stderr and exit 2;
- describe/record round trip: what a study records and an export carries of the engine (:meth:`Engine.recorded`)
  read back (:meth:`Engine.from_record`) is the same engine, and no secret is in it."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.commands._common import add_engine_arguments, engine_flags, engine_from_args
from tuner.dataset import load_dataset
from tuner.deploy import Retriever
from tuner.embedding import EmbeddingContext
from tuner.engine import ENGINES, Engine, parse_engine
from tuner.evaluation import evaluate_retrieval
from tuner.llm import CallCache
from tuner.settings import RetrievalSettings
from tuner.testing import canned_service

SETTINGS = RetrievalSettings(retriever="dense", chunk_size=40, candidate_depth=6, top_k=3)
SECRET = "contract-s3cret"
SECRET_VARIABLE = "TUNER_CONTRACT_SECRET"


@dataclass(frozen=True)
class Case:
    """How the suite reaches one engine: its ``engine:`` block (``where``: a folder for files, the fake service's
    URL), the command-line flags of an unreachable and of a mistyped address (None: the engine has no address),
    the pytest modules it needs, and its block with a secret named."""

    config: Any
    unreachable: list[str] | None
    mistyped: tuple[list[str], str] | None
    needs: tuple[str, ...] = ()
    secret_key: str | None = None


CASES: dict[str, Case] = {
    "memory": Case(lambda where: {"backend": "memory"}, None, None),
    "milvus": Case(lambda where: {"backend": "milvus", "uri": str(where.folder / "kb.db")},
                   ["--engine", "milvus", "--engine-uri", "/nonexistent/dir/kb.db"],
                   (["--engine", "milvus", "--engine-uri", "kb"], "engine.milvus.uri: must be a Milvus Lite file"),
                   ("pymilvus", "milvus_lite"), "token_env"),
    "external": Case(lambda where: {"backend": "external", "url": where.service, "knowledge_id": "tiny",
                                    "api_key_env": None},
                     ["--external", "http://127.0.0.1:9", "--knowledge-id", "kb", "--deadline", "1"],
                     (["--external", "ftp://x", "--knowledge-id", "kb"], "--external must start with http:// or https://"),
                     (), "api_key_env"),
}


@dataclass(frozen=True)
class Where:
    folder: Path
    service: str


def _needs(backend: str) -> None:
    for module in CASES[backend].needs:
        pytest.importorskip(module)


@pytest.fixture(scope="module")
def service(tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> Iterator[str]:
    """An in-process service speaking Dify's External Knowledge API (``POST /retrieval``), answering from tuner's
    own retrieval of the tiny dataset with :data:`SETTINGS` (``top_k`` as asked), the document id in
    ``metadata.doc_id``."""
    retriever = Retriever(SETTINGS, load_dataset(tiny_dataset_dir), embeddings=embeddings)

    def answer(request: bytes) -> bytes:
        body = json.loads(request)
        chunks = retriever.retrieve(body["query"], body["retrieval_setting"]["top_k"])
        return json.dumps({"records": [{"content": c.text, "score": c.score, "title": "",
                                        "metadata": {"doc_id": c.doc_id}} for c in chunks]}).encode()

    with canned_service(answer) as url:
        yield url


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory, service: str) -> Where:
    return Where(tmp_path_factory.mktemp("engines"), service)


def _engine(backend: str, where: Where) -> Engine:
    _needs(backend)
    return parse_engine(CASES[backend].config(where), "contract")


def test_every_registered_engine_has_a_case() -> None:
    assert set(CASES) == set(ENGINES), "a registered engine needs its Case here (and passes this suite)"


@pytest.mark.parametrize("backend", list(ENGINES))
def test_recall_of_one_configuration_equals_memory_case_by_case(backend: str, where: Where, tiny_dataset_dir: Path,
                                                                 embeddings: EmbeddingContext, tmp_path: Path) -> None:
    engine = _engine(backend, where)
    dataset = load_dataset(tiny_dataset_dir)
    memory = evaluate_retrieval(parse_engine({"backend": "memory"}, "contract").pipeline(dataset, embeddings=embeddings),
                                SETTINGS)
    pipeline = engine.pipeline(dataset, embeddings=embeddings, calls=lambda: CallCache(tmp_path / "calls.sqlite"))
    measured = evaluate_retrieval(pipeline, SETTINGS)
    assert measured.per_case["recall_at_k"] == memory.per_case["recall_at_k"]
    assert measured.overall["recall_at_k"].value == memory.overall["recall_at_k"].value > 0


@pytest.mark.parametrize("backend", list(ENGINES))
@pytest.mark.parametrize("fault", ["unreachable", "mistyped"])
def test_a_bad_address_is_one_line_and_exit_2(backend: str, fault: str, tiny_dataset_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _needs(backend)
    case = CASES[backend]
    flags, said = (case.unreachable, None) if fault == "unreachable" else (case.mistyped or (None, None))
    if flags is None:
        pytest.skip(f"engine {backend} has no address")
    assert main(["eval", str(tiny_dataset_dir), "--top-k", "3", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert said is None or said in err


@pytest.mark.parametrize("backend", list(ENGINES))
def test_what_a_study_records_reads_back_as_the_same_engine_without_a_secret(
        backend: str, where: Where, tiny_dataset_dir: Path, embeddings: EmbeddingContext,
        monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[backend]
    _needs(backend)
    monkeypatch.setenv(SECRET_VARIABLE, SECRET)
    given = case.config(where)
    engine = parse_engine({**given, **({} if case.secret_key is None else {case.secret_key: SECRET_VARIABLE})}, "contract")
    recorded = engine.recorded(engine.pipeline(load_dataset(tiny_dataset_dir), embeddings=embeddings))
    [(key, described)] = [(key, value) for key, value in recorded.items() if value is not None]
    assert key in ("engine", "retrieval") and described["backend"] == backend
    assert SECRET not in json.dumps(recorded)
    assert ENGINES[backend].from_record(described, "contract") == engine


@pytest.mark.parametrize("backend", [backend for backend, engine in ENGINES.items() if engine.on_command_line])
def test_the_engine_flags_made_from_its_fields_give_the_engine_its_block_gives(backend: str, where: Where) -> None:
    config = CASES[backend].config(where)
    parser = argparse.ArgumentParser()
    add_engine_arguments(parser, collections=True)
    flags = [(flag.option, str(config[flag.field])) for flag in engine_flags() if flag.backend == backend
             and flag.field in config and flag.flag.parse is None]
    args = parser.parse_args(["--engine", backend, *(word for flag in flags for word in flag)])
    assert engine_from_args(args) == parse_engine(config, "contract")
