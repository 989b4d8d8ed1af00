"""Export (front → **export** → serve): export a chosen configuration for deployment: settings, the models they need,
and provenance; read it back (:func:`read_export`, what ``tuner serve`` and ``tuner.Retriever.from_config`` load).
Never a secret.

The ``.env`` form holds one ``TUNER_<SETTING>=value`` line per retrieval setting (strings JSON-quoted, so a
prompt's trailing space survives) and the provenance as ``# key: json`` comment lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import yaml

from tuner import __version__
from tuner.engine import DENSE, SPARSE, TEXT, dense_params, filter_expression, index_knobs, literal, string_literal
from tuner.errors import UserError
from tuner.io import atomic_write_text, line_safe_json, read_yaml_mapping
from tuner.retrieval import FILTER_FIELDS
from tuner.settings import RetrievalSettings, settings_from_mapping

FORMATS = (".yaml", ".yml", ".json", ".env")
ENV_PREFIX = "TUNER_"
SNIPPET_FENCE = "-" * 8
_ENV_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_PROVENANCE_LINE = re.compile(r"^#\s*([a-z_]+):\s(.*)$")


def round_to_step(value: float, step: float) -> float:
    """``value`` with the decimals of ``step`` only: a value Optuna drew on a 0.05 grid is written ``0.15``, not
    ``0.15000000000000002``.

    >>> round_to_step(0.15000000000000002, 0.05)
    0.15
    """
    decimals = max(0, -int(Decimal(str(step)).normalize().as_tuple().exponent))
    return round(value, decimals)


def export_document(
    settings: dict[str, Any], provenance: dict[str, Any], steps: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """The export of one configuration; float settings with a search-space step in ``steps`` are rounded to it."""
    rounded = {
        name: round_to_step(value, steps[name]) if isinstance(value, float) and steps and name in steps else value
        for name, value in settings.items()
    }
    return {
        "settings": rounded,
        "models": {"embedding_model": rounded.get("embedding_model"), "reranker": rounded.get("reranker")},
        "provenance": {**provenance, "tool": f"tuner {__version__}"},
    }


def _env_value(value: Any) -> str:
    return line_safe_json(value) if isinstance(value, (str, dict)) else str(value)


def write_export(path: str | Path, document: dict[str, Any]) -> Path:
    """Write ``document`` as YAML, JSON or a ``.env`` file (TUNER_<SETTING>=value, provenance as comments)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise UserError(f"{target}: unknown export format '{suffix}' (use {', '.join(FORMATS)})")
    if suffix in (".yaml", ".yml"):
        text = "# written by tuner export; load with: tuner serve --config THIS_FILE, or tuner eval DATASET --config THIS_FILE\n"
        text += yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    elif suffix == ".json":
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        lines = ["# written by tuner export; load with: tuner serve --config THIS_FILE"]
        lines += [f"# {key}: {line_safe_json(value)}" for key, value in document["provenance"].items()]
        lines += [f"{ENV_PREFIX}{key.upper()}={_env_value(value)}" for key, value in document["settings"].items()]
        text = "\n".join(lines) + "\n"
    atomic_write_text(target, text)
    return target


@dataclass(frozen=True)
class ExportedConfig:
    """A configuration read back from an export: validated settings and the provenance it carries."""

    settings: RetrievalSettings
    provenance: dict[str, Any]
    source: str


