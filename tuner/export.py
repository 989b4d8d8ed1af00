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
from typing import Any

import yaml

from tuner import __version__
from tuner.errors import UserError
from tuner.io import atomic_write_text, line_safe_json, read_yaml_mapping
from tuner.retrieval import FILTER_FIELDS
from tuner.settings import RetrievalSettings, settings_from_mapping

FORMATS = (".yaml", ".yml", ".json", ".env")
ENV_PREFIX = "TUNER_"
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


def _retriever_entry(entries: Mapping[str, Callable[[RetrievalSettings], dict[str, Any]]], settings: RetrievalSettings,
                     framework: str) -> dict[str, Any]:
    """The framework's retriever for ``settings.retriever``; a retriever without an entry is a bug to fix here,
    never a silent stand-in (every name in ``tuner.retrieval.RETRIEVERS`` needs one in each framework)."""
    if settings.retriever not in entries:
        raise ValueError(f"no {framework} equivalent written for retriever '{settings.retriever}' (tuner/export.py)")
    return entries[settings.retriever](settings)


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
    retriever = _retriever_entry(LANGCHAIN_RETRIEVERS, settings, "langchain")
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
    retriever = _retriever_entry(LLAMAINDEX_RETRIEVERS, settings, "llamaindex")
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


FRAMEWORKS = {"langchain": _langchain, "llamaindex": _llamaindex}
ADAPTERS = {"langchain": "tuner.deploy.langchain.TunerLangChainRetriever", "llamaindex": "tuner.deploy.llamaindex.TunerLlamaIndexRetriever"}


def write_framework_export(path: str | Path, document: dict[str, Any], framework: str) -> Path:
    """The nearest ``framework`` settings of an export (chunk size and overlap in the framework's units, ``k`` /
    ``similarity_top_k``, a similarity cutoff where one exists) as YAML, headed by a table of the settings that
    do not translate; the adapter ``tuner.deploy.<framework>`` reproduces the measured retrieval instead."""
    native, untranslated = FRAMEWORKS[framework](settings_from_mapping(document["settings"], "export settings"))
    header = [f"# {framework} settings nearest to the measured configuration, written by tuner export --format {framework}.",
              f"# For the retrieval the study measured, use {ADAPTERS[framework]}.from_config(...) instead.",
              "# What does not translate:", "#", "# | setting | value | why |", "# |---|---|---|"]
    header += [f"# | {name} | {value} | {why} |" for name, value, why in untranslated]
    body = {"framework": framework, "native": native, "adapter": ADAPTERS[framework],
            "not_translated": [{"setting": name, "value": value, "why": why} for name, value, why in untranslated],
            "settings": document["settings"], "provenance": document["provenance"]}
    target = Path(path)
    atomic_write_text(target, "\n".join(header) + "\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True))
    return target
