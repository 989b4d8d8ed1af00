"""Settings (the knobs of chunks → … → ranking): the knobs a study turns, validated once and passed as one typed object."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic.fields import FieldInfo

from tuner.errors import UserError, describe_validation_error
from tuner.io import read_yaml_mapping
from tuner.strict import StrictModel

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
DEFAULT_RERANKER = "embedding-maxsim"


FilterValue = Union[str, int, float, bool, list[Union[str, int, float, bool]]]
MetadataFilter = dict[str, FilterValue]
"""A metadata filter: per key, the value a chunk's field or document metadata must equal, or a list of them
(:func:`tuner.retrieval.filter_mask`)."""
NO_FILTER = "none"

ChunkUnit = Literal["tokens", "chars", "words"]
"""What ``chunk_size`` counts (:mod:`tuner.chunking`)."""

Stage = Literal["chunking", "encoding", "first_stage", "rerank", "final_ranking"]
STAGES: tuple[Stage, ...] = ("chunking", "encoding", "first_stage", "rerank", "final_ranking")
"""The retrieval stages in pipeline order; every setting belongs to exactly one (``stage_fields``)."""


def _knob(stage: Stage, default: Any, description: str, **constraints: Any) -> Any:
    """A setting of ``stage``: the stage decides which cache keys hash it (:mod:`tuner.retrieval._keys`), the
    description is its ``--flag``'s help (``tuner.commands``)."""
    return Field(default, description=description, json_schema_extra={"stage": stage}, **constraints)


