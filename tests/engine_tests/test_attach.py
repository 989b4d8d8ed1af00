"""Attach mode on Milvus Lite: a collection the team already has (made here with pymilvus, its own field names and
string primary keys) searched as tuner's own is, read and never written; faults as one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from tuner.cli import main  # noqa: E402
from tuner.dataset import load_dataset  # noqa: E402
from tuner.embedding import EmbeddingContext  # noqa: E402
from tuner.engine import MilvusEngine, MilvusPipeline, analyzer_params, attach, connect  # noqa: E402
from tuner.engine._collections import load  # noqa: E402
from tuner.errors import UserError  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402

TEAM = "team_kb"
FIELDS = {"text": "content", "vector": "embedding", "doc_id": "source_doc", "metadata": "meta", "sparse": "content_sparse"}


def _team_collection(client: Any, name: str, rows: list[dict[str, Any]], dim: int, index: str = "FLAT") -> None:
    """A collection as a team would make it: other field names, a string primary key, BM25 over its text."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("content", DataType.VARCHAR, max_length=8192, enable_analyzer=True,
                     analyzer_params=analyzer_params("en"))
    schema.add_field("source_doc", DataType.VARCHAR, max_length=256)
    schema.add_field("meta", DataType.JSON)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("content_sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="content_bm25", function_type=FunctionType.BM25, input_field_names=["content"],
                                 output_field_names=["content_sparse"]))
    indexes = client.prepare_index_params()
    indexes.add_index("embedding", index_type=index, metric_type="COSINE")
    indexes.add_index("content_sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection(name, schema=schema, index_params=indexes)
    client.insert(name, rows)
    client.flush(name)


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> MilvusEngine:
    """A Lite file holding the team's collection of the tiny corpus (tuner's chunks of it, rows in shuffled order)
    and a second one of 8-dimensional vectors."""
    engine = MilvusEngine(backend="milvus", uri=str(tmp_path_factory.mktemp("attach") / "kb.db"))
    table = RetrievalPipeline(load_dataset(tiny_dataset_dir), embeddings=embeddings).table(RetrievalSettings())
    vectors = table.embeddings()
    order = np.random.default_rng(0).permutation(len(table))
    rows = [{"pk": f"chunk-{i}", "content": table.passages[i], "source_doc": table.chunks[i].doc_id,
             "meta": {"team": "docs"}, "embedding": vectors[i].tolist()}
            for i in order.tolist() if not table.chunks[i].conflicting]
    client = connect(engine)
    _team_collection(client, TEAM, rows, vectors.shape[1])
    _team_collection(client, "team_small", [{**row, "embedding": [1.0] * 8} for row in rows], 8)
    _team_collection(client, "team_empty", [], vectors.shape[1])
    # another model of the same dimension: the right vectors with their components permuted (another basis)
    permuted = np.random.default_rng(1).permutation(vectors.shape[1])
    _team_collection(client, "team_other_model", [{**row, "embedding": np.asarray(row["embedding"])[permuted].tolist()}
                                                  for row in rows], vectors.shape[1])
    _team_collection(client, HOSTILE, [{**row, "pk": f'{row["pk"]} "q" \\ \' ) \x01\b\t', "meta": HOSTILE_META.get(
        row["source_doc"], row["meta"])} for row in rows], vectors.shape[1])
    return engine


HOSTILE = "team_hostile"
"""The team's collection again, its keys holding quotes, a backslash, a parenthesis and control characters, its
metadata a list, a JSON string and 60 KB of JSON for three documents."""
HOSTILE_META: dict[str, Any] = {"shipping": ["a", "list"], "returns": json.dumps({"team": "docs"}),
                                "warranty": {"team": "docs", "blob": "x" * 60_000}}


@pytest.mark.parametrize("retriever", ["dense", "bm25"])
def test_keys_and_metadata_a_team_could_have_are_read_and_filtered(lite: MilvusEngine, tiny_dataset_dir: Path,
                                                                    embeddings: EmbeddingContext, retriever: str) -> None:
    # issue 54 §2.5: keys with " \ ' ) and control characters go into the page query and the filter's key list
    # escaped; a JSON list is no metadata, a JSON string holding an object is its object, 60 KB rows page by size
    dataset = load_dataset(tiny_dataset_dir)
    kept = ["aurora-x200", "aurora-x210", "returns", "warranty"]
    settings = RetrievalSettings(retriever=retriever, candidate_depth=4, top_k=4, metadata_filter="team",
                                 metadata_filters={"team": {"team": "docs", "doc_id": [*kept, "shipping"]}})
    found = {}
    for collection in (TEAM, HOSTILE):
        pipeline = MilvusPipeline(dataset, _attached(lite, collection), embeddings=embeddings)
        hits, table = pipeline.candidates(settings), pipeline.table(settings)
        found[collection] = [[table.passages[i] for i in row if i >= 0] for row in hits.indices]
        assert pipeline.metadata_of("returns") == {"team": "docs"}
    # the same rows but for the list-metadata document's, which the filter drops there: the team's ranking without them
    shipping = _passages_of(dataset, "shipping")
    expected = [[p for p in row if p not in shipping] for row in found[TEAM]]
    assert any(len(e) < len(row) for e, row in zip(expected, found[TEAM]))
    assert [row[:len(e)] for row, e in zip(found[HOSTILE], expected)] == expected


def test_rows_by_keys_reads_only_the_rows_named(lite: MilvusEngine) -> None:
    from tuner.engine._attach import rows_by_keys

    client, engine = connect(lite), _attached(lite, HOSTILE)
    schema = attach(client, engine)
    load(client, HOSTILE)
    everything = client.query(HOSTILE, filter="", output_fields=["pk", "source_doc"], limit=1000)
    by_doc = rows_by_keys(client, schema, "source_doc", ["returns", 'no "such" doc\\'], ["pk", "source_doc"])
    assert sorted(r["pk"] for r in by_doc) == sorted(r["pk"] for r in everything if r["source_doc"] == "returns")
    keys = sorted(r["pk"] for r in everything)[:3]  # keys holding " \ ' ) and control characters
    assert [r["pk"] for r in rows_by_keys(client, schema, "pk", keys, ["pk"])] == keys


def _passages_of(dataset: Any, doc_id: str) -> set[str]:
    return {c.passage for c in RetrievalPipeline(dataset).table(RetrievalSettings()).chunks if c.doc_id == doc_id}


def test_a_collection_of_another_model_is_refused_before_any_trial(lite: MilvusEngine, tiny_dataset_dir: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # issue 52 §5: the same dimension, another model's vectors: its texts embedded again are far from them
    assert main(["eval", str(tiny_dataset_dir), "--retriever", "dense", "--json", *_flags(lite, "team_other_model")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the reading's progress line
    assert err.startswith("tuner: error: engine: collection team_other_model field embedding was not embedded by")
    mean = float(err.split("mean cosine of ")[1].split()[0])
    assert mean < 0.5 and "≥ 0.95" in err


def test_an_empty_collection_is_one_line(lite: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> None:
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), _attached(lite, "team_empty"), embeddings=embeddings)
    with pytest.raises(UserError, match="collection team_empty at .* holds no rows"):
        pipeline.candidates(RetrievalSettings(retriever="dense"))


def _attached(lite: MilvusEngine, collection: str = TEAM, index: str = "FLAT", **fields: Any) -> MilvusEngine:
    return MilvusEngine.model_validate({**lite.model_dump(), "collection": collection, "index": index,
                                        "fields": {k: v for k, v in {**FIELDS, **fields}.items() if v is not None}})


def _flags(lite: MilvusEngine, collection: str = TEAM) -> list[str]:
    return ["--engine", "milvus", "--engine-uri", lite.uri, "--engine-collection", collection, "--engine-fields",
            ",".join(f"{role}={field}" for role, field in FIELDS.items())]


def test_eval_on_the_attached_collection_equals_tuners_own_collection(lite: MilvusEngine, tiny_dataset_dir: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    before = set(connect(lite).list_collections())
    args = ["eval", str(tiny_dataset_dir), "--retriever", "dense", "--top-k", "2", "--json"]
    assert main([*args, *_flags(lite)]) == 0
    attached = json.loads(capsys.readouterr().out)
    assert set(connect(lite).list_collections()) == before  # attach mode builds nothing
    assert main([*args, "--engine", "milvus", "--engine-uri", lite.uri]) == 0
    own = json.loads(capsys.readouterr().out)
    assert attached["recall_at_k"] == own["recall_at_k"] and attached["n"] == own["n"] == 6
    # none of the team's rows is known to conflict: exposure not measured, as a study's trial says it; tuner's own: a figure
    assert set(attached["conflict_exposure"]) == {"not_measured"} and "value" in own["conflict_exposure"]


@pytest.mark.parametrize("settings", [RetrievalSettings(retriever="bm25", top_k=2),
                                      RetrievalSettings(retriever="hybrid", fusion="rrf", top_k=2)])
def test_bm25_and_hybrid_search_the_collections_bm25_field(settings: RetrievalSettings, lite: MilvusEngine,
                                                           tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    attached = MilvusPipeline(dataset, _attached(lite), embeddings=embeddings)
    own = MilvusPipeline(dataset, lite, embeddings=embeddings)
    # the same chunks and analyzer: the same documents retrieved, the primary keys mapped back to rows (in another
    # order where two are close: tuner's own collection also holds the conflicting documents, which move Milvus's idf)
    assert [sorted(c.doc_ids) for c in attached.retrieve(settings)] == [sorted(c.doc_ids) for c in own.retrieve(settings)]
    assert {c.chunk_id for c in attached.table(settings).chunks} >= {c.chunk_id for ctx in attached.retrieve(settings)
                                                                    for c in ctx.chunks}
    count = attached.client.query(TEAM, filter="", output_fields=["count(*)"])[0]["count(*)"]
    assert count == attached.collection(settings).rows  # read, never written


def test_the_datasets_conflicts_follow_the_collections_rows_for_v3_and_are_never_searched(
        lite: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> None:
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), _attached(lite), embeddings=embeddings)
    deep = RetrievalSettings(retriever="dense", candidate_depth=50, top_k=50)
    table, rows = pipeline.table(deep), pipeline.collection(deep).rows
    assert not table.is_conflict[:rows].any() and table.is_conflict[rows:].all()
    assert {c.doc_id for c in table.chunks[rows:]} == {"aurora-x200-2023", "returns-2022"}  # what v3 injects
    assert pipeline.chunk_vectors(deep).shape == (len(table), 384)
    candidates = pipeline.candidates(deep)
    assert candidates.indices.max() == rows - 1  # every row of the collection, none past it
    assert pipeline.search_latency(deep) is not None  # the clean mask, sent as primary keys, skips the conflicts


def test_a_metadata_filter_on_the_attached_collection_searches_by_primary_key(
        lite: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> None:
    filters = {"policies": {"doc_id": ["returns", "warranty"]}, "none_of_ours": {"team": "other"}}
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), _attached(lite), embeddings=embeddings)
    policies = RetrievalSettings(retriever="dense", metadata_filters=filters, metadata_filter="policies", top_k=3)
    assert {d for ctx in pipeline.retrieve(policies) for d in ctx.doc_ids} == {"returns", "warranty"}
    nothing = policies.model_copy(update={"metadata_filter": "none_of_ours"})  # read from the collection's meta field
    assert all(not ctx.chunks for ctx in pipeline.retrieve(nothing))


def test_a_model_of_another_dimension_is_one_line_and_exit_2(lite: MilvusEngine, tiny_dataset_dir: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tiny_dataset_dir), "--retriever", "dense", *_flags(lite, "team_small")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["tuner: error: engine: collection team_small field embedding holds 8-dimensional vectors, the "
                   "embedding model all-MiniLM-L6-v2 gives 384: embed the questions with the model the collection "
                   "was built with (settings.embedding_model)"]


@pytest.mark.parametrize(("engine", "message"), [
    ({"fields": {"text": "body"}}, "collection team_kb has no field 'body' (fields.text); its fields: pk, content"),
    ({"fields": {"doc_id": "embedding"}}, "field embedding (fields.doc_id) is FLOAT_VECTOR, not VARCHAR or"),
    ({"fields": {"metadata": "source_doc"}}, "field source_doc (fields.metadata) is VARCHAR, not JSON"),
    ({"fields": {"sparse": "embedding"}}, "field embedding (fields.sparse) is FLOAT_VECTOR, not SPARSE_FLOAT_VECTOR"),
    ({"collection": "nobody"}, "collection nobody not found at"),
    ({"index": "HNSW"}, "field embedding is indexed FLAT, engine.index says HNSW: set engine.index: FLAT"),
])
def test_a_collection_that_does_not_fit_the_mapping_is_refused(engine: dict[str, Any], message: str,
                                                              lite: MilvusEngine, tiny_dataset_dir: Path) -> None:
    attached = _attached(lite, engine.get("collection", TEAM), engine.get("index", "FLAT"), **engine.get("fields", {}))
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        MilvusPipeline(load_dataset(tiny_dataset_dir), attached)


def test_doc_ids_none_of_the_golden_set_names_are_refused(lite: MilvusEngine, tiny_dataset_dir: Path,
                                                         embeddings: EmbeddingContext) -> None:
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), _attached(lite, doc_id="pk"), embeddings=embeddings)
    with pytest.raises(UserError, match="none of the golden set's 6 relevant documents is a value of collection team_kb "
                                        "field pk"):
        pipeline.candidates(RetrievalSettings(retriever="dense"))


def test_without_a_bm25_field_only_dense_is_searched(lite: MilvusEngine, tiny_dataset_dir: Path,
                                                     embeddings: EmbeddingContext) -> None:
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), _attached(lite, sparse=None), embeddings=embeddings)
    assert pipeline.candidates(RetrievalSettings(retriever="dense")).indices.shape[0] == 6
    with pytest.raises(UserError, match="retriever hybrid needs BM25, and collection team_kb has none"):
        pipeline.candidates(RetrievalSettings(retriever="hybrid"))
    with pytest.raises(UserError, match="variants.hard_mode: inject"):
        pipeline.retrieve(RetrievalSettings(retriever="dense"), "all")