def _read_env(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        lines = path.read_text("utf-8").split("\n")  # one setting a line: U+2028 in a value is not a line end
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    settings: dict[str, Any] = {}
    provenance: dict[str, Any] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            comment = _PROVENANCE_LINE.match(line)
            if comment:
                try:
                    provenance[comment.group(1)] = json.loads(comment.group(2))
                except ValueError:
                    pass  # an ordinary comment that happens to contain a colon
            continue
        match = _ENV_LINE.match(line)
        if match is None:
            raise UserError(f"{path}:{number}: expected KEY=value, got {line[:60]!r}")
        key, value = match.groups()
        if not key.startswith(ENV_PREFIX):
            continue  # a shared .env file may hold other programs' keys
        name = key[len(ENV_PREFIX):].lower()
        if name not in RetrievalSettings.model_fields:
            raise UserError(f"{path}:{number}: {key}: not a retrieval setting (known: "
                            f"{', '.join(ENV_PREFIX + n.upper() for n in RetrievalSettings.model_fields)})")
        if value.startswith(('"', "{")):
            try:
                value = json.loads(value)
            except ValueError:
                raise UserError(f"{path}:{number}: {key}: malformed quoted value") from None
        settings[name] = value
    return settings, provenance


def read_export(path: str | Path) -> ExportedConfig:
    """The settings and provenance of an export (``.yaml``, ``.yml``, ``.json`` or ``.env``) or of a hand-written
    settings mapping; a bad key or value is one :class:`UserError` line naming the file and the key."""
    source = Path(path)
    if source.suffix.lower() == ".env":
        values, provenance = _read_env(source)
    else:
        data = read_yaml_mapping(source, "an export of tuner export")
        values = data["settings"] if isinstance(data.get("settings"), dict) else data
        stored = data.get("provenance")
        provenance = dict(stored) if isinstance(stored, dict) else {}
    return ExportedConfig(settings_from_mapping(values, str(source)), provenance, str(source))


Entry = TypeVar("Entry")
"""A framework's translation of one retriever (a function of the settings)."""
Untranslated = tuple[str, Any, str]
"""A setting the framework has no equivalent for: (name, value, what the framework does instead)."""


def _overlap_units(settings: RetrievalSettings) -> int:
    return int(round(settings.chunk_size * settings.chunk_overlap))


def _untranslated(settings: RetrievalSettings, fusion: str, cutoff: bool) -> list[Untranslated]:
    """What a framework cannot express; ``cutoff`` says whether its similarity cutoff means tuner's threshold."""
    rows: list[Untranslated] = []
    if settings.chunk_unit == "words":
        rows.append(("chunk_unit", "words", "no whitespace-word splitter: the character splitter below is the nearest"))
    rows.append(("chunking", "sentence snapping", "tuner ends a chunk at the last sentence end past half its size; "
                 "the splitters below break at their own separators"))
    if settings.retriever == "hybrid" and settings.fusion == "blend":
        rows.append(("hybrid_weight", settings.hybrid_weight, f"tuner blends normalized scores convexly; {fusion}"))
    if settings.relevance_threshold > 0 and not cutoff:
        rows.append(("relevance_threshold", settings.relevance_threshold,
                     "applies to tuner's normalized final score (BM25: the share of the query's Σidf a chunk reaches; hybrid and "
                     "reranked: a blend); the framework's scores are on another scale"))
    if settings.rerank_strength > 0:
        rows.append(("rerank_strength", settings.rerank_strength,
                     "tuner blends first-stage and reranker scores; frameworks' rerankers replace the order instead"))
        if settings.reranker.startswith("embedding-maxsim"):
            rows.append(("reranker", settings.reranker, "max cosine over a chunk's sentences exists in no framework"))
    if settings.version_policy == "latest":
        rows.append(("version_policy", "latest", "dropping a chunk whose metadata family has a later-dated document in the index "
                     "needs the whole index; a metadata filter (e.g. status: current) is the nearest, if the corpus has one"))
    elif settings.stale_penalty > 0:
        rows.append(("stale_penalty", settings.stale_penalty, "demoting older versions of a family is no framework's option"))
    if settings.recency_weight > 0:
        rows.append(("recency_weight", settings.recency_weight, "tuner blends 0.5^(age / recency_half_life_days) into the "
                     f"score (half-life {settings.recency_half_life_days:g} days); no framework retriever has that blend"))
    if settings.dedupe < 1:
        rows.append(("dedupe", settings.dedupe, "tuner skips a candidate more similar than this to a better one; the "
                     "frameworks' MMR trades relevance against diversity with a λ instead"))
    return rows


def _retriever_entry(entries: Mapping[str, Entry], settings: RetrievalSettings, framework: str) -> Entry:
    """The framework's retriever for ``settings.retriever``; a retriever without an entry is a bug to fix here,
    never a silent stand-in (every name in ``tuner.retrieval.RETRIEVERS`` needs one in each framework)."""
    if settings.retriever not in entries:
        raise ValueError(f"no {framework} equivalent written for retriever '{settings.retriever}' (tuner/export.py)")
    return entries[settings.retriever]


def _filter_untranslated(settings: RetrievalSettings, retriever: str) -> list[Untranslated]:
    """What of the active ``metadata_filter`` the framework's export leaves out: all of it on a BM25 retriever (neither
    framework's BM25 retriever filters), the BM25 half of a hybrid one, and chunk fields the framework does not know."""
    wanted = settings.active_filter
    rows: list[Untranslated] = []
    if not wanted:
        return rows
    if settings.retriever in ("bm25", "hybrid"):
        rows.append(("metadata_filter", settings.metadata_filter, f"{retriever} has no metadata filter: "
                     + ("nothing is filtered" if settings.retriever == "bm25" else "only the dense retriever filters")
                     + f"; filter the documents before building it ({wanted})"))
    fields = [key for key in wanted if key in FILTER_FIELDS]
    if fields:
        rows.append(("metadata_filter", settings.metadata_filter, f"tuner chunk fields ({', '.join(fields)}): "
                     "copy them into each document's metadata for the framework's filter to see them"))
    return rows


def _langchain_dense(k: int, wanted: Mapping[str, Any]) -> dict[str, Any]:
    # no score_threshold: LangChain's FAISS turns an inner product p into the relevance score 1 − p, not tuner's cosine.
    # FAISS's dict filter keeps a document whose metadata equals each value, or is in each list: tuner's rule
    search: dict[str, Any] = {"k": k, **({"filter": dict(wanted)} if wanted else {})}
    return {"class": "langchain_community.vectorstores.FAISS", "distance_strategy": "MAX_INNER_PRODUCT",
            "as_retriever": {"search_type": "similarity", "search_kwargs": search}}


def _langchain_bm25(k: int) -> dict[str, Any]:
    return {"class": "langchain_community.retrievers.BM25Retriever", "k": k}


LANGCHAIN_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: _langchain_bm25(s.top_k),
    "dense": lambda s: _langchain_dense(s.top_k, s.active_filter),
    # EnsembleRetriever is weighted reciprocal-rank fusion with constant c: equal weights and c = rrf_k are tuner's rrf
    "hybrid": lambda s: {
        "class": "langchain.retrievers.EnsembleRetriever",
        **({"weights": [0.5, 0.5], "c": s.rrf_k} if s.fusion == "rrf" else {
            "weights": [round(1 - s.hybrid_weight, 6), s.hybrid_weight]}),
        "retrievers": [_langchain_bm25(s.candidate_depth), _langchain_dense(s.candidate_depth, s.active_filter)]},
}


