"""The Milvus engine against Milvus Lite (the real engine, a .db file; one per module): a collection built once and
reused, tuner's [0, 1] scores, dense parity with memory, filter expressions equal to the masks, faults as one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from tuner.cli import main  # noqa: E402
from tuner.dataset import load_dataset  # noqa: E402
from tuner.embedding import EmbeddingContext  # noqa: E402
from tuner.engine import MilvusEngine, MilvusPipeline, collection_name, filter_expression, tuner_collections  # noqa: E402
from tuner.errors import UserError  # noqa: E402
from tuner.retrieval import RetrievalPipeline, first_stage_mask  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> MilvusEngine:
    return MilvusEngine(backend="milvus", uri=str(tmp_path_factory.mktemp("milvus") / "kb.db"))


@pytest.fixture(scope="module")
def pipelines(lite: MilvusEngine, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> tuple[MilvusPipeline, RetrievalPipeline]:
    dataset = load_dataset(tiny_dataset_dir)
    return MilvusPipeline(dataset, lite, embeddings=embeddings), RetrievalPipeline(dataset, embeddings=embeddings)


def test_dense_candidates_equal_memory_and_every_score_is_in_0_1(pipelines: tuple[MilvusPipeline, RetrievalPipeline]) -> None:
    milvus, memory = pipelines
    dense = RetrievalSettings(retriever="dense", candidate_depth=6, top_k=4)
    engine, own = milvus.candidates(dense), memory.candidates(dense)
    assert (engine.indices == own.indices).all() and np.allclose(engine.scores, own.scores, atol=1e-5)
    for retriever, fusion in (("bm25", "blend"), ("hybrid", "blend"), ("hybrid", "rrf")):
        scores = milvus.candidates(RetrievalSettings(retriever=retriever, fusion=fusion, candidate_depth=6)).scores
        assert scores.max() > 0.0 and ((scores >= 0.0) & (scores <= 1.0)).all()


@pytest.mark.parametrize("retriever", ["bm25", "hybrid"])
def test_bm25_and_the_blend_give_memorys_candidates(pipelines: tuple[MilvusPipeline, RetrievalPipeline], retriever: str) -> None:
    # one BM25 rule on both engines (the analyzer's terms, "$1,299" two of them; a repeated question term counted
    # twice) and the blend scored over the union of both lists: memory's candidates and scores (memory fills a BM25
    # list that fewer chunks match with zero-score chunks, Milvus returns none: compared where memory's score is > 0)
    milvus, memory = pipelines
    settings = RetrievalSettings(retriever=retriever, fusion="blend", candidate_depth=6)
    engine, own = milvus.candidates(settings), memory.candidates(settings)
    matched = own.scores > 0
    assert matched.sum() > len(milvus.queries)
    assert (engine.indices[matched] == own.indices[matched]).all()
    assert np.allclose(engine.scores[matched], own.scores[matched], atol=1e-5)


def test_the_filter_expression_searches_the_chunks_of_the_mask(pipelines: tuple[MilvusPipeline, RetrievalPipeline]) -> None:
    milvus, _ = pipelines
    base = RetrievalSettings(retriever="dense", candidate_depth=50,
                             metadata_filters={"laptops": {"doc_id": ["aurora-x200", "aurora-x200-2023", "returns"]}})
    table = milvus.table(base)
    for view in ("clean", "all", "only:kind=stale_version"):
        for name in ("none", "laptops"):
            settings = base.model_copy(update={"metadata_filter": name})
            mask = first_stage_mask(table, milvus.dataset.metadata_of, settings, view)
            expected = set(np.flatnonzero(np.ones(len(table), bool) if mask is None else mask).tolist())
            found = milvus.client.query(milvus.collection(settings).name, filter=filter_expression(settings, view) or "id >= 0",
                                        output_fields=["id"])
            assert {int(r["id"]) for r in found} == expected, (view, name)


def test_filter_values_holding_control_characters_reach_the_engine_escaped(
        pipelines: tuple[MilvusPipeline, RetrievalPipeline]) -> None:
    # issue 54 §2.6: values holding U+0001, a backspace, NUL, a quote or a backslash are literals of Milvus's own
    # escaping (Milvus Lite refuses JSON's \u0001 and \b): both engines search the same chunks
    milvus, memory = pipelines
    hostile = ["\x01", "\b", "a\x00b", 'say "x"', "back\\slash"]
    for key in ("doc_id", "status"):
        settings = RetrievalSettings(retriever="dense", candidate_depth=6, metadata_filter="odd",
                                     metadata_filters={"odd": {key: ["returns", *hostile]}})
        engine, own = milvus.candidates(settings), memory.candidates(settings)
        assert (engine.indices == own.indices).all() and np.allclose(engine.scores, own.scores, atol=1e-5), key


def test_one_collection_per_chunking_reused_by_a_second_pipeline(pipelines: tuple[MilvusPipeline, RetrievalPipeline],
                                                                 lite: MilvusEngine, embeddings: EmbeddingContext) -> None:
    milvus, _ = pipelines
    settings = RetrievalSettings(retriever="dense")
    name = milvus.collection(settings).name
    again = MilvusPipeline(milvus.dataset, lite, embeddings=embeddings)
    assert again.collection(settings).name == name
    listed = {info.name: info for info in tuner_collections(milvus.client)}
    assert listed[name].state == "complete" and listed[name].rows == len(milvus.table(settings))


def test_the_index_and_its_build_parameters_name_the_collection(pipelines: tuple[MilvusPipeline, RetrievalPipeline],
                                                                lite: MilvusEngine) -> None:
    milvus, _ = pipelines
    table = milvus.table(RetrievalSettings(retriever="dense"))
    names = {collection_name(table, "en", lite.model_copy(update=change))
             for change in ({}, {"index": "HNSW"}, {"index": "HNSW", "index_params": {"M": 16}},
                            {"index": "HNSW", "index_params": {"M": 32}})}
    assert len(names) == 4


def test_a_collection_changed_underneath_is_refused(pipelines: tuple[MilvusPipeline, RetrievalPipeline],
                                                  lite: MilvusEngine, embeddings: EmbeddingContext) -> None:
    milvus, _ = pipelines
    settings = RetrievalSettings(retriever="dense", chunk_size=64, chunk_unit="chars")
    name = milvus.collection(settings).name
    milvus.client.delete(name, ids=[0])
    with pytest.raises(UserError, match="changed underneath"):
        MilvusPipeline(milvus.dataset, lite, embeddings=embeddings).collection(settings)
    milvus.client.drop_collection(name)


def _swap_texts(client: Any, name: str) -> None:
    """Two rows trade their texts (the row count, and every other row, unchanged)."""
    rows = client.query(name, filter="id in [1, 2]", output_fields=["*"])
    first, second = sorted(rows, key=lambda r: r["id"])
    client.upsert(name, [{**_written(first), "text": second["text"]}, {**_written(second), "text": first["text"]}])


def _zero_vectors(client: Any, name: str) -> None:
    rows = client.query(name, filter="id in [1, 3]", output_fields=["*"])
    client.upsert(name, [{**_written(row), "dense": [0.0] * len(row["dense"])} for row in rows])


def _flip_conflict(client: Any, name: str) -> None:
    row = client.query(name, filter="id == 1", output_fields=["*"])[0]
    client.upsert(name, [{**_written(row), "conflict": not row["conflict"]}])


def _replace_row(client: Any, name: str) -> None:
    """A row deleted and another inserted under a new id: the count stays (exit 3 with an IndexError before)."""
    row = client.query(name, filter="id == 1", output_fields=["*"])[0]
    client.delete(name, ids=[1])
    client.insert(name, [{**_written(row), "id": 10_000}])


def _written(row: dict[str, Any]) -> dict[str, Any]:
    """A row as read back, as pymilvus writes it (the BM25 output field is the function's)."""
    return {k: v for k, v in row.items() if k != "sparse"}


@pytest.mark.parametrize("change", [_swap_texts, _zero_vectors, _flip_conflict, _replace_row])
def test_rows_changed_outside_any_spot_check_are_refused_in_one_line(
    change: Callable[[Any, str], None], pipelines: tuple[MilvusPipeline, RetrievalPipeline], lite: MilvusEngine,
    tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    milvus, _ = pipelines
    settings = RetrievalSettings(retriever="dense", chunk_size=48, chunk_unit="chars")
    name = milvus.collection(settings).name
    change(milvus.client, name)
    milvus.client.flush(name)
    flags = ["--retriever", "dense", "--chunk-size", "48", "--chunk-unit", "chars", "--engine", "milvus",
             "--engine-uri", lite.uri, "--json"]
    assert main(["eval", str(tiny_dataset_dir), *flags]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]  # above it: the progress of the read
    assert line.startswith(f"tuner: error: engine: collection {name} holds ") and "changed underneath; drop it" in line, err
    milvus.client.drop_collection(name)
    assert main(["eval", str(tiny_dataset_dir), *flags]) == 0  # built anew, as the line says


def test_a_collection_completed_before_digests_is_compared_with_the_table_and_given_one(
    pipelines: tuple[MilvusPipeline, RetrievalPipeline], lite: MilvusEngine, embeddings: EmbeddingContext
) -> None:
    milvus, _ = pipelines
    settings = RetrievalSettings(retriever="dense", chunk_size=56, chunk_unit="chars")
    name = milvus.collection(settings).name
    recorded = milvus.client.describe_collection(name)["properties"]["tuner.digest"]
    milvus.client.drop_collection_properties(name, property_keys=["tuner.digest"])  # as an older tuner left it
    MilvusPipeline(milvus.dataset, lite, embeddings=embeddings).collection(settings)
    assert milvus.client.describe_collection(name)["properties"]["tuner.digest"] == recorded
    milvus.client.drop_collection_properties(name, property_keys=["tuner.digest"])
    _flip_conflict(milvus.client, name)
    with pytest.raises(UserError, match="changed underneath"):
        MilvusPipeline(milvus.dataset, lite, embeddings=embeddings).collection(settings)
    milvus.client.drop_collection(name)


def test_a_half_built_collection_is_built_again(pipelines: tuple[MilvusPipeline, RetrievalPipeline],
                                                lite: MilvusEngine, embeddings: EmbeddingContext) -> None:
    milvus, _ = pipelines
    settings = RetrievalSettings(retriever="dense", chunk_size=96, chunk_unit="chars")
    name = milvus.collection(settings).name
    milvus.client.alter_collection_properties(name, properties={"tuner.state": "building"})  # as Ctrl-C leaves it
    milvus.client.delete(name, ids=[1, 2])
    rebuilt = MilvusPipeline(milvus.dataset, lite, embeddings=embeddings).collection(settings)
    count = milvus.client.query(name, filter="", output_fields=["count(*)"])[0]["count(*)"]
    assert rebuilt.name == name and count == len(milvus.table(settings))


def test_eval_on_milvus_prints_the_same_json(lite: MilvusEngine, tiny_dataset_dir: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", str(tiny_dataset_dir), "--retriever", "dense", "--top-k", "3", "--json"]
    assert main(args) == 0
    memory = json.loads(capsys.readouterr().out)
    assert main([*args, "--engine", "milvus", "--engine-uri", lite.uri]) == 0
    engine = json.loads(capsys.readouterr().out)
    assert engine["recall_at_k"] == memory["recall_at_k"] and engine["n"] == memory["n"]


@pytest.mark.parametrize(("flags", "message"), [
    (["--engine", "milvus", "--engine-uri", "/nonexistent/dir/kb.db"], "cannot use Milvus at /nonexistent/dir/kb.db"),
    (["--engine", "milvus", "--engine-uri", "http://127.0.0.1:9"], "cannot use Milvus at http://127.0.0.1:9"),
    (["--engine", "milvus", "--engine-uri", "kb"], "engine.milvus.uri: must be a Milvus Lite file"),
    (["--engine", "milvus"], "needs --engine-uri"),
    (["--engine-uri", "kb.db"], "--engine-uri goes with --engine milvus"),
    (["--engine", "milvus", "--engine-uri", "kb.db", "--engine-token-env", "TUNER_TEST_NO_SUCH_TOKEN"],
     "TUNER_TEST_NO_SUCH_TOKEN is not set"),
])
def test_engine_faults_are_one_line_and_exit_2(flags: list[str], message: str, tiny_dataset_dir: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tiny_dataset_dir), "--retriever", "bm25", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_engine_ls_and_gc_touch_only_tuners_collections(pipelines: tuple[MilvusPipeline, RetrievalPipeline],
                                                        lite: MilvusEngine, capsys: pytest.CaptureFixture[str]) -> None:
    milvus, _ = pipelines
    name = milvus.collection(RetrievalSettings(retriever="dense")).name
    schema = milvus.client.create_schema(auto_id=False)
    from pymilvus import DataType

    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)
    milvus.client.create_collection("theirs", schema=schema)
    assert main(["engine", "ls", lite.uri]) == 0
    listed = capsys.readouterr().out
    assert name in listed and "theirs" not in listed
    assert main(["engine", "gc", lite.uri]) == 0 and milvus.client.has_collection(name)  # a dry run
    assert "would remove" in capsys.readouterr().out
    assert main(["engine", "gc", lite.uri, "--yes"]) == 0
    assert not milvus.client.has_collection(name) and milvus.client.has_collection("theirs")
