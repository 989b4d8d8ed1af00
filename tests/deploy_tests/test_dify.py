"""Dify's External Knowledge API both ways, through a real ``tuner serve``: a study's exported configuration served at
``POST /retrieval`` (auth, errors, retrieval_setting, metadata_condition), and evaluated back through the contract by the
``external`` backend, whose recall@k equals the in-process evaluation case by case."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.net import TcpProxy, serving
from tuner.cli import main
from tuner.dataset import Document, load_dataset
from tuner.deploy import Retriever
from tuner.errors import FatalBackendError
from tuner.evaluation import evaluate_retrieval
from tuner.export import read_export
from tuner.external import ExternalClient, ExternalConfig, ExternalPipeline
from tuner.llm import CallCache
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytestmark = pytest.mark.slow  # the module's server (or study) takes tens of seconds to start

API_KEY = "test-dify-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}


@pytest.fixture(scope="module")
def exported(tiny_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The configuration a one-trial study measured, exported as tuner export writes it."""
    folder = tmp_path_factory.mktemp("dify-study")
    (folder / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 4}}))
    study = {"name": "tiny", "dataset": str(tiny_dataset_dir), "search_space": "space.yaml",
             "settings": {"candidate_depth": 8, "chunk_size": 32, "retriever": "hybrid", "rerank_strength": 0.3},
             "budget": {"trials": 1}, "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0},
             "enqueue": [{"top_k": 4}], "output": "out"}
    (folder / "study.yaml").write_text(yaml.safe_dump(study))
    assert main(["run", str(folder / "study.yaml"), "--no-report"]) == 0
    assert main(["export", str(folder / "study.yaml"), "--trial", "0", "-o", str(folder / "deploy.yaml")]) == 0
    return folder / "deploy.yaml"


@pytest.fixture(scope="module")
def server(exported: Path, tiny_dataset_dir: Path) -> Iterator[str]:
    with serving(["--knowledge", f"tiny={exported}:{tiny_dataset_dir}"], TUNER_SERVE_API_KEY=API_KEY) as (url, output):
        yield url
    assert API_KEY not in output[0]  # the key chosen by the environment is never printed or logged


def test_the_knowledge_id_of_config_and_dataset_is_the_dataset_folders_name() -> None:
    import argparse

    from tuner.commands.serve import knowledge_bases
    from tuner.errors import UserError

    given = argparse.Namespace(config="deploy.yaml", dataset="data/shop/", knowledge=[])
    assert knowledge_bases(given) == {"shop": ("deploy.yaml", "data/shop/")}
    many = argparse.Namespace(config=None, dataset=None, knowledge=["shop=a.yaml:data/shop", "hr=b.env:demo-zh"])
    assert knowledge_bases(many) == {"shop": ("a.yaml", "data/shop"), "hr": ("b.env", "demo-zh")}
    for bad in (["shop=a.yaml"], ["=a.yaml:d"], ["s=a:d", "s=b:e"]):
        with pytest.raises(UserError, match="--knowledge"):
            knowledge_bases(argparse.Namespace(config=None, dataset=None, knowledge=bad))


