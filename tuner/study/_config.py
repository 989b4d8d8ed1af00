"""Study (**study file** → trials → trial record): study files: one YAML naming the dataset, search space, objectives,
backends, variants, sampler, budget, storage."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from tuner.dataset import builtin_model_defaults, is_builtin, manifest_model_defaults
from tuner.errors import UserError, describe_validation_error
from tuner.io import read_yaml_mapping, renamed_key
from tuner.generation import GENERATORS, ExtractiveGeneratorConfig, GeneratorConfig, parse_generator_config
from tuner.judging import JUDGES, JudgeConfig, LexicalJudgeConfig, parse_judge_config
from tuner.llm import LLMConfig
from tuner.variants import VariantsConfig
from tuner.objectives import CONTEXT_WORDS, EXPOSURE, OBJECTIVES, RECALL, REQUIRED, SECOND_OBJECTIVES, Direction
from tuner.settings import MetadataFilter, RetrievalSettings, settings_from_mapping
from tuner.study._samplers import SamplerConfig
from tuner.study._tracking import TrackingConfig
from tuner.embedding import EmbeddingOptions
from tuner.engine import Engine, EngineConfig, ExternalEngine, MemoryEngine
from tuner.stats import SpendingKind
from tuner.strict import StrictModel



SharedStore = Annotated[str, Field(pattern=r"^(auto|local|postgresql(\+\w+)?://.+)$")]
"""Where a store that workers share lives (``call_cache``, ``embedding_cache``): see :func:`shared_store_url`."""
_SHARED = "auto = the storage when it is PostgreSQL, else local SQLite; local; or a PostgreSQL URL"


def shared_store_url(setting: str, storage: str) -> str | None:
    """The PostgreSQL database a shared store lives in, every worker of the study using it wherever it runs, or None
    for a local SQLite file (one machine only: SQLite's WAL mode is unsafe on network filesystems). ``auto``: the
    study's storage when it is PostgreSQL; ``local``: SQLite; else the PostgreSQL URL given.

    >>> shared_store_url("auto", "postgresql://tuner@db/studies")
    'postgresql://tuner@db/studies'
    """
    if setting == "auto":
        return storage if storage.startswith("postgresql") else None
    return None if setting == "local" else setting


class BudgetConfig(StrictModel):
    trials: int = Field(40, ge=1)
    max_llm_calls: int | None = Field(None, ge=1, description="stop once the study made this many generator+judge calls")
    max_cost: float | None = Field(None, gt=0, description="stop once the requests cost this much at the backends' pricing")
    max_tokens: int | None = Field(None, ge=1, description="stop once the requests used this many prompt+completion tokens")
    timeout: float | None = Field(None, gt=0, description="seconds")


DEFAULT_LOOKS = (0.1, 0.2, 0.35, 0.5, 0.7)


class PruningConfig(StrictModel):
    """Noise-aware pruning (``tuner.study._pruning``): cases are evaluated in batches of ``batch_size`` (the unit of
    concurrency); the test looks at the fractions ``looks`` of the case list (or after every batch with
    ``every_batch``) and spends ``alpha`` over those looks with the ``spending`` function (``tuner.stats.SPENDING``)."""

    enabled: bool = True
    batch_size: int = Field(20, ge=2)
    alpha: float = Field(0.05, gt=0, lt=1)
    spending: SpendingKind = "pocock"
    looks: tuple[float, ...] | Literal["every_batch"] = Field(
        DEFAULT_LOOKS, description="fractions of the case list after which the test looks, or every_batch"
    )

    @field_validator("looks")
    @classmethod
    def _increasing_fractions(cls, looks: tuple[float, ...] | str) -> tuple[float, ...] | str:
        if isinstance(looks, tuple) and (
            not looks or any(not 0 < t < 1 for t in looks) or any(b <= a for a, b in zip(looks, looks[1:]))
        ):
            raise ValueError("looks must be fractions of the case list, strictly increasing within (0, 1)")
        return looks


class PickConfig(StrictModel):
    """Which front trial ``tuner run`` exports: ``knee``, ``min-delta`` (lowest Δ with recall ≥ ``min_recall``)
    or ``cheapest`` (smallest context among the knee's ties)."""

    rule: Literal["knee", "min-delta", "cheapest"] = "knee"
    min_recall: float | None = Field(None, ge=0, le=1)

    @model_validator(mode="after")
    def _floor_for_min_delta(self) -> PickConfig:
        if self.rule == "min-delta" and self.min_recall is None:
            raise ValueError("rule min-delta needs min_recall")
        return self


class ConstraintsConfig(StrictModel):
    """``min_recall``: trials whose recall@k is below it are infeasible (off every front and pick); ``max_exposure``
    likewise for trials whose conflict exposure (the share of cases shown a conflicting chunk) is above it, and
    ``max_latency_ms`` for trials whose first stage searches one question in more than that many milliseconds at the
    95th percentile (:class:`tuner.retrieval.SearchLatency`). All three are known before any answer, so such trials are completed without a generator or judge request unless
    ``answer_infeasible`` asks for their Δ anyway (the report then shows it for them too)."""

    min_recall: float | None = Field(None, ge=0, le=1)
    max_exposure: float | None = Field(None, ge=0, le=1)
    max_latency_ms: float | None = Field(
        None, gt=0, description="a trial whose first stage takes longer than this per question (95th percentile, "
        "milliseconds) is infeasible")
    answer_infeasible: bool = False


class ConfirmConfig(StrictModel):
    """``confirm``: hold out ``share`` of the golden cases (stratified by category, drawn with ``seed``) that the
    search never sees; each front member is evaluated on them when the study ends (docs/studies.md)."""

    share: float = Field(gt=0, lt=1, description="share of the golden cases held out for confirmation")
    seed: int = 0


class StudyConfig(StrictModel):
    name: str
    dataset: str = Field(min_length=1, description="dataset folder (relative to the study file), demo or demo-zh")
    search_space: str = "../search_spaces/default.yaml"
    objectives: list[str] = Field(default_factory=lambda: list(REQUIRED), min_length=2)
    constraints: ConstraintsConfig = ConstraintsConfig()
    settings: dict[str, Any] = Field(default_factory=dict, description="fixed retrieval settings")
    filters: dict[str, MetadataFilter] = Field(
        default_factory=dict, description="named metadata filters the metadata_filter setting (or a space over it) chooses from"
    )
    generator: GeneratorConfig = Field(default_factory=ExtractiveGeneratorConfig)
    judge: JudgeConfig = Field(default_factory=LexicalJudgeConfig)
    variants: VariantsConfig = VariantsConfig()
    sampler: SamplerConfig = SamplerConfig()
    budget: BudgetConfig = BudgetConfig()
    pruning: PruningConfig = PruningConfig()
    noise_floor: str | dict[str, float] = Field(
        "auto", description="auto (calibrated on the baseline configuration), a noise floor file written by tuner "
        "calibrate (relative to the study file), or {objective: number}")
    pick: PickConfig = PickConfig()
    report_language: Literal["auto", "en", "zh"] = Field(
        "auto", description="the report's language; auto: Chinese for a study whose golden cases are Chinese, else English")
    confirm: ConfirmConfig | None = None
    enqueue: list[dict[str, Any]] = Field(default_factory=list)
    seed: int = 0
    storage: str | None = None
    output: str = "out"
    heartbeat_interval: int = Field(10, ge=1, description="seconds between worker heartbeats (RDB storage)")
    tracking: TrackingConfig = TrackingConfig()
    call_cache: SharedStore = Field("auto", description=f"LLM call cache: {_SHARED}")
    embedding_cache: SharedStore = Field("auto", description=f"embedding store: {_SHARED}")
    embedding: EmbeddingOptions = EmbeddingOptions()
    retriever: ExternalEngine | None = Field(
        None, description="the spelling before issue 53 of engine: {backend: external, url, knowledge_id, "
        "api_key_env}: a retrieval service speaking Dify's External Knowledge API to tune instead of tuner's own "
        "retrieval (read as the study's engine, searched_engine)")
    engine: EngineConfig = Field(
        default_factory=MemoryEngine, description="where the first stage runs: {backend: memory} (default), "
        "{backend: milvus, uri: PATH.db or http://host:19530, token_env, db_name} or {backend: external, url, "
        "knowledge_id, api_key_env} (docs/engine.md)")

    @model_validator(mode="before")
    @classmethod
    def _as_read(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = _inject_only(data)
        # study files written before issue 39 call the variants' configuration "noise"
        return renamed_key(data, "noise", "variants")

    @field_validator("noise_floor", mode="before")
    @classmethod
    def _floor_given(cls, value: Any) -> Any:
        """One line for what is neither a name nor a mapping of numbers, never the union's member paths."""
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            for name, number in value.items():
                if isinstance(number, bool) or not isinstance(number, int | float):
                    raise ValueError(f"{name}: expected a number, got {number!r}")
            return value
        said = " (YAML reads off, no and false alike as false)" if value is False else ""
        raise ValueError(f"expected auto, a noise floor file written by tuner calibrate or {{objective: number}}, "
                         f"got {value!r}{said}")

    @model_validator(mode="after")
    def _consistent(self) -> StudyConfig:
        """The rules across keys, so a config built in Python is refused as ``tuner run`` refuses its file."""
        if self.retriever is not None and self.engine.backend != "memory":
            raise ValueError("engine: a retriever: service searches its own index; leave engine out")
        for name, (value, why) in self.engine.fixed_settings().items():
            given = self.settings.get(name, value)
            if given != value:
                raise ValueError(f"settings.{name}: {given!r}, but {why}")
        unknown = [o for o in self.objectives if o not in OBJECTIVES]
        if unknown:
            raise ValueError(f"objectives: unknown {unknown} (known: {', '.join(OBJECTIVES)})")
        if self.objectives[0] != RECALL or self.objectives[1] not in SECOND_OBJECTIVES:
            raise ValueError(f"objectives: must start with {RECALL}, then one of {', '.join(SECOND_OBJECTIVES)}")
        if (EXPOSURE in self.objectives or self.constraints.max_exposure is not None) and self.variants.hard_mode != "in_index":
            raise ValueError(f"{EXPOSURE} (objectives, constraints.max_exposure) needs variants.hard_mode: in_index: "
                             "with inject every case is shown the conflicts v3 adds, whatever the retrieval settings")
        if len(set(self.objectives)) != len(self.objectives) or len(self.objectives) > 3 or (
            len(self.objectives) == 3 and self.objectives[2] != CONTEXT_WORDS
        ):
            raise ValueError(f"objectives: a third objective can only be {CONTEXT_WORDS}")
        if self.constraints.max_latency_ms is not None and not self.searched_engine.measures_latency:
            raise ValueError("constraints.max_latency_ms: the search time of a retrieval service (retriever: "
                             "{backend: external}) is not measured; the constraint bounds tuner's own first stage")
        unpriced = [kind for kind, backend in llm_backends(self.generator, self.judge).items() if backend.pricing is None]
        if self.budget.max_cost is not None and unpriced:
            raise ValueError(f"budget.max_cost: {unpriced[0]}.pricing is not set, so its requests have no cost")
        return self

    @property
    def searched_engine(self) -> Engine:
        """The engine the study measures: ``engine``, or a ``retriever:`` service (the spelling before issue 53)."""
        return self.engine if self.retriever is None else self.retriever


def llm_backends(generator: GeneratorConfig, judge: JudgeConfig) -> dict[str, LLMConfig]:
    """The backends that call a chat endpoint, by role (``generator``, ``judge``)."""
    roles = {"generator": generator, "judge": judge}
    return {kind: config for kind, config in roles.items() if isinstance(config, LLMConfig)}


def _inject_only(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with ``variants.hard_mode: inject`` by default where the index cannot be given the conflicts: a
    service's index, or an attached collection (never written); v3 then injects them into the context it returns. An
    external retriever refuses any other mode; an attached collection's own conflicting rows can be searched
    ``in_index`` (checked once the collection is read)."""
    retriever, engine = data.get("retriever"), data.get("engine")
    backend = engine.get("backend") if isinstance(engine, dict) else getattr(engine, "backend", None)
    external = isinstance(retriever, dict | ExternalEngine) or backend == "external"
    attached = external or (engine.get("collection") if isinstance(engine, dict) else getattr(engine, "collection", None)) is not None
    if not attached:
        return data
    key = "noise" if "noise" in data and "variants" not in data else "variants"  # the spelling before issue 39
    given = data.get(key)
    variants: dict[str, Any] = given if isinstance(given, dict) else (
        given.model_dump() if isinstance(given, VariantsConfig) else {})
    if external and variants.get("hard_mode", "inject") != "inject":
        raise ValueError(f"{key}.hard_mode: an external retriever needs inject (the conflicts cannot be put into the "
                         f"service's index), got {variants['hard_mode']!r}")
    return {**data, key: {**variants, "hard_mode": variants.get("hard_mode", "inject")}}


class LoadedStudy:
    """A validated study file with paths resolved against the file's folder and command-line overrides applied."""

    def __init__(self, path: Path, config: StudyConfig, storage: str | None, out: str | None, dataset: str | None):
        self.path = path
        self.config = config
        base = path.parent
        self.output = (Path(out) if out else base / config.output / config.name).resolve()
        self.dataset = dataset or (config.dataset if is_builtin(config.dataset) else str(base / config.dataset))
        self.search_space_path = (base / config.search_space).resolve()
        self.storage = storage or config.storage or f"sqlite:///{self.output / 'study.db'}"
        self.generator: GeneratorConfig = config.generator
        self.engine: Engine = config.searched_engine.relative_to(base)
        self.judge: JudgeConfig = config.judge
        # the built-in demos have no manifest: their language says their models, without generating them to load a study
        defaults = builtin_model_defaults(self.dataset) if is_builtin(self.dataset) else manifest_model_defaults(self.dataset)
        # the filters travel in the settings, so every trial, and the config exported from it, carries their definitions
        fixed = {**config.settings, "metadata_filters": config.filters} if config.filters else config.settings
        # what the engine decides, as the collection's index (StudyConfig checks a fixed value agrees)
        fixed = {**fixed, **{name: value for name, (value, _) in self.engine.fixed_settings().items()}}
        self.base_settings: RetrievalSettings = settings_from_mapping(fixed, f"{path}: settings", defaults)
        self.noise_floor_path = self._noise_floor_file()

    def _noise_floor_file(self) -> Path | None:
        """The noise floor file the study names (``noise_floor: FILE``), read now: a missing or malformed one stops the
        study here, before any model is loaded or collection read."""
        spec = self.config.noise_floor
        if isinstance(spec, dict) or spec == "auto":
            return None
        file = (self.path.parent / spec).resolve()
        if not file.is_file():
            raise UserError(f"{self.path}: noise_floor: {spec!r}: no such file ({file}); give auto, a file written by "
                            "tuner calibrate, or {objective: number}")
        from tuner.noisefloor import NoiseFloor

        NoiseFloor.from_file(file)
        return file

    def check_backends(self) -> None:
        """What the generator and the judge name outside the file (a model file, a module, an API key's variable),
        checked by the commands that will call them (``tuner run``, its dry run, ``tuner calibrate``) before any
        model is loaded or index built; the reading commands (``pareto``, ``trials``, ``export``) need none of it."""
        GENERATORS.check(self.generator, str(self.path))
        JUDGES.check(self.judge, str(self.path))

    @property
    def llm_backends(self) -> dict[str, LLMConfig]:
        """The backends that call a chat endpoint, by role (``generator``, ``judge``)."""
        return llm_backends(self.generator, self.judge)

    @property
    def priced(self) -> bool:
        """True when some backend states its prices, so spending can be shown in money."""
        return any(backend.pricing is not None for backend in self.llm_backends.values())

    @property
    def call_cache_url(self) -> str | None:
        """The PostgreSQL database of the LLM call cache, or None for local SQLite (:func:`shared_store_url`)."""
        return shared_store_url(self.config.call_cache, self.storage)

    @property
    def embedding_cache_url(self) -> str | None:
        """The PostgreSQL database of the embedding store, or None for local SQLite (:func:`shared_store_url`)."""
        return shared_store_url(self.config.embedding_cache, self.storage)

    def baseline_settings(self) -> RetrievalSettings:
        """The configuration the noise floor is measured on: the first enqueued trial, else the fixed settings."""
        first = self.config.enqueue[0] if self.config.enqueue else {}
        return settings_from_mapping({**self.base_settings.model_dump(), **first}, f"{self.path}: enqueue[0]")

    @property
    def directions(self) -> list[Direction]:
        return [OBJECTIVES[o] for o in self.config.objectives]


def load_study_file(path: str | Path, storage: str | None = None, out: str | None = None, dataset: str | None = None) -> LoadedStudy:
    """Validate a study file before any work starts; a bad key or value is one line naming the file and key."""
    file = Path(path)
    data = read_yaml_mapping(file, "a study file")
    # backends first, so a bad backend gets the registry's message (it names the known backends)
    data = {**data, "generator": parse_generator_config(data.get("generator"), str(file)),
            "judge": parse_judge_config(data.get("judge"), str(file))}
    try:
        config = StudyConfig(**data)
    except ValidationError as exc:
        raise UserError(f"{file}: {describe_validation_error(exc)}") from None
    return LoadedStudy(file, config, storage, out, dataset)
