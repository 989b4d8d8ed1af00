"""Export (framework exports): ``--format milvus``, the pymilvus search of the collection a trial measured (a
collection tuner built, or an attached one through its recorded field mapping), as settings and as Python to paste,
with a table of what tuner does after the search."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tuner.engine import DENSE, SPARSE, TEXT, dense_params, filter_expression, index_knobs, literal, string_literal
from tuner.errors import UserError
from tuner.export._framework import FrameworkExport, Untranslated, register_framework, retriever_entry, untranslated
from tuner.settings import AFTER_SEARCH, RetrievalSettings


def _milvus_engine(provenance: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Milvus engine and collection an export was measured on; a :class:`UserError` for a trial measured in
    memory (or an export that does not say): there is no collection whose search parameters could be given; and for
    an attached collection whose field mapping the export does not record (exported before tuner recorded it)."""
    engine = provenance.get("engine")
    where = f"--format milvus: trial {provenance.get('trial')} of study '{provenance.get('study')}'"
    if not isinstance(engine, Mapping) or engine.get("backend") != "milvus" or not provenance.get("collection"):
        measured = "in memory" if isinstance(engine, Mapping) else "on an engine the export does not name"
        raise UserError(f"{where} was measured {measured}: no Milvus collection to search; run the study with engine: "
                        "{backend: milvus, uri: ...} (docs/engine.md)")
    if engine.get("collection") and not isinstance(engine.get("fields"), Mapping):
        raise UserError(f"{where} searched the attached collection {engine['collection']}, and its study does not "
                        "record the field mapping (run before tuner recorded it): its search cannot be written; run a "
                        "trial of the study again with this tuner, or write the search from docs/engine.md")
    return engine


def _attached_filter(settings: RetrievalSettings, fields: Mapping[str, Any]) -> str:
    """``settings``' metadata filter over an attached collection's own fields: ``doc_id`` is ``fields.doc_id``, a
    metadata key a key of the JSON ``fields.metadata`` (``meta["status"] == "current"``) or one of its scalar fields,
    each equal to the value or one of a list's; a key the collection does not hold matches nothing, as tuner's mask
    over its rows did ('' without a filter).

    >>> _attached_filter(RetrievalSettings(metadata_filters={"c": {"status": "current", "doc_id": ["a", "b"]}},
    ...                                    metadata_filter="c"), {"doc_id": "source", "metadata": "meta"})
    '(meta["status"] == "current") and (source == "a" or source == "b")'
    """
    metadata = fields.get("metadata") or ()
    tests = []
    for key, wanted in settings.active_filter.items():
        values = wanted if isinstance(wanted, list) else [wanted]
        if key == "doc_id":
            name = str(fields["doc_id"])
        elif isinstance(metadata, str):
            name = f"{metadata}[{string_literal(key)}]"
        elif key in metadata:
            name = key
        else:
            tests.append("false")
            continue
        # escaped by Milvus's own rules (a JSON string's \u0001 is refused by its parser)
        tests.append(" or ".join(f"{name} == {literal(value)}" for value in values) or "false")
    return " and ".join(f"({test})" for test in tests) if len(tests) > 1 else (tests[0] if tests else "")


def _plain_cosine(settings: RetrievalSettings) -> bool:
    """Whether the final score is the dense first stage's cosine: nothing after the search moves it (no rerank blend,
    recency or stale penalty), so ``relevance_threshold`` is Milvus's range-search ``radius``."""
    return (settings.retriever == "dense" and settings.rerank_strength == 0 and settings.recency_weight == 0
            and settings.stale_penalty == 0)


def _milvus_dense(settings: RetrievalSettings, engine: Mapping[str, Any]) -> dict[str, Any]:
    """The dense request as the trial's first stage sent it (:func:`tuner.engine.dense_params`: the collection's
    metric, ``ef`` or ``nprobe`` of its index) on its vector field, with the threshold as a range search's ``radius``
    where it is the cosine."""
    param = dense_params(index_knobs(str(engine.get("index")), settings), settings.candidate_depth,
                         str(engine.get("metric", "COSINE")))
    if settings.relevance_threshold > 0 and _plain_cosine(settings):
        param = {**param, "params": {**param.get("params", {}), "radius": settings.relevance_threshold}}  # keeps radius < score
    return {"anns_field": (engine.get("fields") or {}).get("vector", DENSE), "param": param, "data": "vector"}