def _ask(server: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    return httpx.post(f"{server}/retrieval", json=body, headers=AUTH if headers is None else headers, timeout=60)


def _body(query: str = "How long is the laptop warranty?", top_k: int = 10, threshold: float = 0.0,
          knowledge_id: str = "tiny", **more: Any) -> dict[str, Any]:
    return {"knowledge_id": knowledge_id, "query": query,
            "retrieval_setting": {"top_k": top_k, "score_threshold": threshold}, **more}


def test_records_carry_scores_in_0_1_metadata_objects_and_the_tuned_settings(server: str, exported: Path) -> None:
    tuned = read_export(exported).settings
    reply = _ask(server, _body(top_k=10))
    assert reply.status_code == 200
    records = reply.json()["records"]
    assert 0 < len(records) <= tuned.top_k  # Dify's top_k caps the tuned one; it never widens it
    for record in records:
        assert set(record) == {"content", "score", "title", "metadata"} and 0.0 <= record["score"] <= 1.0
        assert isinstance(record["metadata"], dict) and record["metadata"]["doc_id"]
        used = record["metadata"]["tuner"]
        assert (used["top_k"], used["tuned_top_k"], used["relevance_threshold"], used["trial"]) == (
            tuned.top_k, tuned.top_k, tuned.relevance_threshold, 0)
    assert [r["score"] for r in records] == sorted((r["score"] for r in records), reverse=True)
    two = _ask(server, _body(top_k=2)).json()["records"]
    assert [r["content"] for r in two] == [r["content"] for r in records[:2]] and two[0]["metadata"]["tuner"]["top_k"] == 2
    # a score_threshold above 0 drops what scores below it; above every score: no match is {"records": []}
    cut = (records[0]["score"] + records[-1]["score"]) / 2
    assert [r["score"] for r in _ask(server, _body(threshold=cut)).json()["records"]] == [
        r["score"] for r in records if r["score"] >= cut]
    assert _ask(server, _body(threshold=1.0)).json() == {"records": []}


@pytest.mark.parametrize("headers,code", [
    ({}, 1001), ({"Authorization": API_KEY}, 1001), ({"Authorization": "Basic dGVzdA=="}, 1001),
    ({"Authorization": "Bearer"}, 1001), ({"Authorization": "Bearer a b"}, 1001), ({"Authorization": "Bearer wrong-key"}, 1002),
    ({"Authorization": f"Bearer {API_KEY}x"}, 1002),
])
def test_a_missing_malformed_or_wrong_key_is_403_with_the_contract_code(server: str, headers: dict[str, str], code: int) -> None:
    reply = _ask(server, _body(), headers)
    assert reply.status_code == 403 and reply.json()["error_code"] == code and reply.json()["error_msg"]


@pytest.mark.parametrize("body,status,message", [
    (_body(knowledge_id="nope"), 404, "The knowledge does not exist: 'nope'"),
    (_body(top_k=0), 400, "retrieval_setting.top_k"),
    ({"knowledge_id": "tiny", "query": "x", "retrieval_setting": {"top_k": "3", "score_threshold": 0}}, 400,
     "retrieval_setting.top_k: Input should be a valid integer"),
    (_body(threshold=1.5), 400, "retrieval_setting.score_threshold"),
    ({"knowledge_id": "tiny", "query": "x"}, 400, "retrieval_setting: Field required"),
    (_body(metadata_condition={"conditions": [{"name": "team", "comparison_operator": "like", "value": "x"}]}), 400,
     "unknown comparison_operator 'like'"),
    (_body(metadata_condition={"conditions": [{"name": "price", "comparison_operator": ">", "value": "cheap"}]}), 400,
     "comparison_operator '>' needs a number"),
    (_body(metadata_condition={"logical_operator": "xor", "conditions": []}), 400, "metadata_condition.logical_operator"),
])
def test_an_unknown_knowledge_or_a_bad_body_is_one_line(server: str, body: dict[str, Any], status: int, message: str) -> None:
    reply = _ask(server, body)
    assert reply.status_code == status, reply.text
    assert message in reply.json()["error_msg"] and "\n" not in reply.json()["error_msg"]
    assert reply.json()["error_code"] == (2001 if status == 404 else 400)


def test_malformed_json_is_400(server: str) -> None:
    reply = httpx.post(f"{server}/retrieval", content=b"{not json", headers={**AUTH, "Content-Type": "application/json"})
    assert reply.status_code == 400 and "malformed JSON" in reply.json()["error_msg"]


def test_metadata_condition_filters_documents_before_the_first_stage(server: str) -> None:
    laptop = {"logical_operator": "and", "conditions": [{"name": "doc_id", "comparison_operator": "start with",
                                                         "value": "aurora-x21"}]}
    records = _ask(server, _body("laptop memory", metadata_condition=laptop)).json()["records"]
    assert records and {r["metadata"]["doc_id"] for r in records} <= {"aurora-x210"}
    nothing = {"conditions": [{"name": "team", "comparison_operator": "not empty"}]}  # no tiny document has a team
    assert _ask(server, _body(metadata_condition=nothing)).json() == {"records": []}


def test_conditions_read_document_metadata_in_chinese_and_english(embeddings: Any) -> None:
    documents = [
        Document("faq-old", "退货政策：七天内可退货。", "退货政策", {"team": "客服部", "date": "2023年1月1日", "version": 1}),
        Document("faq-new", "退货政策：十五天内可退货。", "退货政策", {"team": "客服部", "date": "2024-06-01", "version": 2}),
        Document("hr", "Annual leave is 15 days.", "Leave policy", {"team": "hr", "date": "2024-02-01", "version": 3}),
    ]
    from tuner.external import MetadataCondition

    retriever = Retriever.from_export(read_export_settings(RetrievalSettings(top_k=3, retriever="bm25", chunk_size=64)),
                                      documents, embeddings=embeddings)

    def ids(condition: dict[str, Any]) -> list[str]:
        parsed = MetadataCondition.model_validate(condition)
        return sorted(c.doc_id for c in retriever.retrieve("退货政策 leave", conditions=parsed.parsed(),
                                                            logical=parsed.logical_operator))

    assert ids({"conditions": [{"name": "date", "comparison_operator": "after", "value": "2024年1月1日"}]}) == ["faq-new", "hr"]
    assert ids({"conditions": [{"name": "team", "comparison_operator": "is", "value": "客服部"},
                               {"name": "version", "comparison_operator": "≥", "value": 2}]}) == ["faq-new"]
    assert ids({"logical_operator": "or", "conditions": [{"name": "team", "comparison_operator": "is", "value": "hr"},
                                                         {"name": "version", "comparison_operator": "<", "value": 2}]}) == ["faq-old", "hr"]


def read_export_settings(settings: RetrievalSettings) -> Any:
    from tuner.export import ExportedConfig

    return ExportedConfig(settings, {}, "test")


def test_recall_through_the_contract_equals_tuner_eval_in_process_case_by_case(
        server: str, exported: Path, tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], embeddings: Any) -> None:
    monkeypatch.setenv("TUNER_EXTERNAL_API_KEY", API_KEY)
    dataset = load_dataset(tiny_dataset_dir)
    tuned = read_export(exported).settings
    local = RetrievalPipeline(dataset, embeddings=embeddings)
    client = ExternalClient(ExternalConfig(url=server, knowledge_id="tiny"), CallCache(tmp_path / "calls.sqlite"))
    external = ExternalPipeline(dataset, client, embeddings=embeddings)
    for k in range(1, tuned.top_k + 1):
        settings = tuned.model_copy(update={"top_k": k})
        inside, through = evaluate_retrieval(local, settings), evaluate_retrieval(external, settings)
        assert through.per_case == inside.per_case, k  # every metric, case by case
        assert external.matching.unmatched == 0 and external.matching.records > 0
    # the command line prints the same JSON keys as tuner eval, with the service and its matching beside them
    assert main(["eval", str(tiny_dataset_dir), "--external", server, "--knowledge-id", "tiny", "--top-k", "2", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert main(["eval", str(tiny_dataset_dir), "--config", str(exported), "--top-k", "2", "--json"]) == 0
    in_process = json.loads(capsys.readouterr().out)
    assert set(in_process) <= set(printed) | {"settings"} and printed["recall_at_k"] == in_process["recall_at_k"]
    assert printed["external"]["unmatched"] == 0 and printed["external"]["knowledge_id"] == "tiny"
    assert set(printed["conflict_exposure"]) == {"not_measured"} and "value" in in_process["conflict_exposure"]
    assert API_KEY not in json.dumps(printed)


def test_calls_are_cached_retried_and_an_unreachable_service_is_one_fatal_line(
        server: str, tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embeddings: Any) -> None:
    monkeypatch.setenv("TUNER_EXTERNAL_API_KEY", API_KEY)
    dataset = load_dataset(tiny_dataset_dir)
    port = int(server.rsplit(":", 1)[1])
    settings = RetrievalSettings(top_k=3)
    with TcpProxy(("127.0.0.1", port)) as proxy:
        config = ExternalConfig(url=f"http://127.0.0.1:{proxy.port}", knowledge_id="tiny", max_retries=1, backoff_base=0.01)
        first = ExternalPipeline(dataset, ExternalClient(config, CallCache(tmp_path / "c.sqlite")), embeddings=embeddings)
        expected = evaluate_retrieval(first, settings).per_case
        assert first.client.usage.snapshot().calls == len(dataset.golden)
        proxy.down()  # the service is gone: a rerun costs nothing and needs no service
        again = ExternalPipeline(dataset, ExternalClient(config, CallCache(tmp_path / "c.sqlite")), embeddings=embeddings)
        assert evaluate_retrieval(again, settings).per_case == expected
        assert again.client.usage.snapshot().calls == 0 and again.client.usage.snapshot().cache_hits == len(dataset.golden)
        fresh = ExternalClient(config, CallCache(tmp_path / "other.sqlite"))
        with pytest.raises(FatalBackendError, match="connection failed") as info:
            fresh.records("warranty", 3, 0.0)
        assert "after 2 attempts" in str(info.value) and API_KEY not in str(info.value)
        assert fresh.usage.snapshot().retries == 1
    monkeypatch.setenv("TUNER_EXTERNAL_API_KEY", "not-the-key")
    rejected = ExternalClient(ExternalConfig(url=server, knowledge_id="tiny"), None)
    with pytest.raises(FatalBackendError, match="HTTP 403") as refused:
        rejected.records("warranty", 3, 0.0)
    assert "not-the-key" not in str(refused.value) and rejected.usage.snapshot().retries == 0  # a rejected key is not retried


def test_a_study_tunes_the_served_configuration_through_the_contract(
        server: str, exported: Path, tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        embeddings: Any) -> None:
    import optuna

    from tuner.front import StudyRecord, TrialRecord

    monkeypatch.setenv("SERVED_KEY", API_KEY)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump({
        "top_k": {"type": "int", "low": 1, "high": 4}, "relevance_threshold": {"type": "float", "low": 0.0, "high": 0.5,
                                                                              "step": 0.25},
        "chunk_size": {"type": "categorical", "choices": [20, 40]}}))  # acts on no service: left out of the search
    study = {"name": "served", "dataset": str(tiny_dataset_dir), "search_space": "space.yaml",
             "retriever": {"backend": "external", "url": server, "knowledge_id": "tiny", "api_key_env": "SERVED_KEY"},
             "budget": {"trials": 3}, "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0},
             "sampler": {"name": "random", "seed": 3}, "enqueue": [{"top_k": 2}], "output": "out"}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study))
    assert main(["run", str(tmp_path / "study.yaml"), "--no-report"]) == 0
    stored = optuna.load_study(study_name="served", storage=f"sqlite:///{tmp_path / 'out' / 'served' / 'study.db'}")
    record = StudyRecord.from_study(stored)
    assert record.retrieval is not None and "hard_mode: inject" in record.retrieval["v3"] and API_KEY not in str(record)
    from tuner.report import render_report

    page = render_report(stored)  # the report says what was measured and how v3 was made
    assert "only top_k, score_threshold searched" in page and "injected into the context the service returned" in page
    dataset = load_dataset(tiny_dataset_dir)
    local = RetrievalPipeline(dataset, embeddings=embeddings)
    tuned = read_export(exported).settings
    complete = [t for t in stored.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert complete
    for trial in complete:
        assert trial.params["chunk_size"] == 256  # fixed at the study's value: one choice, never searched
        trial_record = TrialRecord.from_trial(trial)
        # the service's chunks are not tuner's to tell conflicting: exposure not measured, never a 0
        assert trial_record.exposed_cases is None and trial_record.exposure_not_measured is not None
        asked = RetrievalSettings(**trial_record.settings)
        # what the service ran: the served configuration, top_k capped by the tuned one, its threshold raised
        served = tuned.model_copy(update={"top_k": min(asked.top_k, tuned.top_k),
                                          "relevance_threshold": max(asked.relevance_threshold, tuned.relevance_threshold)})
        expected = evaluate_retrieval(local, served).per_case["recall_at_k"]
        assert trial_record.recall_cases == tuple(expected[[c.id for c in dataset.golden].index(case)]
                                                  for case in stored.user_attrs["case_order"])


@pytest.mark.parametrize("key", ["variants", "noise"])
def test_an_external_study_injects_v3_and_refuses_in_index(tmp_path: Path, tiny_dataset_dir: Path, key: str) -> None:
    from tuner.errors import UserError
    from tuner.study import load_study_file

    study = {"name": "s", "dataset": str(tiny_dataset_dir),
             "retriever": {"backend": "external", "url": "http://127.0.0.1:9/api/v1/dify", "knowledge_id": "kb"}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study))
    assert load_study_file(tmp_path / "study.yaml").config.variants.hard_mode == "inject"
    (tmp_path / "study.yaml").write_text(yaml.safe_dump({**study, key: {"hard_mode": "in_index"}}))
    with pytest.raises(UserError, match=f"study.yaml: {key}.hard_mode: an external retriever needs inject"):
        load_study_file(tmp_path / "study.yaml")
    (tmp_path / "study.yaml").write_text(yaml.safe_dump({**study, "retriever": {**study["retriever"], "match": "body"}}))
    with pytest.raises(UserError, match="retriever.match: must be metadata.<key>, title or content"):
        load_study_file(tmp_path / "study.yaml")