def _study(tmp_path: Path, dataset: Path, extra: str = "") -> Path:
    (tmp_path / "space.yaml").write_text(
        "retriever: {type: categorical, choices: [bm25, dense, hybrid]}\n"
        "chunk_size: {type: categorical, choices: [128, 256]}\ntop_k: {type: int, low: 1, high: 4}\n", "utf-8")
    study = tmp_path / "study.yaml"
    study.write_text(f"name: s\ndataset: {dataset}\nsearch_space: space.yaml\nengine: {{backend: milvus, uri: kb.db, "
                     f"collection: {TEAM}, fields: {{text: content, vector: embedding, doc_id: source_doc}}}}\n{extra}",
                     "utf-8")
    return study


def test_a_study_on_an_attached_collection_says_what_it_fixes(tmp_path: Path, tiny_dataset_dir: Path) -> None:
    from tuner.study import load_study_file
    from tuner.study._check import check_study
    from tuner.study._inert import inert_knobs, without_inert
    from tuner.study._space import SearchSpace, load_search_space

    loaded = load_study_file(_study(tmp_path, tiny_dataset_dir, "settings: {retriever: dense}\n"))
    assert loaded.config.variants.hard_mode == "inject"  # v3's conflicts cannot go into the team's collection
    space, dataset = load_search_space(loaded.search_space_path), load_dataset(tiny_dataset_dir)
    check_study(loaded, space, dataset)
    inert = inert_knobs(space, dataset, loaded.base_settings, engine=loaded.engine)
    assert [knob.line() for knob in inert] == [
        f"chunk_size cannot act on the attached collection {TEAM} (it holds its own chunks and their vectors): fixed at "
        "256, kept out of the search",
        f"retriever: bm25 cannot act on the attached collection {TEAM} (it has no BM25 output field, fields.sparse): "
        "fixed at dense, kept out of the search",
        f"retriever: hybrid cannot act on the attached collection {TEAM} (it has no BM25 output field, fields.sparse): "
        "fixed at dense, kept out of the search"]
    searched = without_inert(space, inert).params
    assert searched["retriever"].choices == ["dense"] and searched["chunk_size"].choices == [256]  # type: ignore[union-attr]
    hybrid = load_study_file(_study(tmp_path, tiny_dataset_dir))  # settings' retriever: hybrid, the default
    with pytest.raises(UserError, match=f"settings.retriever: hybrid needs BM25, and the attached collection {TEAM} has none"):
        check_study(hybrid, SearchSpace({k: v for k, v in space.params.items() if k != "retriever"}, space.source), dataset)
    # in_index searches the collection's own conflicting rows: accepted in the file, refused where it has none
    assert load_study_file(_study(tmp_path, tiny_dataset_dir, "variants: {hard_mode: in_index}\n")).config.variants.hard_mode == "in_index"