class RetrievalSettings(StrictModel):
    """One retrieval configuration.

    ``chunk_size`` is counted in ``chunk_unit``: ``tokens`` of the embedding model's tokenizer (default),
    ``chars``, or the legacy whitespace ``words`` (English only; see ``tuner.chunking``); chunks end at
    sentence ends where possible. ``chunk_overlap`` is the fraction of a chunk repeated at the start of
    the next one. ``relevance_threshold`` applies to the
    normalized final score in [0, 1] (see ``tuner.retrieval``); ``rerank_strength`` blends first-stage
    and reranker scores (0 = first stage only, 1 = reranker only).
    """

    top_k: int = _knob("final_ranking", 5, "chunks in the final context (at most candidate_depth)", ge=1, le=1000)
    relevance_threshold: float = _knob(
        "final_ranking", 0.0, "drop candidates whose normalized score is below this (0..1)", ge=0.0, le=1.0
    )
    rerank_strength: float = _knob(
        "final_ranking", 0.0, "blend of reranker and first-stage scores (0 = no reranking, 1 = reranker only)", ge=0.0, le=1.0
    )
    version_policy: Literal["all", "latest"] = _knob(
        "final_ranking", "all",
        "latest drops a candidate whose document has a newer version (same metadata family, later date) in the index; all keeps it",
    )
    stale_penalty: float = _knob(
        "final_ranking", 0.0, "with version_policy all, multiply a stale candidate's score by 1 - this (0..1)", ge=0.0, le=1.0
    )
    recency_weight: float = _knob(
        "final_ranking", 0.0, "weight w of the recency score in the final score, (1 - w) * score + w * recency (0..1)",
        ge=0.0, le=1.0,
    )
    recency_half_life_days: float = _knob(
        "final_ranking", 365.0, "days behind the newest dated document at which the recency score halves", gt=0.0, le=100_000.0
    )
    dedupe: float = _knob(
        "final_ranking", 1.0,
        "drop a candidate whose cosine similarity to a better-ranked kept one exceeds this (0..1; 1 = off)", ge=0.0, le=1.0,
    )
    chunk_size: int = _knob("chunking", 256, "chunk size, counted in --chunk-unit", ge=8, le=100_000)
    chunk_unit: ChunkUnit = _knob(
        "chunking", "tokens", "tokens (of the embedding model's tokenizer, default), chars, or legacy words"
    )
    chunk_overlap: float = _knob("chunking", 0.0, "fraction of a chunk repeated in the next one (0..0.9)", ge=0.0, lt=0.9)
    retriever: Literal["bm25", "dense", "hybrid"] = _knob("first_stage", "hybrid", "bm25, dense or hybrid")
    dense_index: Literal["flat", "hnsw", "ivf"] = _knob(
        "first_stage", "flat",
        "vector index of dense and hybrid retrieval: flat (exact), hnsw (approximate graph) or ivf (inverted lists, an "
        "engine's IVF index: engine milvus)",
    )
    hnsw_ef: int = _knob(
        "first_stage", 128,
        "candidates an HNSW search keeps while walking the graph (Milvus ef, FAISS efSearch; raised to candidate_depth "
        "when below it): higher finds more of the exact neighbours and takes longer", ge=1, le=32768,
    )
    ivf_nprobe: int = _knob(
        "first_stage", 8,
        "inverted lists an IVF search visits (Milvus nprobe; at most the index's nlist): higher finds more of the exact "
        "neighbours and takes longer", ge=1, le=65536,
    )
    fusion: Literal["blend", "rrf"] = _knob(
        "first_stage", "blend",
        "how hybrid fuses BM25 and dense: blend (hybrid_weight · dense + (1 − hybrid_weight) · bm25 of normalized scores) "
        "or rrf (reciprocal-rank fusion with rrf_k)",
    )
    hybrid_weight: float = _knob(
        "first_stage", 0.5, "weight of the dense score in hybrid fusion blend (0..1)", ge=0.0, le=1.0
    )
    rrf_k: int = _knob("first_stage", 60, "k of reciprocal-rank fusion, Σ 1/(k + rank) (fusion rrf)", ge=1, le=10_000)
    candidate_depth: int = _knob(
        "first_stage", 50, "first-stage candidates kept and reranked per question", ge=1, le=10_000
    )
    metadata_filter: str = _knob(
        "first_stage", NO_FILTER, f"name of the metadata_filters entry the first stage searches within ({NO_FILTER} = every chunk)"
    )
    metadata_filters: dict[str, MetadataFilter] = _knob(
        "first_stage", {},
        "named metadata filters, e.g. '{current: {status: current}}' (a study file's filters:); a chunk passes a filter "
        "when its field or its document's metadata equals the value (or one of a list) of every key",
    )
    embedding_model: str = _knob(
        "encoding", DEFAULT_EMBEDDING_MODEL,
        "sentence-transformers model name or local path, or an endpoint: openai:MODEL@BASE_URL",
    )
    query_prompt: str = _knob(
        "encoding", "", "text put before each question when it is embedded, e.g. 'query: '; 'auto' = the model's preset"
    )
    document_prompt: str = _knob(
        "encoding", "",
        "text put before each chunk or sentence when it is embedded, e.g. 'passage: '; 'auto' = the model's preset",
    )
    reranker: str = _knob("rerank", DEFAULT_RERANKER, "embedding-maxsim (offline default) or cross-encoder:NAME_OR_PATH")

    @field_validator("reranker")
    @classmethod
    def _known_reranker(cls, value: str) -> str:
        if value == DEFAULT_RERANKER:
            return value  # the registry's module loads numpy and the encoders: only for another name
        from tuner.rerank import check_reranker_spec

        check_reranker_spec(value)
        return value

    @model_validator(mode="after")
    def _within_bounds(self) -> RetrievalSettings:
        for name, bound in AT_MOST.items():
            if getattr(self, name) > getattr(self, bound):
                raise ValueError(f"{name} ({getattr(self, name)}) exceeds {bound} ({getattr(self, bound)})")
        return self

    @model_validator(mode="after")
    def _known_filter(self) -> RetrievalSettings:
        if NO_FILTER in self.metadata_filters:
            raise ValueError(f"metadata_filters: '{NO_FILTER}' is reserved for no filter; name the filter otherwise")
        if self.metadata_filter != NO_FILTER and self.metadata_filter not in self.metadata_filters:
            raise ValueError(f"metadata_filter: unknown filter '{self.metadata_filter}' (defined: "
                             f"{', '.join([NO_FILTER, *self.metadata_filters])})")
        return self

    @model_validator(mode="before")
    @classmethod
    def _packaged_prompts(cls, data: Any) -> Any:
        """A packaged model's prompts are part of the model (``multilingual-e5-small``: ``query: `` / ``passage: ``):
        settings naming it get them unless they write their own (an empty string included)."""
        model = data.get("embedding_model") if isinstance(data, dict) else None
        if not isinstance(model, str) or model == DEFAULT_EMBEDDING_MODEL:
            return data  # the default has no prompts: the embedding package is not imported to say so
        from tuner.embedding import PACKAGED_MODELS

        packaged = PACKAGED_MODELS.get(model)
        if packaged is None:
            return data
        return {"query_prompt": packaged.query_prompt, "document_prompt": packaged.document_prompt, **data}

    @field_validator("query_prompt", "document_prompt")
    @classmethod
    def _resolve_auto_prompt(cls, value: str, info: ValidationInfo) -> str:
        if value != "auto":
            return value
        from tuner.embedding import preset_prompts

        model = info.data.get("embedding_model", DEFAULT_EMBEDDING_MODEL)
        presets = preset_prompts(model)
        if presets is None:
            raise ValueError(f"no preset prompt for embedding model '{model}': write the prompt text itself")
        return presets[0] if info.field_name == "query_prompt" else presets[1]

    @property
    def chunking(self) -> Chunking:
        """The chunking group, what :func:`tuner.chunking.chunk_dataset` applies: the ``chunking`` stage's settings and
        the tokenizer's model when they count tokens."""
        return Chunking(**self.stage("chunking"), tokenizer=self.embedding_model if self.chunk_unit == "tokens" else "")

    @property
    def encoding(self) -> str:
        """What dense vectors and scores depend on: the embedding model, with both prompts when either is set.
        Without prompts it is the model id alone, so cache keys written before prompts existed stay valid."""
        if not (self.query_prompt or self.document_prompt):
            return self.embedding_model
        return json.dumps([self.embedding_model, self.query_prompt, self.document_prompt], ensure_ascii=False)

    def stage(self, stage: Stage) -> dict[str, Any]:
        """This configuration's settings of ``stage``, by name."""
        return {name: getattr(self, name) for name in stage_fields(stage)}

    @property
    def active_filter(self) -> MetadataFilter:
        """The definition of ``metadata_filter`` (empty for ``none``): what the first stage's candidates depend on."""
        return {} if self.metadata_filter == NO_FILTER else self.metadata_filters[self.metadata_filter]

    def acts(self, name: str) -> bool:
        """Whether setting ``name`` can change a ranking given this configuration's other settings (:data:`ACTS_WHEN`)."""
        return acts(name, self.model_dump())

    @property
    def ranking(self) -> Ranking:
        """The final-ranking group, what :func:`tuner.retrieval.final_ranking` applies to the candidates."""
        return Ranking(**self.stage("final_ranking"))