def _langchain(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    size, overlap, unit = settings.chunk_size, _overlap_units(settings), settings.chunk_unit
    splitter: dict[str, Any] = (
        {"class": "langchain_text_splitters.SentenceTransformersTokenTextSplitter", "model_name": settings.embedding_model,
         "tokens_per_chunk": size, "chunk_overlap": overlap}
        if unit == "tokens" else
        {"class": "langchain_text_splitters.RecursiveCharacterTextSplitter", "chunk_size": size, "chunk_overlap": overlap}
    )
    embeddings = {"class": "langchain_huggingface.HuggingFaceEmbeddings", "model_name": settings.embedding_model,
                  "encode_kwargs": {"normalize_embeddings": True, "prompt": settings.document_prompt},
                  "query_encode_kwargs": {"normalize_embeddings": True, "prompt": settings.query_prompt}}
    retriever = _retriever_entry(LANGCHAIN_RETRIEVERS, settings, "langchain")(settings)
    native = {"text_splitter": splitter, "embeddings": embeddings, "retriever": retriever}
    if settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0:
        native["reranker"] = {"class": "langchain.retrievers.document_compressors.CrossEncoderReranker",
                              "model": settings.reranker.split(":", 1)[1], "top_n": settings.top_k}
    return native, (_untranslated(settings, "EnsembleRetriever fuses ranks (weighted reciprocal rank fusion)", cutoff=False)
                    + _filter_untranslated(settings, "BM25Retriever"))


def _llamaindex_filters(wanted: Mapping[str, Any]) -> dict[str, Any]:
    """``MetadataFilters`` all of whose filters must hold (``condition: and``): ``ExactMatchFilter`` for one value,
    ``MetadataFilter`` with ``operator: in`` for a list."""
    filters = [{"class": "llama_index.core.vector_stores.MetadataFilter", "key": key, "value": value, "operator": "in"}
               if isinstance(value, list) else
               {"class": "llama_index.core.vector_stores.ExactMatchFilter", "key": key, "value": value}
               for key, value in wanted.items()]
    return {"class": "llama_index.core.vector_stores.MetadataFilters", "filters": filters, "condition": "and"}


def _llamaindex_dense(k: int, wanted: Mapping[str, Any]) -> dict[str, Any]:
    return {"class": "llama_index.core.VectorStoreIndex.as_retriever", "similarity_top_k": k,
            **({"filters": _llamaindex_filters(wanted)} if wanted else {})}


def _llamaindex_bm25(k: int) -> dict[str, Any]:
    return {"class": "llama_index.retrievers.bm25.BM25Retriever", "similarity_top_k": k}


LLAMAINDEX_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: _llamaindex_bm25(s.top_k),
    "dense": lambda s: _llamaindex_dense(s.top_k, s.active_filter),
    # mode reciprocal_rerank is reciprocal-rank fusion with k fixed at 60 (see LLAMAINDEX_RRF_K)
    "hybrid": lambda s: {
        "class": "llama_index.core.retrievers.QueryFusionRetriever", "num_queries": 1, "similarity_top_k": s.top_k,
        **({"mode": "reciprocal_rerank"} if s.fusion == "rrf" else {
            "mode": "relative_score", "retriever_weights": [round(1 - s.hybrid_weight, 6), s.hybrid_weight]}),
        "retrievers": [_llamaindex_bm25(s.candidate_depth), _llamaindex_dense(s.candidate_depth, s.active_filter)]},
}
LLAMAINDEX_RRF_K = 60
"""The k of LlamaIndex's ``reciprocal_rerank`` fusion, a constant there: another ``rrf_k`` is not expressible."""