def test_in_index_on_a_collection_without_known_conflicts_is_one_line(lite: MilvusEngine, tiny_dataset_dir: Path,
                                                                     embeddings: EmbeddingContext) -> None:
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), _attached(lite), embeddings=embeddings)
    with pytest.raises(UserError, match=f"no row of the attached collection {TEAM} is known to conflict"):
        pipeline.searched(RetrievalSettings(retriever="dense"), "all")


@pytest.mark.parametrize(("flags", "message"), [
    (["--engine-collection", TEAM], "--engine-collection goes with --engine milvus"),
    (["--engine", "milvus", "--engine-uri", "kb.db", "--engine-collection", TEAM],
     "--engine-collection and --engine-fields go together"),
    (["--engine", "milvus", "--engine-uri", "kb.db", "--engine-collection", TEAM, "--engine-fields", "text"],
     "--engine-fields: 'text' is not ROLE=FIELD"),
    (["--engine", "milvus", "--engine-uri", "kb.db", "--engine-collection", TEAM, "--engine-fields", "text=a,vector=b"],
     "engine.milvus.fields.doc_id"),
    (["--engine", "milvus", "--engine-uri", "kb.db", "--engine-collection", TEAM, "--engine-fields",
      "text=a,vector=b,doc_id=c,colour=d"], "engine.milvus.fields.colour"),
])
def test_attach_flags_are_checked_in_one_line(flags: list[str], message: str, tiny_dataset_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tiny_dataset_dir), "--retriever", "dense", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_golden_documents_missing_from_the_collection_are_said_in_a_line(tiny_dataset_dir: Path) -> None:
    from tuner.engine._attach import AttachedRows, AttachedSchema, check_doc_ids
    from tuner.progress import SilentReporter

    class Lines(SilentReporter):
        def __init__(self) -> None:
            self.lines: list[str] = []

        def stage(self, message: str) -> None:
            self.lines.append(message)

    present = {"aurora-x200", "aurora-x210", "returns", "warranty", "shipping"}  # not mercury-partner
    rows = AttachedRows([], np.zeros((0, 4), np.float32), (), {doc: {} for doc in present}, "key")
    schema = AttachedSchema(TEAM, "pk", 4, "FLAT", "COSINE", {}, 1.2)
    reporter = Lines()
    check_doc_ids(rows, load_dataset(tiny_dataset_dir), schema, "source_doc", reporter)
    assert reporter.lines == [f"engine: 1 of the golden set's 6 relevant documents are not in collection {TEAM} "
                              "(e.g. 'mercury-partner'): their cases count them as not retrieved"]