@dataclass(frozen=True)
class Chunking:
    """The settings of chunking (stage ``chunking``) and ``tokenizer``, the embedding model whose tokens
    ``chunk_unit: tokens`` counts ("" for other units): everything chunks depend on, so it is also their cache key
    (:func:`tuner.retrieval._keys.stage_key`) and a memo key (hashable)."""

    chunk_size: int
    chunk_unit: ChunkUnit
    chunk_overlap: float
    tokenizer: str = ""


@dataclass(frozen=True)
class Ranking:
    """The settings of the final ranking (stage ``final_ranking``): array work on cached candidates."""

    top_k: int
    relevance_threshold: float
    rerank_strength: float
    version_policy: str = "all"
    stale_penalty: float = 0.0
    recency_weight: float = 0.0
    recency_half_life_days: float = 365.0
    dedupe: float = 1.0

    @property
    def reads_versions(self) -> bool:
        """Whether this ranking needs the candidates' family and date (:class:`tuner.retrieval.ChunkVersions`)."""
        return self.version_policy == "latest" or self.stale_penalty > 0 or self.recency_weight > 0

    @property
    def reads_vectors(self) -> bool:
        """Whether this ranking needs the candidates' chunk vectors (``dedupe`` compares them)."""
        return self.dedupe < 1.0

    @property
    def reranks(self) -> bool:
        """Whether this ranking needs reranker scores."""
        return self.rerank_strength > 0.0


@dataclass(frozen=True)
class Clause:
    """One test of one setting: ``setting`` ``is`` / ``is not`` / ``>`` ``value``; it reads as written.

    >>> str(Clause("retriever", "is not", "bm25")), Clause("rerank_strength", ">", 0).holds({"rerank_strength": 0.5})
    ('retriever is not bm25', True)
    """

    setting: str
    op: Literal["is", "is not", ">"]
    value: Any

    def holds(self, values: Mapping[str, Any]) -> bool:
        actual = values[self.setting]
        if self.op == "is":
            return bool(actual == self.value)
        if self.op == "is not":
            return bool(actual != self.value)
        return bool(actual > self.value)

    def __str__(self) -> str:
        return f"{self.setting} {self.op} {self.value}"


@dataclass(frozen=True)
class ActsWhen:
    """When a setting can change a ranking: when every clause holds. What it reads, and how it is said in words, are
    the clauses' own, so the three cannot disagree."""

    clauses: tuple[Clause, ...]

    @property
    def reads(self) -> tuple[str, ...]:
        """The settings the clauses test, in clause order."""
        return tuple(dict.fromkeys(clause.setting for clause in self.clauses))

    def test(self, values: Mapping[str, Any]) -> bool:
        return all(clause.holds(values) for clause in self.clauses)

    @property
    def when(self) -> str:
        return " and ".join(str(clause) for clause in self.clauses)


def _when(*clauses: tuple[str, Literal["is", "is not", ">"], Any]) -> ActsWhen:
    return ActsWhen(tuple(Clause(*clause) for clause in clauses))