def _llamaindex(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    size, overlap, unit = settings.chunk_size, _overlap_units(settings), settings.chunk_unit
    splitter: dict[str, Any] = {"class": "llama_index.core.node_parser.SentenceSplitter", "chunk_size": size, "chunk_overlap": overlap,
                                "tokenizer": (f"transformers.AutoTokenizer.from_pretrained({settings.embedding_model!r}).tokenize"
                                              if unit == "tokens" else "list  # one unit per character")}
    embed = {"class": "llama_index.embeddings.huggingface.HuggingFaceEmbedding", "model_name": settings.embedding_model,
             "query_instruction": settings.query_prompt, "text_instruction": settings.document_prompt, "normalize": True}
    retriever = _retriever_entry(LLAMAINDEX_RETRIEVERS, settings, "llamaindex")(settings)
    native: dict[str, Any] = {"node_parser": splitter, "embed_model": embed, "retriever": retriever}
    cutoff = settings.retriever == "dense" and settings.rerank_strength == 0  # the node score is then tuner's cosine
    if settings.relevance_threshold > 0 and cutoff:
        native["node_postprocessors"] = [{"class": "llama_index.core.postprocessor.SimilarityPostprocessor",
                                          "similarity_cutoff": settings.relevance_threshold}]
    if settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0:
        native.setdefault("node_postprocessors", []).append({
            "class": "llama_index.core.postprocessor.SentenceTransformerRerank",
            "model": settings.reranker.split(":", 1)[1], "top_n": settings.top_k})
    rows = _untranslated(settings, "QueryFusionRetriever(mode='relative_score') min-max scales each list first", cutoff)
    if settings.retriever == "hybrid" and settings.fusion == "rrf" and settings.rrf_k != LLAMAINDEX_RRF_K:
        rows.append(("rrf_k", settings.rrf_k, f"QueryFusionRetriever's reciprocal_rerank fixes k at {LLAMAINDEX_RRF_K}"))
    return native, rows + _filter_untranslated(settings, "BM25Retriever")


DIFY_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: {"search_method": "full_text_search"},
    "dense": lambda s: {"search_method": "semantic_search"},
    "hybrid": lambda s: {"search_method": "hybrid_search"},
}
"""Dify's knowledge-base search method nearest each tuner retriever."""
RAGFLOW_RETRIEVERS: dict[str, Callable[[RetrievalSettings], dict[str, Any]]] = {
    "bm25": lambda s: {"vector_similarity_weight": 0.0},
    "dense": lambda s: {"vector_similarity_weight": 1.0},
    "hybrid": lambda s: {"vector_similarity_weight": s.hybrid_weight if s.fusion == "blend" else 0.5},
}
"""RAGFlow always blends keyword and vector similarity: the vector weight nearest each tuner retriever."""


def _platform_filter(wanted: Mapping[str, Any]) -> dict[str, Any]:
    """A ``metadata_filter`` as Dify's manual metadata filtering conditions (``is`` one value, ``in`` a list)."""
    return {"logical_operator": "and", "conditions": [
        {"name": key, "comparison_operator": "in" if isinstance(value, list) else "is", "value": value}
        for key, value in wanted.items()]}