@pytest.fixture(scope="module")
def attached_study(lite: MilvusEngine, tmp_path_factory: pytest.TempPathFactory, tiny_dataset_dir: Path) -> dict[str, Any]:
    """A one-trial study on the team's collection (none of whose rows is known to conflict)."""
    from tests.study_tests.test_study import write_study

    folder = tmp_path_factory.mktemp("attached-study")
    engine = {"backend": "milvus", "uri": lite.uri, "collection": TEAM, "fields": FIELDS}
    study = write_study(folder, tiny_dataset_dir, engine=engine, budget={"trials": 1}, settings={"retriever": "dense"},
                        enqueue=[{"top_k": 2, "retriever": "dense"}])
    assert main(["run", str(study), "--no-report"]) == 0
    return {"file": study, "engine": engine, "folder": folder}


def test_exposure_an_attached_collection_cannot_tell_is_not_measured_everywhere_never_0(
    attached_study: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    import optuna
    import yaml

    from tuner.front import TrialRecord

    storage = f"sqlite:///{attached_study['folder'] / 'out' / 'tiny' / 'study.db'}"
    stored = optuna.load_study(study_name="tiny", storage=storage)
    record = TrialRecord.from_trial(stored.trials[0])
    from tuner.report import render_report

    assert "not measured" in render_report(stored)  # the front table's exposure cell
    assert record.exposed_cases is None and record.exposure_not_measured is not None
    assert (record.describe_exposure() or "").startswith("conflict exposure not measured: tuner cannot tell")
    capsys.readouterr()
    assert main(["pareto", str(attached_study["file"]), "--json"]) == 0
    front = json.loads(capsys.readouterr().out)
    entry = (front["front"] if isinstance(front, dict) else front)[0]
    assert entry["exposed"] == "not measured" and "not_measured" in entry["exposure"]
    exported = attached_study["folder"] / "deploy.yaml"
    assert main(["export", str(attached_study["file"]), "--trial", "0", "-o", str(exported)]) == 0
    assert "not_measured" in yaml.safe_load(exported.read_text())["provenance"]["conflict_exposure"]


def test_an_attached_trial_is_exported_with_the_teams_fields_and_served_from_the_teams_collection(
    attached_study: dict[str, Any], lite: MilvusEngine, tiny_dataset_dir: Path, encoder: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The pasted search (the team's field names, VARCHAR keys) returns the chunks ``tuner serve --engine milvus``
    serves from the team's collection, read-only."""
    import yaml

    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from tests.engine_tests.test_engine_deploy import QUESTIONS, _snippet, _wait_ready

    folder, study = attached_study["folder"], str(attached_study["file"])
    pasted, exported = folder / "milvus.yaml", folder / "served.yaml"
    assert main(["export", study, "--trial", "0", "--format", "milvus", "-o", str(pasted)]) == 0
    assert main(["export", study, "--trial", "0", "-o", str(exported)]) == 0
    native = yaml.safe_load(pasted.read_text())["native"]
    assert native["collection"] == TEAM and native["fields"] == FIELDS and (native["key"], native["metric"]) == ("pk", "COSINE")
    assert native["search"]["anns_field"] == "embedding" and native["output_fields"] == ["content", "source_doc", "meta"]
    namespace: dict[str, Any] = {}
    exec(compile(_snippet(pasted.read_text()), "milvus-export", "exec"), namespace)  # the code a team pastes, as written
    apps: list[Any] = []
    patch = pytest.MonkeyPatch()
    patch.setattr("tuner.http_guard.serve_on", lambda app, sock: (apps.append(app), sock.close()))
    patch.setattr("signal.signal", lambda *_: None)
    patch.setenv("TUNER_SERVE_TOKEN", "write-token")
    try:
        assert main(["serve", "--config", str(exported), "--dataset", str(tiny_dataset_dir), "--port", "0",
                     "--engine", "milvus", "--engine-uri", lite.uri]) == 0
    finally:
        patch.undo()
    before = connect(lite).query(TEAM, filter="", output_fields=["count(*)"])
    with TestClient(apps[0], base_url="http://127.0.0.1") as client:
        _wait_ready(client)
        assert client.get("/config").json()["engine"]["collection"] == TEAM
        for question in QUESTIONS:
            vector = encoder.with_prompt(native["query_embedding"]["prompt"]).encode([question])[0].tolist()
            ids = [hit["pk"] for hit in namespace["search"](namespace["client"], question, vector)]
            served = client.post("/retrieve", json={"query": question}).json()["chunks"]
            assert ids and ids == [chunk["metadata"]["chunk_id"] for chunk in served]
        reply = client.post("/documents/delete", json={"doc_ids": ["returns"]}, headers={"X-Tuner-Token": "write-token"})
        assert reply.status_code == 409 and "attached and never written by tuner" in reply.json()["error"]
    assert connect(lite).query(TEAM, filter="", output_fields=["count(*)"]) == before
    assert main(["eval", str(tiny_dataset_dir), "--config", str(exported), "--json"]) == 0  # the export's own engine
    assert f"collection {TEAM}): searched there" in " ".join(capsys.readouterr().err.split())  # rich wraps it


def test_a_study_resumed_on_a_collection_of_the_same_name_holding_other_rows_is_refused(
    attached_study: dict[str, Any], lite: MilvusEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another Lite file whose collection of the same name holds other rows (two of the team's left out): the
    study's trials were measured on the first; a trial measured on the second would sit in the same front."""
    import yaml

    client = connect(lite)
    rows = client.query(TEAM, filter="", output_fields=["*"], limit=1000)
    other = MilvusEngine(backend="milvus", uri=str(tmp_path / "other.db"))
    _team_collection(connect(other), TEAM, [{k: v for k, v in row.items() if k != "content_sparse"} for row in rows[2:]],
                     len(rows[0]["embedding"]))
    study = attached_study["file"]
    recorded = yaml.safe_load(study.read_text())
    assert main(["run", str(study), "--no-report"]) == 0  # the same collection: resumed (nothing left to run)
    capsys.readouterr()
    study.write_text(yaml.safe_dump({**recorded, "engine": {**attached_study["engine"], "uri": other.uri},
                                     "budget": {"trials": 2}}))
    try:
        assert main(["run", str(study), "--no-report"]) == 2
    finally:
        study.write_text(yaml.safe_dump(recorded))
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("tuner: error: study 'tiny'") and f"collection {TEAM} holding {len(rows)} rows" in err[-1]
    assert f"it holds {len(rows) - 2} rows" in err[-1] and "other rows than its trials were measured on" in err[-1]
    assert not any("Traceback" in line for line in err)


def test_exposure_on_a_collection_holding_its_own_stale_versions_is_memorys(
    lite: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext
) -> None:
    """The team's collection holds the stale versions conflicts.jsonl names (as rows, under their doc ids): the clean
    view leaves them out, the all view searches them, and exposure per configuration equals memory's on the same
    chunks (dense under FLAT is exact); v3 in_index runs on them."""
    from tuner.evaluation import evaluate_retrieval

    dataset = load_dataset(tiny_dataset_dir)
    memory = RetrievalPipeline(dataset, embeddings=embeddings)
    table = memory.table(RetrievalSettings())
    rows = [{"pk": f"row-{i}", "content": table.passages[i], "source_doc": table.chunks[i].doc_id, "meta": {},
             "embedding": table.embeddings()[i].tolist()} for i in range(len(table))]
    _team_collection(connect(lite), "team_versions", rows, table.encoder.inner.dim)
    attached = MilvusPipeline(dataset, _attached(lite, "team_versions"), embeddings=embeddings)
    flags = []
    for top_k in (1, 2, 3, 5):
        settings = RetrievalSettings(retriever="dense", top_k=top_k, candidate_depth=10)
        engine, reference = evaluate_retrieval(attached, settings), evaluate_retrieval(memory, settings)
        assert engine.exposed is not None and engine.exposed == reference.exposed
        assert engine.per_case["recall_at_k"] == reference.per_case["recall_at_k"]
        flags.append(sum(engine.exposed))
    assert flags[0] < flags[-1]  # a larger top_k shows more cases a stale version: exposure moves with the knob
    clean = attached.retrieve(RetrievalSettings(retriever="dense", top_k=5, candidate_depth=10), "clean")
    assert not any(chunk.conflicting for context in clean for chunk in context.chunks)


def test_the_conflicting_documents_of_a_collection_come_from_conflicts_jsonl_and_its_version_metadata(
    tiny_dataset_dir: Path,
) -> None:
    from tuner.engine._attach import AttachedRows, conflicting_documents

    metadata = {"price-2024": {"family": "price", "date": "2024-03-01"}, "price-2023": {"family": "price", "date": "2023-03-01"},
                "returns-2022": {}, "returns": {}, "warranty": {"family": "warranty"}}
    rows = AttachedRows([], np.zeros((0, 4), np.float32), (), metadata, "key")
    assert conflicting_documents(rows, load_dataset(tiny_dataset_dir)) == {
        "price-2023": ("stale", "unspecified"), "returns-2022": ("stale_version", "moderate")}
    assert conflicting_documents(AttachedRows([], np.zeros((0, 4), np.float32), (), {"returns": {}}, "key"),
                                 load_dataset(tiny_dataset_dir)) == {}


FILLER = 400
"""Rows of the team's other documents in ``team_large``, none of them the golden set's."""


@pytest.fixture(scope="module")
def large(lite: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> MilvusEngine:
    """The team's collection with the stale versions conflicts.jsonl names (``team_versions``' rows) and
    :data:`FILLER` rows of other documents (texts embedded by the same model, so the model check holds)."""
    memory = RetrievalPipeline(load_dataset(tiny_dataset_dir), embeddings=embeddings)
    table = memory.table(RetrievalSettings())
    texts = [f"Cafeteria note {i}: the soup of day {i} is lentil, served from noon in hall {i % 7}." for i in range(FILLER)]
    filler = table.encoder.encode(texts)
    rows = [{"pk": f"row-{i}", "content": table.passages[i], "source_doc": table.chunks[i].doc_id, "meta": {"team": "docs"},
             "embedding": table.embeddings()[i].tolist()} for i in range(len(table))]
    rows += [{"pk": f"filler-{i}", "content": text, "source_doc": f"menu-{i // 4}", "meta": {"team": "kitchen"},
              "embedding": vector.tolist()} for i, (text, vector) in enumerate(zip(texts, filler))]
    _team_collection(connect(lite), "team_large", rows, table.encoder.inner.dim)
    return _attached(lite, "team_large")


def test_attach_reads_the_rows_a_trial_needs_not_the_collection_with_memorys_recall_and_exposure(
    large: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 52 §2: the golden documents' rows, a sample of 16 keys and the rows the searches return are read, not
    the collection's 400 other rows; recall and exposure per case are memory's (dense under FLAT is exact)."""
    from tuner.evaluation import evaluate_retrieval

    monkeypatch.setattr("tuner.engine._attach.NOISE_ROWS", 16)
    dataset = load_dataset(tiny_dataset_dir)
    memory = RetrievalPipeline(dataset, embeddings=embeddings)
    attached = MilvusPipeline(dataset, large, embeddings=embeddings)
    for top_k in (1, 3):
        settings = RetrievalSettings(retriever="dense", top_k=top_k, candidate_depth=10)
        engine, reference = evaluate_retrieval(attached, settings), evaluate_retrieval(memory, settings)
        assert engine.exposed is not None and engine.exposed == reference.exposed
        assert engine.per_case["recall_at_k"] == reference.per_case["recall_at_k"]
    count = attached.client.query("team_large", filter="", output_fields=["count(*)"])[0]["count(*)"]
    read = attached.rows_read
    assert read is not None and len(memory.table(RetrievalSettings())) + 16 <= read < count - FILLER / 2
    assert attached.collection(RetrievalSettings()).rows == count  # the collection's count, not the rows read
    # a filter reaches the rows not read through the team's own fields: none of the kitchen's rows, every policy
    kitchen = RetrievalSettings(retriever="dense", top_k=3, metadata_filter="kitchen",
                                metadata_filters={"kitchen": {"team": "kitchen"}, "policies": {"doc_id": ["returns", "warranty"]}})
    found = attached.retrieve(kitchen)
    assert all(ctx.chunks for ctx in found) and all(d.startswith("menu-") for ctx in found for d in ctx.doc_ids)
    policies = kitchen.model_copy(update={"metadata_filter": "policies"})
    assert {d for ctx in attached.retrieve(policies) for d in ctx.doc_ids} == {"returns", "warranty"}
    assert attached.rows_read is not None and attached.rows_read < count


def test_bm25_statistics_of_an_attached_collection_are_counted_over_every_text_page_by_page(
    large: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BM25's document frequencies need every text (Milvus gives none): read as text only, page by page, never kept
    as rows; N is the collection's count."""
    from tuner.engine import BM25Ceiling

    monkeypatch.setattr("tuner.engine._attach.NOISE_ROWS", 16)
    monkeypatch.setattr("tuner.engine._attach.READ_BATCH", 50)
    attached = MilvusPipeline(load_dataset(tiny_dataset_dir), large, embeddings=embeddings)
    settings = RetrievalSettings(retriever="bm25", top_k=2)
    collection = attached.collection(settings)
    texts = list(collection.texts())
    assert len(texts) == collection.rows and sum("Cafeteria note" in t for t in texts) == FILLER
    ceiling = BM25Ceiling.of(collection, attached.cache)
    assert ceiling("lentil soup") > ceiling("soup") > 0  # counted over the 400 rows never read as rows
    assert all(ctx.chunks for ctx in attached.retrieve(settings))
    assert attached.rows_read is not None and attached.rows_read < collection.rows


def test_attach_passes_over_the_whole_collection_only_to_scan_its_keys(
    large: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 52 §2: a paged query (``iterator``, ``key > last``) or a filter on a field that is not the key is a pass
    over every row in Milvus Lite (and on a cluster's query nodes): the golden documents' rows are known from the
    key scan's pages (which carry the doc id), and every row is then read by ``key in [...]``, a plain query Lite
    answers by point reads. The rows read and the conflicts marked are those of a read by doc id."""
    from tuner.evaluation import evaluate_retrieval

    monkeypatch.setattr("tuner.engine._attach.NOISE_ROWS", 16)
    dataset = load_dataset(tiny_dataset_dir)
    attached = MilvusPipeline(dataset, large, embeddings=embeddings)
    sent: list[dict[str, Any]] = []
    query = attached.client.query

    def logged(name: str, **kwargs: Any) -> Any:
        sent.append(kwargs)
        return query(name, **kwargs)

    monkeypatch.setattr(attached.client, "query", logged)
    settings = RetrievalSettings(retriever="dense", top_k=3, candidate_depth=10)
    evaluate_retrieval(attached, settings)
    scans = [q for q in sent if "iterator" in q]
    assert scans and all(q["output_fields"] == ["pk", "source_doc"] for q in scans)  # the key scan's pages
    assert all(q["filter"] == "" or q["filter"].startswith("pk > ") for q in scans)
    assert not any("source_doc" in q.get("filter", "") for q in sent)
    reads = [q for q in sent if q not in scans and "count(*)" not in q["output_fields"]]
    assert reads and all(q["filter"].startswith("pk in [") for q in reads)
    # what a read by doc id reads, as before: the golden and conflicting documents' rows, the sample, the hits
    store = attached._store
    assert store is not None
    count = attached.client.query("team_large", filter="", output_fields=["count(*)"])[0]["count(*)"]
    golden = {doc for case in dataset.golden for doc in case.relevant_doc_ids} | {c.doc_id for c in dataset.conflicts}
    everything = attached.client.query("team_large", filter="", output_fields=["pk", "source_doc"], limit=count)
    assert {r["pk"] for r in everything if r["source_doc"] in golden} <= set(store.keys)
    assert set(store.conflicting) == {c.doc_id for c in dataset.conflicts} & {r["source_doc"] for r in everything}