ACTS_WHEN: dict[str, ActsWhen] = {
    "fusion": _when(("retriever", "is", "hybrid")),
    "hybrid_weight": _when(("retriever", "is", "hybrid"), ("fusion", "is", "blend")),
    "rrf_k": _when(("retriever", "is", "hybrid"), ("fusion", "is", "rrf")),
    "dense_index": _when(("retriever", "is not", "bm25")),
    "hnsw_ef": _when(("retriever", "is not", "bm25"), ("dense_index", "is", "hnsw")),
    "ivf_nprobe": _when(("retriever", "is not", "bm25"), ("dense_index", "is", "ivf")),
    "reranker": _when(("rerank_strength", ">", 0)),
    "stale_penalty": _when(("version_policy", "is", "all")),
    "recency_half_life_days": _when(("recency_weight", ">", 0)),
}
"""The settings that act only under some values of others; every other setting always acts. A study samples such a
knob only when its trial's other choices let it act (``tuner.study.SearchSpace``), and a first-stage cache key hashes
it only then (``tuner.retrieval._keys.stage_key``)."""

AT_MOST: dict[str, str] = {"top_k": "candidate_depth"}
"""An int setting whose value may not exceed another's: the final ranking picks ``top_k`` from the first stage's
``candidate_depth`` candidates, so more cannot be returned. Settings validate it; a study samples ``top_k`` after
``candidate_depth`` with its ``high`` clipped there (``tuner.study.SearchSpace``)."""

DECIDERS: tuple[str, ...] = tuple(dict.fromkeys(
    [name for condition in ACTS_WHEN.values() for name in condition.reads] + list(AT_MOST.values())))
"""The settings that decide whether another acts (:data:`ACTS_WHEN`) or how far it reaches (:data:`AT_MOST`)."""


def acts(name: str, values: Mapping[str, Any]) -> bool:
    """Whether setting ``name`` can act under ``values`` (settings by name; every name the condition reads).

    >>> acts("hybrid_weight", {"retriever": "bm25", "fusion": "blend"}), acts("top_k", {})
    (False, True)
    """
    condition = ACTS_WHEN.get(name)
    return condition is None or condition.test(values)


def stage_fields(stage: Stage) -> tuple[str, ...]:
    """The settings of ``stage``, in declaration order."""
    return tuple(name for name, info in RetrievalSettings.model_fields.items() if _stage_of(info) == stage)


def _stage_of(info: FieldInfo) -> str:
    extra = info.json_schema_extra
    assert isinstance(extra, dict), "every setting is declared with _knob"
    return str(extra["stage"])


def settings_from_mapping(
    values: Mapping[str, Any], source: str, defaults: Mapping[str, Any] | None = None
) -> RetrievalSettings:
    """Validate user-provided settings; a bad key or value becomes one line naming ``source`` and the key.

    ``defaults`` (a dataset manifest's model settings, ``Dataset.model_defaults``) fill the keys ``values``
    leaves out, before the built-in defaults; ``auto`` prompts resolve against the embedding model the
    merged settings name."""
    try:
        return RetrievalSettings(**{**(defaults or {}), **values})
    except ValidationError as exc:
        raise UserError(f"{source}: {describe_validation_error(exc)}") from None


def read_settings_file(path: str) -> dict[str, Any]:
    """The settings a YAML/JSON file names, unvalidated: a file written by ``tuner export`` (settings under
    ``settings:``) or a hand-written mapping naming any subset of the settings."""
    data = read_yaml_mapping(path, "retrieval settings")
    return data["settings"] if isinstance(data.get("settings"), dict) else data


def load_settings_file(path: str, defaults: Mapping[str, Any] | None = None) -> RetrievalSettings:
    """Settings from a file (see :func:`read_settings_file`); the rest from ``defaults``, then the built-in ones."""
    return settings_from_mapping(read_settings_file(path), path, defaults)


def format_settings(values: Mapping[str, Any], separator: str = ", ") -> str:
    """``name=value`` pairs sorted by name, floats without binary noise (``0.15``, not ``0.15000000000000002``), joined
    by ``separator`` (``"\\n"``: one setting per line, for a table cell)."""
    return separator.join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}" for name, value in sorted(values.items()))


def shared_settings(configurations: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The settings every one of ``configurations`` has with the same value: a table says them once, and each row only
    what differs (an empty dict for fewer than two configurations, whose rows then say everything).

    >>> shared_settings([{"top_k": 4, "retriever": "bm25"}, {"top_k": 8, "retriever": "bm25"}])
    {'retriever': 'bm25'}
    """
    if len(configurations) < 2:
        return {}
    first = configurations[0]
    return {name: value for name, value in first.items() if all(name in c and c[name] == value for c in configurations[1:])}
