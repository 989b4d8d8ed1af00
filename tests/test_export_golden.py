"""Exports byte for byte (issue 53): every format and framework export of a few configurations (each retriever and
fusion, thresholds, rerankers, version knobs, filters, hostile strings) on memory and on Milvus (a collection tuner
built, an attached one with a JSON or scalar metadata fields), and the refusals of ``--format milvus``, compared with
the files under ``tests/data/export_golden/``, which the code before ``tuner/export/`` became a package wrote.

A deliberate change of an export's text rewrites them: ``python -m tests.test_export_golden`` (then review the diff)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tuner.errors import UserError
from tuner.export import export_document, write_export, write_framework_export
from tuner.settings import RetrievalSettings

GOLDEN = Path(__file__).parent / "data" / "export_golden"
HOSTILE = 'x""" + open("PWNED", "w").name + """\n# \u2028\'\'\' \\ {a}: [b] 客服'
"""A string that closes a docstring, a comment line, a YAML scalar and a Python string if pasted raw."""

SETTINGS: dict[str, dict[str, Any]] = {
    "hybrid_blend": dict(retriever="hybrid", hybrid_weight=0.7, chunk_size=200, chunk_overlap=0.15000000000000002,
                         top_k=4, candidate_depth=30, relevance_threshold=0.2, rerank_strength=0.5, version_policy="latest",
                         recency_weight=0.2, recency_half_life_days=30.0, dedupe=0.9, dense_index="hnsw", hnsw_ef=8,
                         metadata_filters={"cur": {"status": "current", "doc_id": ["a", "b"], "team": ["hr", "客服"]}},
                         metadata_filter="cur"),
    "dense_cross": dict(retriever="dense", chunk_unit="chars", chunk_size=800, chunk_overlap=0.1, top_k=6,
                        relevance_threshold=0.35, rerank_strength=0.4, reranker="cross-encoder:BAAI/bge-reranker-base",
                        stale_penalty=0.3, dense_index="ivf", ivf_nprobe=16),
    "dense_plain": dict(retriever="dense", relevance_threshold=0.35, chunk_unit="words", chunk_size=120),
    "bm25_filter": dict(retriever="bm25", chunk_unit="words", chunk_size=120, top_k=3, stale_penalty=0.5,
                        metadata_filters={"en": {"lang": "en", "conflict": False}}, metadata_filter="en"),
    "hybrid_rrf_hostile": dict(retriever="hybrid", fusion="rrf", rrf_k=20, embedding_model=HOSTILE, query_prompt=HOSTILE,
                               document_prompt="passage: ", chunk_overlap=0.2, recency_weight=0.1,
                               metadata_filters={"h": {"status": HOSTILE, "n": [1, 2.5, True]}}, metadata_filter="h"),
}
STEPS = {"chunk_overlap": 0.05}
PROVENANCE: dict[str, Any] = {"study": "kb", "storage": "sqlite:///kb.db", "trial": 3, "pick": "knee",
                              "values": {"recall": 0.8, "latency_ms": 12.5}, "notes": [HOSTILE]}
ENGINES: dict[str, dict[str, Any]] = {
    "memory": {"engine": {"backend": "memory"}},
    "milvus_built": {"engine": {"backend": "milvus", "uri": "http://milvus:19530", "db_name": "", "token_env": "MILVUS_TOKEN",
                                "index": "HNSW", "index_params": {"M": 16, "efConstruction": 200}},
                     "collection": "tuner_abc"},
    "milvus_attached_json": {"engine": {"backend": "milvus", "uri": "team.db", "db_name": "kb", "token_env": None,
                                        "index": "IVF_FLAT", "index_params": {"nlist": 128}, "collection": "team_kb",
                                        "fields": {"text": "body", "vector": "emb", "doc_id": "source", "metadata": "meta",
                                                   "sparse": "sp"}, "key": "pk", "metric": "IP"},
                             "collection": "team_kb"},
    "milvus_attached_scalar": {"engine": {"backend": "milvus", "uri": "team.db", "db_name": "", "token_env": None,
                                          "index": "FLAT", "index_params": {}, "collection": "team_kb",
                                          "fields": {"text": "body", "vector": "emb", "doc_id": "source",
                                                     "metadata": ["status", "lang"]}},
                               "collection": "team_kb"},
}
REFUSED: dict[str, dict[str, Any]] = {
    "memory": ENGINES["memory"],
    "unnamed": {},
    "attached_unmapped": {"engine": {k: v for k, v in ENGINES["milvus_attached_json"]["engine"].items() if k != "fields"},
                          "collection": "team_kb"},
}
FRAMEWORKS = ("langchain", "llamaindex", "dify", "ragflow")


def _document(settings: str, engine: str) -> dict[str, Any]:
    document = export_document(RetrievalSettings(**SETTINGS[settings]).model_dump(), {**PROVENANCE, **ENGINES[engine]}, STEPS)
    document["provenance"]["tool"] = "tuner VERSION"  # the version moves with every release
    return document


def _cases() -> Iterator[tuple[str, str, str, str]]:
    """(fixture name, settings, engine, format: a suffix of tuner's own forms or a framework)."""
    for settings in SETTINGS:
        for suffix in (".yaml", ".json", ".env"):
            yield f"{settings}{suffix}", settings, "memory", suffix
        for framework in FRAMEWORKS:
            yield f"{settings}.{framework}.yaml", settings, "memory", framework
        for engine in ENGINES:
            if engine != "memory":
                yield f"{settings}.milvus.{engine}.yaml", settings, engine, "milvus"


def _written(folder: Path, settings: str, engine: str, form: str) -> bytes:
    if form.startswith("."):
        return write_export(folder / f"out{form}", _document(settings, engine)).read_bytes()
    return write_framework_export(folder / "out.yaml", _document(settings, engine), form).read_bytes()


def _refusals() -> bytes:
    """What ``--format milvus`` says of a trial it cannot write the search of, one line per case."""
    lines = []
    for name, engine in REFUSED.items():
        document = export_document(RetrievalSettings().model_dump(), {**PROVENANCE, **engine})
        try:
            write_framework_export(Path("never-written.yaml"), document, "milvus")
        except UserError as error:
            lines.append(f"{name}: {error}")
        else:
            lines.append(f"{name}: written")
    return ("\n".join(lines) + "\n").encode("utf-8")


REFUSALS = "milvus_refused.txt"


@pytest.mark.parametrize(("name", "settings", "engine", "form"), list(_cases()), ids=[case[0] for case in _cases()])
def test_an_export_writes_the_bytes_it_wrote_before_the_package(name: str, settings: str, engine: str, form: str,
                                                              tmp_path: Path) -> None:
    assert _written(tmp_path, settings, engine, form) == (GOLDEN / name).read_bytes()


def test_a_milvus_export_of_a_trial_without_a_collection_is_refused_as_before() -> None:
    assert _refusals() == (GOLDEN / REFUSALS).read_bytes()


def test_every_golden_file_is_a_case() -> None:
    assert sorted(path.name for path in GOLDEN.iterdir()) == sorted([REFUSALS, *(case[0] for case in _cases())])


def _regenerate() -> None:
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        for name, settings, engine, form in _cases():
            (GOLDEN / name).write_bytes(_written(Path(folder), settings, engine, form))
    (GOLDEN / REFUSALS).write_bytes(_refusals())
    print(f"wrote the files under {GOLDEN}", file=sys.stderr)


if __name__ == "__main__":
    _regenerate()
