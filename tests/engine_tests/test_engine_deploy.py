"""A study on Milvus Lite end to end (issue 45): ``tuner run`` with ``engine: {backend: milvus}`` builds a collection
pymilvus sees at that URI, ``tuner export`` records the engine (never a token) and the collection each trial searched,
and ``tuner serve --engine milvus`` serves the export from that collection (``/retrieve``, Dify's ``/retrieval`` with
its metadata conditions), refusing writes with one 409 line; served in memory, it says it was measured elsewhere.
``tuner export --format milvus`` gives the trial's pymilvus search, whose code, run as written, returns the trial's
chunks."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")
pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from tests.study_tests.test_study import write_study  # noqa: E402
from tuner.cli import main  # noqa: E402
from tuner.dataset import load_dataset  # noqa: E402
from tuner.deploy import EngineCorpus, Retriever, engine_note, serving_engine  # noqa: E402
from tuner.embedding import CachedEncoder, EmbeddingContext  # noqa: E402
from tuner.engine import MemoryEngine, MilvusEngine, filter_expression  # noqa: E402
from tuner.errors import UserError  # noqa: E402
from tuner.export import SNIPPET_FENCE, export_document, read_export, write_framework_export  # noqa: E402
from tuner.front import TrialRecord  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402

TOKEN_ENV = "TUNER_TEST_MILVUS_TOKEN"
API_KEY = "test-api-key"
WRITE_TOKEN = "test-write-token"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, tiny_dataset_dir: Path) -> dict[str, Any]:
    """A two-trial study of the tiny dataset on a Milvus Lite file, and its export of a dense trial."""
    folder = tmp_path_factory.mktemp("milvus-study")
    uri = str(folder / "kb.db")
    study_file = write_study(folder, tiny_dataset_dir, engine={"backend": "milvus", "uri": uri}, budget={"trials": 2},
                             enqueue=[{"top_k": 2, "retriever": "dense", "chunk_size": 40},
                                      {"top_k": 3, "retriever": "bm25", "chunk_size": 20}])
    assert main(["run", str(study_file), "--no-report"]) == 0
    storage = f"sqlite:///{folder / 'out' / 'tiny' / 'study.db'}"
    loaded = optuna.load_study(study_name="tiny", storage=storage)
    exported = folder / "deploy.yaml"
    assert main(["export", str(study_file), "--trial", "0", "-o", str(exported)]) == 0
    return {"uri": uri, "study_file": study_file, "study": loaded, "export": exported}


def test_the_study_ran_in_the_engine_and_its_collections_are_visible_to_pymilvus(study: dict[str, Any]) -> None:
    from pymilvus import MilvusClient

    trials = study["study"].get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(trials) == 2
    searched = {TrialRecord.from_trial(t).collection for t in trials}
    assert None not in searched and len(searched) == 2  # two chunk sizes: two collections
    visible = MilvusClient(uri=study["uri"]).list_collections()
    assert searched <= set(visible)
    assert study["study"].user_attrs["engine"] == {"backend": "milvus", "uri": study["uri"], "db_name": "",
                                                   "token_env": None, "index": "FLAT", "index_params": {}}


def test_the_export_records_the_engine_and_collection_and_never_a_token(study: dict[str, Any], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    exported = read_export(study["export"])
    trial = TrialRecord.from_trial(study["study"].trials[0])
    assert exported.provenance["engine"]["backend"] == "milvus" and exported.provenance["engine"]["uri"] == study["uri"]
    assert exported.provenance["collection"] == trial.collection
    # a study whose engine needs a token: the export names the variable, never its value
    monkeypatch.setenv(TOKEN_ENV, "root:s3cret-token")
    described = MilvusEngine(backend="milvus", uri="http://root:pw@milvus:19530", token_env=TOKEN_ENV).described()
    assert described["token_env"] == TOKEN_ENV and "s3cret" not in json.dumps(described) and "pw@" not in described["uri"]


def test_a_study_resumed_on_another_engine_is_refused(study: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load(study["study_file"].read_text())
    other = study["study_file"].with_name("memory.yaml")
    other.write_text(yaml.safe_dump({**data, "engine": {"backend": "memory"}, "budget": {"trials": 3}}))
    assert main(["run", str(other), "--no-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert "was run on engine {'backend': 'milvus', 'index': 'FLAT', 'index_params': {}}" in err and len(err.splitlines()) == 1


HOSTILE = 'x""" + open("PWNED", "w").name + """\n# \u2028\'\'\' \\'
"""A prompt and model name that close a docstring, a comment line and a string if pasted raw."""


def test_the_pasted_milvus_search_runs_as_written_in_a_fresh_interpreter_whatever_its_values(
    study: dict[str, Any], tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder
) -> None:
    """Hostile values stay data, and the search loads the collection itself: Milvus Lite opened by a fresh process
    holds it released (this process lets the file go first: one process opens a Lite file at a time)."""
    import subprocess
    import sys

    from milvus_lite.server_manager import server_manager_instance

    settings = RetrievalSettings(retriever="dense", chunk_size=40, top_k=2, candidate_depth=10, query_prompt=HOSTILE)
    provenance = read_export(study["export"]).provenance
    path = write_framework_export(tmp_path / "milvus.yaml",
                                  export_document({**settings.model_dump(), "embedding_model": HOSTILE}, provenance), "milvus")
    assert yaml.safe_load(path.read_text())["native"]["query_embedding"] == {"model": HOSTILE, "prompt": HOSTILE,
                                                                            "normalize": True}
    question = QUESTIONS[0]
    vector = encoder.with_prompt(HOSTILE).encode([question])[0].tolist()
    script = tmp_path / "paste.py"
    script.write_text(_snippet(path.read_text()) + "\n\nimport json, sys\n"
                      "assert EMBEDDING_MODEL == QUERY_PROMPT == json.loads(sys.argv[1])\n"
                      "hits = search(client, sys.argv[2], json.loads(sys.argv[3]))\n"
                      "print(json.dumps([hit['entity']['chunk_id'] for hit in hits]))\n")
    server_manager_instance.release_server(study["uri"])
    pasted = subprocess.run([sys.executable, str(script), json.dumps(HOSTILE), question, json.dumps(vector)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert pasted.returncode == 0, pasted.stderr
    assert not (tmp_path / "PWNED").exists()
    tuner = Retriever(settings, load_dataset(tiny_dataset_dir), engine=MilvusEngine(backend="milvus", uri=study["uri"]))
    assert json.loads(pasted.stdout) == [c.metadata["chunk_id"] for c in tuner.retrieve(question)]


@pytest.mark.parametrize("command", ["eval", "robustness"])
def test_eval_and_robustness_with_an_export_search_the_engine_it_names(
    command: str, study: dict[str, Any], tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tuner.engine import MilvusFirstStage

    searched: list[str] = []
    search_where = MilvusFirstStage.search_where
    monkeypatch.setattr(MilvusFirstStage, "search_where", lambda self, queries, depth, where: (
        searched.append(self.collection.name), search_where(self, queries, depth, where))[1])
    args = [command, str(tiny_dataset_dir), "--config", str(study["export"]), "--json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert f"was measured on milvus ({study['uri']}): searched there" in " ".join(captured.err.split())  # rich wraps it
    assert set(searched) == {read_export(study["export"]).provenance["collection"]}
    on_engine = json.loads(captured.out)
    searched.clear()
    assert main([*args, "--engine", "memory"]) == 0  # the command line's choice wins
    in_memory = json.loads(capsys.readouterr().out)
    assert not searched
    if command == "eval":  # dense under FLAT: the same figures
        assert on_engine["recall_at_k"] == in_memory["recall_at_k"] and on_engine["n"] == in_memory["n"]


@pytest.fixture(scope="module")
def served(study: dict[str, Any], tiny_dataset_dir: Path) -> Iterator[tuple[TestClient, list[str]]]:
    """``tuner serve --engine milvus`` of the export, its app driven in this process (Milvus Lite admits one process
    per file), and what it printed."""
    apps: list[Any] = []
    patch = pytest.MonkeyPatch()
    patch.setattr("tuner.http_guard.serve_on", lambda app, sock: (apps.append(app), sock.close()))
    patch.setattr("signal.signal", lambda *_: None)
    patch.setenv("TUNER_SERVE_TOKEN", WRITE_TOKEN)
    patch.setenv("TUNER_SERVE_API_KEY", API_KEY)
    printed: list[str] = []
    patch.setattr("builtins.print", lambda *parts, **_: printed.append(" ".join(map(str, parts))))
    try:
        assert main(["serve", "--config", str(study["export"]), "--dataset", str(tiny_dataset_dir), "--port", "0",
                     "--engine", "milvus", "--engine-uri", study["uri"]]) == 0
    finally:
        patch.undo()
    with TestClient(apps[0], base_url="http://127.0.0.1") as client:
        _wait_ready(client)
        yield client, printed


def _wait_ready(client: TestClient, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        health = client.get("/healthz")
        if health.status_code == 200:
            return
        assert "failed" not in health.text, health.text
        time.sleep(0.2)
    raise TimeoutError(f"the service was not ready within {seconds:g} s: {health.text}")


def test_serve_on_milvus_searches_the_studys_collection_as_the_library_does(
    served: tuple[TestClient, list[str]], study: dict[str, Any], tiny_dataset_dir: Path
) -> None:
    client, printed = served
    config = client.get("/config").json()
    assert config["engine"]["backend"] == "milvus" and config["engine"]["collection"] == read_export(study["export"]).provenance["collection"]
    assert any("engine backend milvus" in line for line in printed) and not any("note:" in line for line in printed)
    engine = MilvusEngine(backend="milvus", uri=study["uri"])
    library = Retriever.from_config(study["export"], corpus=tiny_dataset_dir, engine=engine)
    memory = Retriever.from_config(study["export"], corpus=tiny_dataset_dir)
    for query in ("How much does the Aurora X200 laptop cost?", "How many countries does Mercury Logistics deliver to?"):
        chunks = client.post("/retrieve", json={"query": query}).json()["chunks"]
        assert [(c["doc_id"], tuple(c["span"])) for c in chunks] == [(c.doc_id, c.span) for c in library.retrieve(query)]
        # dense under FLAT is exact: the engine returns what the memory engine returns, stale versions never
        assert [c["doc_id"] for c in chunks] == [c.doc_id for c in memory.retrieve(query)]
        assert "aurora-x200-2023" not in {c["doc_id"] for c in chunks}


def test_request_filters_and_difys_conditions_run_in_the_engine(served: tuple[TestClient, list[str]],
                                                               tiny_dataset_dir: Path) -> None:
    client, _ = served
    one = client.post("/retrieve", json={"query": "laptop memory", "top_k": 1, "filters": {"doc_id": ["aurora-x210"]}})
    assert [c["doc_id"] for c in one.json()["chunks"]] == ["aurora-x210"]
    laptop = {"logical_operator": "and", "conditions": [{"name": "doc_id", "comparison_operator": "start with",
                                                         "value": "aurora-x21"}]}
    body = {"knowledge_id": tiny_dataset_dir.name, "query": "laptop memory", "metadata_condition": laptop,
            "retrieval_setting": {"top_k": 2, "score_threshold": 0.0}}
    reply = client.post("/retrieval", json=body, headers={"Authorization": f"Bearer {API_KEY}"})
    assert reply.status_code == 200, reply.text
    assert {r["metadata"]["doc_id"] for r in reply.json()["records"]} == {"aurora-x210"}


@pytest.mark.parametrize(("path", "body"), [
    ("/documents", {"documents": [{"doc_id": "x", "title": "X", "text": "The X300 tablet costs $899."}]}),
    ("/documents/delete", {"doc_ids": ["returns"]}),
])
def test_writes_to_an_engine_backed_service_are_refused_with_one_line(served: tuple[TestClient, list[str]], path: str,
                                                                      body: dict[str, Any]) -> None:
    client, _ = served
    reply = client.post(path, json=body, headers={"X-Tuner-Token": WRITE_TOKEN})
    assert reply.status_code == 409, reply.text
    assert reply.json()["error"].startswith("documents live in the milvus collection tuner_")
    assert client.get("/healthz").json()["documents"] == 8


def test_a_config_measured_on_milvus_served_in_memory_says_so(study: dict[str, Any], tiny_dataset_dir: Path) -> None:
    provenance = read_export(study["export"]).provenance
    note = engine_note("deploy.yaml", provenance, MemoryEngine())
    assert note is not None and note.startswith(f"deploy.yaml was measured on milvus ({study['uri']}) and is served in memory")
    assert engine_note("deploy.yaml", provenance, MilvusEngine(backend="milvus", uri="other.db")) is None
    assert engine_note("deploy.yaml", {}, MemoryEngine()) is None  # a hand-written configuration does not say
    with pytest.raises(EngineCorpus):
        Retriever.from_config(study["export"], corpus=tiny_dataset_dir,
                              engine=MilvusEngine(backend="milvus", uri=study["uri"])).delete_documents(["returns"])


def _snippet(text: str) -> str:
    """The Python of a ``--format milvus`` export: its commented lines between the fences."""
    lines = text.splitlines()
    fences = [i for i, line in enumerate(lines) if line == f"# {SNIPPET_FENCE}"]
    return "\n".join(line.removeprefix("#").removeprefix(" ") for line in lines[fences[0] + 1:fences[1]])


def _run_snippet(text: str, question: str, encoder: CachedEncoder, prompt: str) -> list[str]:
    namespace: dict[str, Any] = {}
    exec(compile(_snippet(text), "milvus-export", "exec"), namespace)  # the code a team pastes, as written
    vector = encoder.with_prompt(prompt).encode([question])[0].tolist()
    return [hit["entity"]["chunk_id"] for hit in namespace["search"](namespace["client"], question, vector)]


QUESTIONS = ("How much does the Aurora X200 laptop cost?", "How many countries does Mercury Logistics deliver to?")


@pytest.mark.parametrize("trial", [0, 1])
def test_the_milvus_export_is_the_trials_search_and_its_code_returns_the_trials_chunks(
    study: dict[str, Any], trial: int, tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder
) -> None:
    path = tmp_path / "milvus.yaml"
    assert main(["export", str(study["study_file"]), "--trial", str(trial), "--format", "milvus", "-o", str(path)]) == 0
    text = path.read_text()
    native = yaml.safe_load(text)["native"]
    record = TrialRecord.from_trial(study["study"].trials[trial])
    settings = RetrievalSettings.model_validate(record.settings)
    search = native["search"]
    assert native["collection"] == record.collection and native["connection"]["uri"] == study["uri"]
    assert search["anns_field"] == {"dense": "dense", "bm25": "sparse"}[settings.retriever]
    assert search["param"] == ({"metric_type": "COSINE"} if settings.retriever == "dense" else {"metric_type": "BM25"})
    assert (native["limit"], native["top_k"]) == (settings.candidate_depth, settings.top_k)
    assert native["filter"] == filter_expression(settings) == "conflict == false"
    assert "| dedupe |" not in text and "# | setting | value | why |" in text
    served = Retriever.from_config(path, corpus=tiny_dataset_dir, engine=MilvusEngine(backend="milvus", uri=study["uri"]))
    for question in QUESTIONS:
        expected = [c.metadata["chunk_id"] for c in served.retrieve(question)]
        assert _run_snippet(text, question, encoder, settings.query_prompt) == expected


def test_a_hybrid_rrf_export_runs_as_tunners_first_stage(study: dict[str, Any], tmp_path: Path, tiny_dataset_dir: Path,
                                                        encoder: CachedEncoder) -> None:
    settings = RetrievalSettings(retriever="hybrid", fusion="rrf", rrf_k=20, chunk_size=40, candidate_depth=10, top_k=3)
    provenance = {**read_export(study["export"]).provenance, "trial": 7}
    path = write_framework_export(tmp_path / "rrf.yaml", export_document(settings.model_dump(), provenance), "milvus")
    native = yaml.safe_load(path.read_text())["native"]
    assert native["hybrid_search"]["ranker"] == {"class": "RRFRanker", "args": [20]}
    engine = MilvusEngine(backend="milvus", uri=study["uri"])
    tuner = Retriever(settings, load_dataset(tiny_dataset_dir), engine=engine)
    for question in QUESTIONS:
        assert _run_snippet(path.read_text(), question, encoder, "") == [c.metadata["chunk_id"] for c in tuner.retrieve(question)]


def _native(tmp_path: Path, engine: dict[str, Any], **values: Any) -> tuple[dict[str, Any], set[str]]:
    provenance = {"trial": 2, "study": "kb", "engine": {"backend": "milvus", "uri": "http://milvus:19530", **engine},
                  "collection": "tuner_abc"}
    settings = RetrievalSettings(**values).model_dump()
    doc = yaml.safe_load(write_framework_export(tmp_path / "m.yaml", export_document(settings, provenance), "milvus").read_text())
    return doc["native"], {row["setting"] for row in doc["not_translated"]}


def test_the_milvus_export_sends_the_index_knobs_and_lists_what_tuner_does_after_the_search(tmp_path: Path) -> None:
    native, rows = _native(tmp_path, {"index": "HNSW", "token_env": TOKEN_ENV}, retriever="hybrid", hybrid_weight=0.7,
                           hnsw_ef=8, candidate_depth=30, rerank_strength=0.4, dedupe=0.9, version_policy="latest",
                           relevance_threshold=0.3, metadata_filters={"cur": {"status": "current"}}, metadata_filter="cur")
    dense, bm25 = native["hybrid_search"]["requests"]
    assert dense["param"] == {"metric_type": "COSINE", "params": {"ef": 30}}  # ef raised to the limit
    assert bm25 == {"anns_field": "sparse", "param": {"metric_type": "BM25"}, "data": "question"}
    assert native["hybrid_search"]["ranker"] == {"class": "WeightedRanker", "args": [0.7, 0.3], "kwargs": {"norm_score": True}}
    assert native["filter"] == '(conflict == false) and ((metadata["status"] == "current"))'
    assert native["connection"]["token_env"] == TOKEN_ENV
    assert rows == {"hybrid_weight", "relevance_threshold", "rerank_strength", "reranker", "version_policy", "dedupe"}
    ivf, rows = _native(tmp_path, {"index": "IVF_FLAT"}, retriever="dense", ivf_nprobe=16, relevance_threshold=0.35)
    assert ivf["search"]["param"] == {"metric_type": "COSINE", "params": {"nprobe": 16, "radius": 0.35}}
    assert rows == set()  # the threshold on a plain cosine is the range search's radius


def test_a_trial_measured_in_memory_has_no_milvus_export(tmp_path: Path) -> None:
    document = export_document(RetrievalSettings().model_dump(), {"trial": 1, "study": "demo", "engine": {"backend": "memory"}})
    with pytest.raises(UserError, match="--format milvus: trial 1 of study 'demo' was measured in memory"):
        write_framework_export(tmp_path / "m.yaml", document, "milvus")
    assert not (tmp_path / "m.yaml").exists()


def test_a_configured_filter_is_the_trials_expression_and_a_requests_filter_adds_chunk_ids(
    study: dict[str, Any], tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tuner.engine import MilvusFirstStage

    settings = RetrievalSettings(retriever="dense", chunk_size=40, candidate_depth=10, top_k=3, metadata_filter="laptops",
                                 metadata_filters={"laptops": {"doc_id": ["aurora-x200", "aurora-x210", "warranty"]}})
    dataset = load_dataset(tiny_dataset_dir)
    engine, memory = Retriever(settings, dataset, engine=MilvusEngine(backend="milvus", uri=study["uri"])), Retriever(settings, dataset)
    sent: list[str | None] = []
    search_where = MilvusFirstStage.search_where
    monkeypatch.setattr(MilvusFirstStage, "search_where", lambda self, queries, depth, where: (
        sent.append(where), search_where(self, queries, depth, where))[1])
    for filters in (None, {"doc_id": "warranty"}, {"doc_id": "returns"}):
        got = [(c.doc_id, c.span) for c in engine.retrieve("How much memory does the laptop have?", filters=filters)]
        assert got == [(c.doc_id, c.span) for c in memory.retrieve("How much memory does the laptop have?", filters=filters)]
    configured = filter_expression(settings)
    assert sent[0] == configured and not re.search(r"\bid\b", configured)
    assert sent[1] is not None and sent[1].startswith(f"({configured}) and (id in [")
    assert sent[2] is not None and sent[2].startswith(f"({configured}) and (id in [")  # no chunk of returns is a laptop's


def test_a_retriever_on_an_attached_collection_filters_by_primary_keys_and_refuses_writes(
    study: dict[str, Any], tiny_dataset_dir: Path, embeddings: EmbeddingContext
) -> None:
    from tests.engine_tests.test_attach import FIELDS, _team_collection
    from tuner.engine import connect
    from tuner.retrieval import RetrievalPipeline

    settings = RetrievalSettings(retriever="dense", top_k=3)
    dataset = load_dataset(tiny_dataset_dir)
    table = RetrievalPipeline(dataset, embeddings=embeddings).table(settings)
    rows = [{"pk": f"chunk-{i}", "content": table.passages[i], "source_doc": table.chunks[i].doc_id, "meta": {"team": "docs"},
             "embedding": table.embeddings()[i].tolist()} for i in range(len(table)) if not table.chunks[i].conflicting]
    _team_collection(connect(MilvusEngine(backend="milvus", uri=study["uri"])), "served_team_kb", rows, table.encoder.inner.dim)
    attached = MilvusEngine(backend="milvus", uri=study["uri"], collection="served_team_kb", fields=FIELDS)
    served, memory = Retriever(settings, dataset, engine=attached), Retriever(settings, dataset)
    question = "How long is the laptop warranty?"
    assert [c.doc_id for c in served.retrieve(question)] == [c.doc_id for c in memory.retrieve(question)]
    found = {c.doc_id for c in served.retrieve(question, filters={"doc_id": ["returns", "shipping"]})}
    assert found and found <= {"returns", "shipping"}
    with pytest.raises(EngineCorpus, match="served_team_kb, attached and never written by tuner"):
        served.add_documents([])
    provenance = {"engine": {**attached.described()}}
    # served from the team's collection itself, at the address the deployment gives, through the recorded mapping
    again = serving_engine(MilvusEngine(backend="milvus", uri=study["uri"]), provenance)
    assert (again.collection, again.fields) == ("served_team_kb", attached.fields)
    note = engine_note("deploy.yaml", provenance, MemoryEngine())
    assert note is not None and "the attached collection served_team_kb, the served ones the dataset's" in note
    older = {"engine": {k: v for k, v in provenance["engine"].items() if k != "fields"}}  # exported before the mapping
    with pytest.raises(UserError, match="does not record its field mapping"):
        serving_engine(MilvusEngine(backend="milvus", uri=study["uri"]), older)
    document = export_document(settings.model_dump(), {**older, "collection": "served_team_kb", "trial": 0, "study": "kb"})
    with pytest.raises(UserError, match="searched the attached collection served_team_kb, and its study does not record"):
        write_framework_export(study["export"].with_name("attached.yaml"), document, "milvus")
