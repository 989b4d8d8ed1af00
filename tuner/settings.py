"""Settings (the knobs of chunks → … → ranking): the knobs a study turns, validated once and passed as one typed object."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, make_dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Union

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic.config import JsonDict

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


def _knob(stage: Stage, default: Any, description: str, *, after_search: bool = False, frameworks_lack: str = "",
          **constraints: Any) -> Any:
    """A setting of ``stage``: the stage decides which cache keys hash it (:mod:`tuner.retrieval._keys`) and which
    group carries it (:class:`Chunking`, :class:`Ranking`), the description is its ``--flag``'s help
    (``tuner.commands``). ``after_search``: tuner applies it to an engine's candidates after the search, on every
    engine (:data:`AFTER_SEARCH`); ``frameworks_lack``, where no framework or platform retriever expresses it off its
    default (:data:`FRAMEWORKS_LACK`): why, the text of its row in an export's table of what does not translate (a
    ``str.format`` template over the settings, e.g. ``{recency_half_life_days:g}``)."""
    extra: JsonDict = {"stage": stage, "after_search": after_search, "frameworks_lack": frameworks_lack}
    return Field(default, description=description, json_schema_extra=extra, **constraints)


@dataclass(frozen=True)
class FirstStageSpec:
    """A first-stage retriever as the settings know it: ``reads``, the first-stage settings it reads besides
    ``retriever`` and ``candidate_depth`` (its candidates' cache key hashes exactly these); ``needs_vectors``, whether it
    searches chunk vectors (the chunks are then embedded first and its candidates keyed by the vectors' content);
    ``bm25``, whether it scores BM25 terms (what a study's BM25-only checks and the first mile's pools look at)."""

    needs_vectors: bool
    bm25: bool
    reads: tuple[str, ...] = ()


_DENSE_READS = ("dense_index", "hnsw_ef", "ivf_nprobe")
FIRST_STAGES: dict[str, FirstStageSpec] = {
    "bm25": FirstStageSpec(needs_vectors=False, bm25=True),
    "dense": FirstStageSpec(needs_vectors=True, bm25=False, reads=_DENSE_READS),
    "hybrid": FirstStageSpec(needs_vectors=True, bm25=True, reads=(*_DENSE_READS, "fusion", "hybrid_weight", "rrf_k")),
}
"""The ``retriever`` names a setting accepts, each implemented by a factory registered under the same name in
``tuner.retrieval.RETRIEVERS`` (``@register_retriever``, which reads its entry here): a new retriever is its entry, its
module and that module's import."""


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
        "final_ranking", 0.0, "blend of reranker and first-stage scores (0 = no reranking, 1 = reranker only)", ge=0.0, le=1.0,
        after_search=True,
        frameworks_lack="tuner blends first-stage and reranker scores; frameworks' rerankers replace the order instead",
    )
    version_policy: Literal["all", "latest"] = _knob(
        "final_ranking", "all",
        "latest drops a candidate whose document has a newer version (same metadata family, later date) in the index; all keeps it",
        after_search=True,
        frameworks_lack=(
            "dropping a chunk whose metadata family has a later-dated document in the index needs the whole "
            "index; a metadata filter (e.g. status: current) is the nearest, if the corpus has one"
        ),
    )
    stale_penalty: float = _knob(
        "final_ranking", 0.0, "with version_policy all, multiply a stale candidate's score by 1 - this (0..1)", ge=0.0, le=1.0,
        after_search=True,
        frameworks_lack="demoting older versions of a family is no framework's option",
    )
    recency_weight: float = _knob(
        "final_ranking", 0.0, "weight w of the recency score in the final score, (1 - w) * score + w * recency (0..1)",
        ge=0.0, le=1.0,
        after_search=True,
        frameworks_lack=(
            "tuner blends 0.5^(age / recency_half_life_days) into the score (half-life "
            "{recency_half_life_days:g} days); no framework retriever has that blend"
        ),
    )
    recency_half_life_days: float = _knob(
        "final_ranking", 365.0, "days behind the newest dated document at which the recency score halves", gt=0.0, le=100_000.0
    )
    dedupe: float = _knob(
        "final_ranking", 1.0,
        "drop a candidate whose cosine similarity to a better-ranked kept one exceeds this (0..1; 1 = off)", ge=0.0, le=1.0,
        after_search=True,
        frameworks_lack=(
            "tuner skips a candidate more similar than this to a better one; the frameworks' MMR trades "
            "relevance against diversity with a λ instead"
        ),
    )
    chunk_size: int = _knob("chunking", 256, "chunk size, counted in --chunk-unit", ge=8, le=100_000)
    chunk_unit: ChunkUnit = _knob(
        "chunking", "tokens", "tokens (of the embedding model's tokenizer, default), chars, or legacy words"
    )
    chunk_overlap: float = _knob("chunking", 0.0, "fraction of a chunk repeated in the next one (0..0.9)", ge=0.0, lt=0.9)
    retriever: str = _knob("first_stage", "hybrid", " or ".join([", ".join(list(FIRST_STAGES)[:-1]), list(FIRST_STAGES)[-1]]))
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
    reranker: str = _knob("rerank", DEFAULT_RERANKER, "embedding-maxsim (offline default) or cross-encoder:NAME_OR_PATH",
                          after_search=True)

    @field_validator("retriever")
    @classmethod
    def _known_retriever(cls, value: str) -> str:
        if value not in FIRST_STAGES:
            names = [repr(name) for name in FIRST_STAGES]
            raise ValueError(f"Input should be {', '.join(names[:-1])} or {names[-1]}")
        return value

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


class _Chunking:
    """The settings of chunking (stage ``chunking``, as :class:`RetrievalSettings` declares them) and ``tokenizer``,
    the embedding model whose tokens ``chunk_unit: tokens`` counts ("" for other units): everything chunks depend on,
    so it is also their cache key (:func:`tuner.retrieval._keys.stage_key`) and a memo key (hashable)."""

    if TYPE_CHECKING:  # the fields are the stage's settings, made by _group: typed through them
        __dataclass_fields__: ClassVar[dict[str, Any]]
        def __init__(self, *args: Any, **values: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...


class _Ranking:
    """The settings of the final ranking (stage ``final_ranking``, as :class:`RetrievalSettings` declares them): array
    work on cached candidates."""

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Any]]
        def __init__(self, *args: Any, **values: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...

    @property
    def reads_versions(self) -> bool:
        """Whether this ranking needs the candidates' family and date (:class:`tuner.retrieval.ChunkVersions`)."""
        return bool(self.version_policy == "latest" or self.stale_penalty > 0 or self.recency_weight > 0)

    @property
    def reads_vectors(self) -> bool:
        """Whether this ranking needs the candidates' chunk vectors (``dedupe`` compares them)."""
        return bool(self.dedupe < 1.0)

    @property
    def reranks(self) -> bool:
        """Whether this ranking needs reranker scores."""
        return bool(self.rerank_strength > 0.0)


def _group(base: type, stage: Stage, *more: tuple[str, type, Any]) -> type:
    """A frozen dataclass of ``stage``'s settings in declaration order, each with its annotation and default, then
    ``more`` (name, type, default): a new setting of the stage is in its group without an edit here."""
    fields = [(name, RetrievalSettings.model_fields[name].annotation, field(default=RetrievalSettings.model_fields[name].default))
              for name in stage_fields(stage)]
    fields += [(name, kind, field(default=default)) for name, kind, default in more]
    group = make_dataclass(base.__name__.lstrip("_"), fields, bases=(base,), frozen=True, namespace={"__doc__": base.__doc__})
    group.__module__ = __name__
    return group




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


def _extra(info: FieldInfo) -> dict[str, Any]:
    extra = info.json_schema_extra
    assert isinstance(extra, dict), "every setting is declared with _knob"
    return extra


def _stage_of(info: FieldInfo) -> str:
    return str(_extra(info)["stage"])


if TYPE_CHECKING:
    Chunking = _Chunking
    Ranking = _Ranking
else:
    Chunking = _group(_Chunking, "chunking", ("tokenizer", str, ""))
    Ranking = _group(_Ranking, "final_ranking")

AFTER_SEARCH: tuple[str, ...] = tuple(name for name, info in RetrievalSettings.model_fields.items()
                                      if _extra(info)["after_search"])
"""The settings tuner applies to an engine's candidates after its search, on every engine (docs/engine.md): declared
``after_search`` on the field."""
FRAMEWORKS_LACK: dict[str, str] = {name: _extra(info)["frameworks_lack"] for name, info in RetrievalSettings.model_fields.items()
                                   if _extra(info)["frameworks_lack"]}
"""The settings no framework or platform retriever expresses off their default, each with why (an export lists them as
untranslated where they act off it, ``tuner.export``): declared ``frameworks_lack`` on the field."""


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