def _dify(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    """The retrieval settings of a Dify knowledge base (Knowledge → Settings → Retrieval Setting, and a knowledge
    retrieval node's metadata filtering) nearest the measured configuration."""
    retrieval: dict[str, Any] = {**_retriever_entry(DIFY_RETRIEVERS, settings, "dify")(settings), "top_k": settings.top_k, "score_threshold_enabled": settings.relevance_threshold > 0,
                                 "score_threshold": settings.relevance_threshold}
    cross_encoder = settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0
    retrieval["reranking_enable"] = cross_encoder
    if cross_encoder:
        retrieval.update(reranking_mode="reranking_model",
                         reranking_model={"reranking_model_name": settings.reranker.split(":", 1)[1]})
    elif settings.retriever == "hybrid" and settings.fusion == "blend":
        retrieval.update(reranking_mode="weighted_score", weights={
            "vector_setting": {"vector_weight": settings.hybrid_weight, "embedding_model_name": settings.embedding_model},
            "keyword_setting": {"keyword_weight": round(1 - settings.hybrid_weight, 6)}})
    native: dict[str, Any] = {"indexing_technique": "high_quality", "embedding_model": settings.embedding_model,
                              "process_rule": {"mode": "custom", "rules": {"segmentation": {
                                  "max_tokens": settings.chunk_size, "chunk_overlap": _overlap_units(settings)}}},
                              "retrieval_model": retrieval}
    if settings.active_filter:
        native["metadata_filtering_conditions"] = _platform_filter(settings.active_filter)
    rows = _untranslated(settings, "Dify's weighted score mixes its own keyword score (not tuner's normalized BM25) "
                         "with the vector score", cutoff=settings.retriever == "dense" and settings.rerank_strength == 0)
    if settings.chunk_unit != "tokens":
        rows.append(("chunk_unit", settings.chunk_unit, "Dify's maximum chunk length is counted in its own units, not "
                     f"{settings.chunk_unit}: check the length of a few chunks after indexing"))
    if settings.retriever == "hybrid" and settings.fusion == "rrf":
        rows.append(("fusion", "rrf", "Dify's hybrid search has no reciprocal-rank fusion: weighted score or a rerank "
                     "model; weighted score at 0.5/0.5 is the nearest"))
    rows.append(("candidate_depth", settings.candidate_depth, "Dify has no first-stage depth: it reranks what each "
                 "search returns"))
    return native, rows + [row for row in _filter_untranslated(settings, "full-text search") if row[2].startswith("tuner chunk")]


def _ragflow(settings: RetrievalSettings) -> tuple[dict[str, Any], list[Untranslated]]:
    """The retrieval settings of a RAGFlow chat assistant or retrieval component (and the dataset's chunking) nearest
    the measured configuration. RAGFlow always blends keyword and vector similarity, weighted ``vector_similarity_weight``."""
    weight = float(_retriever_entry(RAGFLOW_RETRIEVERS, settings, "ragflow")(settings)["vector_similarity_weight"])
    cross_encoder = settings.reranker.startswith("cross-encoder:") and settings.rerank_strength > 0
    native: dict[str, Any] = {
        "dataset": {"embedding_model": settings.embedding_model, "parser_config": {"chunk_token_num": settings.chunk_size}},
        "retrieval": {"similarity_threshold": settings.relevance_threshold, "vector_similarity_weight": weight,
                      "keywords_similarity_weight": round(1 - weight, 6), "top_n": settings.top_k,
                      "top_k": settings.candidate_depth, "rerank_id": settings.reranker.split(":", 1)[1] if cross_encoder else ""},
    }
    if settings.active_filter:
        native["retrieval"]["meta_data_filter"] = {"method": "manual", "manual": _platform_filter(settings.active_filter)["conditions"]}
    rows = _untranslated(settings, "RAGFlow blends its own keyword similarity (not tuner's normalized BM25) with the "
                         "vector cosine", cutoff=False)
    if settings.retriever != "hybrid":
        rows.append(("retriever", settings.retriever, f"RAGFlow always searches both ways: vector_similarity_weight {weight:g} "
                     "is the nearest to one alone"))
    elif settings.fusion == "rrf":
        rows.append(("fusion", "rrf", "RAGFlow has no reciprocal-rank fusion: its weighted blend at 0.5 is the nearest"))
    if settings.chunk_unit != "tokens" or settings.chunk_overlap > 0:
        rows.append(("chunking", f"{settings.chunk_size} {settings.chunk_unit}, overlap {settings.chunk_overlap:g}",
                     "RAGFlow's chunk_token_num counts its own tokenizer's tokens and its general parser has no overlap"))
    return native, rows + [row for row in _filter_untranslated(settings, "keyword search") if row[2].startswith("tuner chunk")]


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
        **_retriever_entry(MILVUS_RETRIEVERS, settings, "milvus")(settings, engine),
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
    return native, rows + [row for row in _untranslated(settings, "", cutoff=True) if row[0] in TUNER_AFTER_SEARCH]


def _attached_outputs(fields: Mapping[str, Any]) -> list[str]:
    """What a hit of an attached collection returns: its text, doc id and metadata fields (and its primary key, under
    the key field's name)."""
    metadata = fields.get("metadata") or []
    return [str(fields["text"]), str(fields["doc_id"]), *([metadata] if isinstance(metadata, str) else metadata)]


TUNER_AFTER_SEARCH = ("rerank_strength", "reranker", "version_policy", "stale_penalty", "recency_weight", "dedupe")
"""What tuner does to the engine's candidates after the search, on every engine (docs/engine.md)."""


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


FRAMEWORKS: dict[str, Callable[[RetrievalSettings, Mapping[str, Any]], tuple[dict[str, Any], list[Untranslated]]]] = {
    "langchain": lambda s, _: _langchain(s), "llamaindex": lambda s, _: _llamaindex(s), "dify": lambda s, _: _dify(s),
    "ragflow": lambda s, _: _ragflow(s), "milvus": _milvus,
}
"""Each ``--format``'s nearest settings of a configuration and its provenance (Milvus's reads where it was measured)."""
SNIPPETS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {"milvus": _milvus_snippet}
"""The formats whose settings are also code to paste, from their native settings."""
ADAPTERS = {"langchain": "tuner.deploy.langchain.TunerLangChainRetriever",
            "llamaindex": "tuner.deploy.llamaindex.TunerLlamaIndexRetriever",
            "dify": "tuner serve (POST /retrieval) registered as a Dify external knowledge base (docs/deploy.md)",
            "ragflow": "tuner serve (POST /retrieval) registered as a Dify external knowledge base (docs/deploy.md); "
                       "measure RAGFlow's own knowledge base with tuner eval --external",
            "milvus": "tuner serve --engine milvus --engine-uri URI over the same collection (docs/engine.md)"}


def _one_line(value: Any) -> str:
    """``value`` as text on one comment line: a line break (any YAML or Python reads as one) becomes a space, so a
    setting's value never ends the comment and starts YAML or code.

    >>> _one_line("a\\nb\\u2028c"), _one_line(0.5)
    ('a b c', '0.5')
    """
    return " ".join(str(value).splitlines())


def write_framework_export(path: str | Path, document: dict[str, Any], framework: str) -> Path:
    """The nearest ``framework`` settings of an export (LangChain, LlamaIndex, the knowledge bases of Dify and
    RAGFlow: chunk size and overlap in their units, ``k`` / ``top_k``, a similarity cutoff where one exists; Milvus: the
    search of the collection the trial measured) as YAML, headed by a table of the settings that do not translate (and,
    for Milvus, the search as Python); the adapter reproduces the measured retrieval instead."""
    native, untranslated = FRAMEWORKS[framework](settings_from_mapping(document["settings"], "export settings"),
                                                 document["provenance"])
    header = [f"# {framework} settings nearest to the measured configuration, written by tuner export --format {framework}.",
              f"# For the retrieval the study measured, use {ADAPTERS[framework]}"
              + (".from_config(...) instead." if framework in ("langchain", "llamaindex") else " instead."),
              "# What does not translate:", "#", "# | setting | value | why |", "# |---|---|---|"]
    header += [f"# | {_one_line(name)} | {_one_line(value)} | {_one_line(why)} |" for name, value, why in untranslated]
    if framework in SNIPPETS:
        header += ["#", f"# As {framework} code (between the {SNIPPET_FENCE} lines):", f"# {SNIPPET_FENCE}"]
        header += [f"# {line}".rstrip() for line in SNIPPETS[framework](native)] + [f"# {SNIPPET_FENCE}"]
    body = {"framework": framework, "native": native, "adapter": ADAPTERS[framework],
            "not_translated": [{"setting": name, "value": value, "why": why} for name, value, why in untranslated],
            "settings": document["settings"], "provenance": document["provenance"]}
    target = Path(path)
    atomic_write_text(target, "\n".join(header) + "\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True))
    return target