def _milvus_bm25(engine: Mapping[str, Any]) -> dict[str, Any]:
    return {"anns_field": (engine.get("fields") or {}).get("sparse", SPARSE), "param": {"metric_type": "BM25"},
            "data": "question"}


def _milvus_ranker(settings: RetrievalSettings) -> dict[str, Any]:
    """The ranker of a hybrid search: tuner's ``RRFRanker(rrf_k)``; for ``blend``, a ``WeightedRanker`` over
    normalized scores (tuner's own divides BM25 by each question's ceiling, which Milvus cannot compute)."""
    if settings.fusion == "rrf":
        return {"class": "RRFRanker", "args": [settings.rrf_k]}
    return {"class": "WeightedRanker", "args": [settings.hybrid_weight, round(1 - settings.hybrid_weight, 6)],
            "kwargs": {"norm_score": True}}


MILVUS_RETRIEVERS: dict[str, Callable[[RetrievalSettings, Mapping[str, Any]], dict[str, Any]]] = {
    "dense": lambda s, engine: {"search": _milvus_dense(s, engine)},
    "bm25": lambda s, engine: {"search": _milvus_bm25(engine)},
    "hybrid": lambda s, engine: {"hybrid_search": {"requests": [_milvus_dense(s, engine), _milvus_bm25(engine)],
                                                   "ranker": _milvus_ranker(s)}},
}
"""The pymilvus call of each tuner retriever on the collection the trial searched, a collection tuner built or an
attached one (its own field names, from the recorded ``engine``) (``data``: the question's ``vector`` or the
``question`` text, which the collection's BM25 function analyzes)."""
MILVUS_OUTPUT_FIELDS = ("chunk_id", "doc_id", "title", TEXT, "metadata")


def _milvus(settings: RetrievalSettings, provenance: Mapping[str, Any]) -> tuple[dict[str, Any], list[Untranslated]]:
    """The pymilvus search of the measured configuration on the collection it searched: its ``anns_field``,
    ``search_params`` (metric, ef / nprobe of the engine's index, ``radius`` where the threshold is the cosine), ``limit``
    (``candidate_depth``; keep the first ``top_k``), filter expression (:func:`tuner.engine.filter_expression`) and,
    for hybrid, the ranker; with a table of what tuner does after the search, which pymilvus does not."""
    engine = _milvus_engine(provenance)
    fields = engine.get("fields")
    attached = ({"fields": dict(fields), "key": engine.get("key"), "metric": engine.get("metric", "COSINE")}
                if isinstance(fields, Mapping) else {})
    native: dict[str, Any] = {
        "connection": {"uri": engine.get("uri"), "db_name": engine.get("db_name", ""), "token_env": engine.get("token_env")},
        "collection": provenance["collection"], "index": {"type": engine.get("index"), "params": dict(engine.get("index_params") or {})},
        **attached,
        "query_embedding": {"model": settings.embedding_model, "prompt": settings.query_prompt, "normalize": True},
        **retriever_entry(MILVUS_RETRIEVERS, settings, "milvus")(settings, engine),
        "limit": settings.candidate_depth,
        "filter": filter_expression(settings, "clean") if not attached else _attached_filter(settings, attached["fields"]),
        "top_k": settings.top_k,
        "output_fields": list(MILVUS_OUTPUT_FIELDS) if not attached else _attached_outputs(attached["fields"])}
    rows: list[Untranslated] = []
    if settings.retriever == "hybrid" and settings.fusion == "blend":
        rows.append(("hybrid_weight", settings.hybrid_weight, "tuner divides each question's BM25 scores by their "
                     "attainable (k1 + 1) · Σidf, counted over the collection's texts (Milvus gives no document "
                     "frequency); WeightedRanker(norm_score=True) maps BM25 through arctan instead: the nearest, not the "
                     "same order"))
    if settings.relevance_threshold > 0 and not _plain_cosine(settings):
        rows.append(("relevance_threshold", settings.relevance_threshold, "a post-filter on tuner's final score (BM25: "
                     "the share of the question's attainable score; hybrid and reranked: a blend), after the steps below"))
    return native, rows + [row for row in untranslated(settings, "", cutoff=True) if row[0] in AFTER_SEARCH]