def test_without_a_key_in_the_environment_serve_prints_a_new_one_once(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    import re

    from tests.net import free_port, start_serve, wait_until_ready
    from tuner.export import export_document, write_export

    # BM25: the key is the service's, whatever it retrieves with, and this server then loads no embedding model
    config = write_export(tmp_path / "deploy.yaml", export_document(
        RetrievalSettings(top_k=3, chunk_size=32, retriever="bm25").model_dump(), {"study": "tiny", "trial": 0}))
    port = free_port()
    process = start_serve(["--config", str(config), "--dataset", str(tiny_dataset_dir), "--port", str(port)],
                          TUNER_SERVE_API_KEY="")
    url = f"http://127.0.0.1:{port}"
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        key = next(m.group(1) for line in lines if (m := re.search(r"'Authorization: Bearer (\S+)'", line)))
        wait_until_ready(process, url)
        knowledge_id = tiny_dataset_dir.name  # --config with --dataset: the dataset folder's name
        reply = _ask(url, _body(knowledge_id=knowledge_id), {"Authorization": f"Bearer {key}"})
        assert reply.status_code == 200 and reply.json()["records"]
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert ("".join(lines) + out + err).count(key) == 1 and len(key) >= 32


@pytest.mark.parametrize("flags,message", [
    (["--external", "http://127.0.0.1:9"], "--external and --knowledge-id go together"),
    (["--external", "ftp://x", "--knowledge-id", "kb"], "--external must start with http:// or https://"),
    (["--external", "http://127.0.0.1:9", "--knowledge-id", "kb", "--chunk-size", "64"], "--chunk-size: a service is asked only"),
    (["--external", "http://127.0.0.1:9", "--knowledge-id", "kb", "--match", "body"], "--match must be metadata.<key>"),
])
def test_eval_external_flags_are_checked_before_any_request(tiny_dataset_dir: Path, flags: list[str], message: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tiny_dataset_dir), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_records_are_matched_by_metadata_title_or_content(tiny_dataset_dir: Path) -> None:
    from tuner.external import UNMATCHED, Record, RecordMatcher

    dataset = load_dataset(tiny_dataset_dir)
    doc = dataset.corpus[0]
    by_id, by_key = RecordMatcher(dataset, "metadata.doc_id"), RecordMatcher(dataset, "metadata.source_id")
    assert by_id.doc_id(Record(content="x", metadata={"doc_id": doc.doc_id})) == doc.doc_id
    assert by_id.doc_id(Record(content="x", metadata={"doc_id": "not-in-the-golden-set"})) == UNMATCHED
    assert by_id.doc_id(Record.model_validate({"content": "x", "metadata": None})) == UNMATCHED  # null metadata: {}
    assert by_key.doc_id(Record(content="x", metadata={"source_id": doc.doc_id})) == doc.doc_id
    assert RecordMatcher(dataset, "title").doc_id(Record(content="x", title=doc.title)) == doc.doc_id
    # content: the document whose text holds the record's, whitespace and full-width forms normalized
    middle = doc.text[5:40]
    spaced = "  " + middle.replace(" ", "\n ") + " "
    content = RecordMatcher(dataset, "content")
    assert content.doc_id(Record(content=spaced)) == doc.doc_id
    assert content.doc_id(Record(content=middle.translate({ord(c): ord(c) + 0xFEE0 for c in "0123456789"}))) == doc.doc_id
    assert content.doc_id(Record(content="nothing like any document")) == UNMATCHED
    from dataclasses import replace

    twins = replace(dataset, corpus=(*dataset.corpus, Document("twin", "Another text.", doc.title, {})))
    assert RecordMatcher(twins, "title").doc_id(Record(content="x", title=doc.title)) == UNMATCHED  # ambiguous: neither
