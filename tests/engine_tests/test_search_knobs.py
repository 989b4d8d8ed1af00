"""The search-time knobs on Milvus (issue 45): ``hnsw_ef`` and ``ivf_nprobe`` reach the engine's search by the
collection's index, key the first stage apart, and a study fixes ``dense_index`` at the engine's index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from tuner.dataset import load_dataset  # noqa: E402
from tuner.embedding import EmbeddingContext  # noqa: E402
from tuner.engine import MilvusEngine, MilvusPipeline, dense_params, index_knobs  # noqa: E402
from tuner.errors import UserError  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402
from tuner.study import load_study_file  # noqa: E402
from tuner.study._inert import inert_knobs  # noqa: E402
from tuner.study._space import CategoricalParam, SearchSpace  # noqa: E402


def test_each_index_type_sends_its_own_knob() -> None:
    settings = RetrievalSettings(retriever="hybrid", hnsw_ef=24, ivf_nprobe=3)
    assert index_knobs("HNSW", settings) == index_knobs("HNSW_SQ", settings) == {"ef": 24}
    assert index_knobs("IVF_FLAT", settings) == index_knobs("IVF_SQ8", settings) == {"nprobe": 3}
    assert index_knobs("FLAT", settings) == index_knobs("AUTOINDEX", settings) == {}
    assert index_knobs("HNSW", settings.model_copy(update={"retriever": "bm25"})) == {}  # no dense search
    assert dense_params({"ef": 24}, 10) == {"metric_type": "COSINE", "params": {"ef": 24}}
    assert dense_params({"ef": 24}, 40)["params"] == {"ef": 40}  # Milvus refuses an ef below the limit
    assert dense_params({"nprobe": 3}, 40)["params"] == {"nprobe": 3}


def _record(client: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The dense and BM25 search parameters ``client`` is called with from now on (each call still reaches Milvus)."""
    sent: list[Any] = []
    search, hybrid_search = client.search, client.hybrid_search

    def recorded_search(*args: Any, **kwargs: Any) -> Any:
        sent.append(kwargs["search_params"])
        return search(*args, **kwargs)

    def recorded_hybrid_search(name: str, requests: list[Any], *args: Any, **kwargs: Any) -> Any:
        sent.extend(request.param for request in requests)
        return hybrid_search(name, requests, *args, **kwargs)

    monkeypatch.setattr(client, "search", recorded_search)
    monkeypatch.setattr(client, "hybrid_search", recorded_hybrid_search)
    return sent


@pytest.mark.parametrize(("index", "sent"), [("HNSW", {"ef": 16}), ("IVF_FLAT", {"nprobe": 2})])
def test_a_real_search_sends_the_knob_and_one_ef_is_not_anothers_candidates(
        index: str, sent: dict[str, int], tmp_path: Path, tiny_dataset_dir: Path, embeddings: EmbeddingContext,
        monkeypatch: pytest.MonkeyPatch) -> None:
    engine = MilvusEngine(backend="milvus", uri=str(tmp_path / "kb.db"), index=index)  # type: ignore[arg-type]
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), engine, embeddings=embeddings)
    settings = RetrievalSettings(retriever="dense", dense_index=engine.dense_index, hnsw_ef=16, ivf_nprobe=2,
                                 candidate_depth=4, top_k=3)
    pipeline.collection(settings)
    recorded = _record(pipeline.client, monkeypatch)
    candidates = pipeline.candidates(settings)
    assert (candidates.indices[:, 0] >= 0).all()
    assert recorded == [{"metric_type": "COSINE", "params": sent}]
    pipeline.candidates(settings.model_copy(update={"retriever": "hybrid", "fusion": "rrf"}))
    assert recorded[1:] == [{"metric_type": "COSINE", "params": sent}, {"metric_type": "BM25"}]
    other = settings.model_copy(update={"hnsw_ef": 64, "ivf_nprobe": 4})
    assert pipeline.retriever(other) is not pipeline.retriever(settings)
    assert pipeline.candidates_key(other) != pipeline.candidates_key(settings)
    unmoved = settings.model_copy(update={"hnsw_ef": 64} if index == "IVF_FLAT" else {"ivf_nprobe": 4})
    assert pipeline.candidates_key(unmoved) == pipeline.candidates_key(settings)  # the other index's knob does not act


def _study(tmp_path: Path, dataset: Path, engine: str, settings: str = "{}") -> Path:
    (tmp_path / "space.yaml").write_text("dense_index: {type: categorical, choices: [flat, hnsw]}\n", "utf-8")
    study = tmp_path / "study.yaml"
    study.write_text(f"name: s\ndataset: {dataset}\nsearch_space: space.yaml\nengine: {engine}\nsettings: {settings}\n",
                     "utf-8")
    return study


def test_a_study_on_milvus_fixes_dense_index_at_the_engines_index(tmp_path: Path, tiny_dataset_dir: Path) -> None:
    loaded = load_study_file(_study(tmp_path, tiny_dataset_dir, "{backend: milvus, uri: kb.db, index: HNSW}"))
    assert loaded.base_settings.dense_index == "hnsw" and loaded.base_settings.acts("hnsw_ef")
    space = SearchSpace({"dense_index": CategoricalParam(type="categorical", choices=["flat", "hnsw"])}, "space.yaml")
    [knob] = inert_knobs(space, load_dataset(tiny_dataset_dir), loaded.base_settings, engine=loaded.engine)
    assert knob.setting == "dense_index" and knob.value == "hnsw"
    assert knob.line().startswith("dense_index cannot act on the milvus engine (it searches its HNSW index)")
    with pytest.raises(UserError, match=r"settings.dense_index: 'flat', but the engine's index is IVF_FLAT \(ivf\)"):
        load_study_file(_study(tmp_path, tiny_dataset_dir, "{backend: milvus, uri: kb.db, index: IVF_FLAT}",
                               "{dense_index: flat}"))


def test_a_retriever_the_engine_has_no_search_for_is_refused_never_searched_as_another(
        tmp_path: Path, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> None:
    from tuner.engine import MilvusFirstStage

    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), MilvusEngine(backend="milvus", uri=str(tmp_path / "kb.db")),
                              embeddings=embeddings)
    dense = RetrievalSettings(retriever="dense", chunk_size=40)
    stage = pipeline.retriever(dense)
    # a retriever declared for tuner's own search (tuner.settings.FIRST_STAGES) that the engine's search map lacks
    unknown = RetrievalSettings.model_construct(**{**dense.model_dump(), "retriever": "splade"})
    with pytest.raises(UserError, match="engine: milvus searches retrievers dense, bm25, hybrid .*, not splade"):
        MilvusFirstStage(stage.collection, unknown, pipeline.encoder(dense), stage._ceiling)