def _attached_outputs(fields: Mapping[str, Any]) -> list[str]:
    """What a hit of an attached collection returns: its text, doc id and metadata fields (and its primary key, under
    the key field's name)."""
    metadata = fields.get("metadata") or []
    return [str(fields["text"]), str(fields["doc_id"]), *([metadata] if isinstance(metadata, str) else metadata)]


def _milvus_snippet(native: Mapping[str, Any]) -> list[str]:
    """The search of :func:`_milvus` as Python a team pastes into its pymilvus code. Every value the export carries
    (names, the URI, the model, the prompt, the filter) is a ``repr`` literal in an assignment, never text inside a
    docstring or a comment: a prompt holding triple quotes or a newline stays data. The collection is loaded before the
    first search (a Lite file opened by a fresh process holds it released)."""
    connection, embedding = native["connection"], native["query_embedding"]
    data = {"vector": "[vector]", "question": "[question]"}
    token = f"os.environ[{connection['token_env']!r}]" if connection["token_env"] else "''"
    names = ["MilvusClient"] if "search" in native else ["AnnSearchRequest", "MilvusClient", native["hybrid_search"]["ranker"]["class"]]
    lines = [*(["import os", ""] if connection["token_env"] else []), f"from pymilvus import {', '.join(names)}", "",
             f"COLLECTION = {native['collection']!r}",
             f"EMBEDDING_MODEL = {embedding['model']!r}",
             f"QUERY_PROMPT = {embedding['prompt']!r}",
             f"client = MilvusClient(uri={connection['uri']!r}, token={token}, db_name={connection['db_name']!r})",
             "client.load_collection(COLLECTION)  # a no-op when loaded; a fresh Lite process finds it released", "", "",
             "def search(client: MilvusClient, question: str, vector: list[float]) -> list[dict]:",
             "    \"\"\"The chunks of the measured configuration before tuner's steps after the search; vector: the question "
             "embedded by EMBEDDING_MODEL with QUERY_PROMPT prepended, normalized.\"\"\""]
    common = f"limit={native['limit']!r}, filter={native['filter']!r}, output_fields={native['output_fields']!r}"
    if "search" in native:
        search = native["search"]
        lines.append(f"    hits = client.search(COLLECTION, data={data[search['data']]}, "
                     f"anns_field={search['anns_field']!r}, search_params={search['param']!r}, {common})")
    else:
        hybrid = native["hybrid_search"]
        requests = ", ".join(f"AnnSearchRequest({data[r['data']]}, {r['anns_field']!r}, {r['param']!r}, {native['limit']!r}, "
                             f"expr={native['filter'] or None!r})" for r in hybrid["requests"])
        ranker = hybrid["ranker"]
        arguments = ", ".join([*map(repr, ranker["args"]), *(f"{k}={v!r}" for k, v in ranker.get("kwargs", {}).items())])
        lines.append(f"    hits = client.hybrid_search(COLLECTION, [{requests}], {ranker['class']}({arguments}), "
                     f"limit={native['limit']!r}, output_fields={native['output_fields']!r})")
    lines.append(f"    return list(hits[0])[:{native['top_k']!r}]")
    return lines


MILVUS = register_framework(FrameworkExport(
    "milvus", _milvus, MILVUS_RETRIEVERS, "tuner serve --engine milvus --engine-uri URI over the same collection (docs/engine.md)",
    snippet=_milvus_snippet))
