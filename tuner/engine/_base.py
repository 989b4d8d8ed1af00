"""Engine (indexes → candidates **in an engine**): the one interface every engine is, and the registry the ``engine:``
block, the ``--engine`` flags and the contract tests are made from.

An engine is a :class:`tuner.strict.StrictModel` told apart by ``backend`` (:func:`register_engine`): its fields are
what a study file's ``engine:`` block and the ``--engine-<field>`` flags (:class:`EngineFlag`) give; its methods are
what differs between engines, so that no study, command or deployment asks which engine it holds: the pipeline its
first stage runs in (:meth:`Engine.pipeline`), what a run records and exports of it (:meth:`Engine.described`,
never a secret), the settings it fixes or leaves inert (:meth:`Engine.fixed_knobs`, :meth:`Engine.fixed_settings`),
whether it is read-only (:attr:`Engine.attached`) and how an export is served on it (:meth:`Engine.serving`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union, get_args

from pydantic import Field, ValidationError, create_model

from tuner.errors import UserError, describe_validation_error
from tuner.settings import RetrievalSettings
from tuner.strict import StrictModel

if TYPE_CHECKING:
    from tuner.cache import DiskCache
    from tuner.dataset import Dataset
    from tuner.embedding import CachedEncoder, EmbeddingContext
    from tuner.llm import CallStore
    from tuner.progress import Reporter
    from tuner.retrieval import RetrievalPipeline


@dataclass(frozen=True)
class InertKnob:
    """A setting of the space that cannot act on the dataset: ``value`` is what it is fixed at (its neutral value),
    ``why`` says what the dataset lacks."""

    setting: str
    value: Any
    why: str
    choice: str | None = None
    """For one choice of a categorical that cannot act: that choice (a ``metadata_filter``'s name, a ``retriever``);
    ``value`` is what the setting takes when no choice is left."""
    scope: str = "this dataset"
    """What it cannot act on: the dataset, or the study's engine."""

    @property
    def label(self) -> str:
        """The setting, with the choice when it is one: ``metadata_filter: current``."""
        return self.setting if self.choice is None else f"{self.setting}: {self.choice}"

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.label, "value": self.value, "why": self.why}

    def line(self) -> str:
        return f"{self.label} cannot act on {self.scope} ({self.why}): fixed at {self.value}, kept out of the search"


SpaceChoices = Mapping[str, Sequence[Any] | None]
"""A search space as an engine reads it: each setting searched, with its choices when it is categorical (else None)."""


@dataclass(frozen=True)
class EngineFlag:
    """How an engine field is given on the command line (its ``Field``'s metadata; the help is its description):
    ``flag`` (default ``--engine-<field>``), ``metavar``, ``parse`` (the text as the field's value; default: the
    text), ``measures``: only on commands that measure (``tuner serve`` takes it from the export), and ``together``:
    the field it must be given with."""

    flag: str | None = None
    metavar: str = "VALUE"
    parse: Callable[[str], Any] | None = None
    measures: bool = False
    together: str | None = None

    def name(self, field: str) -> str:
        return self.flag or f"--engine-{field.replace('_', '-')}"


class Engine(StrictModel):
    """Where a study's first stage runs. A subclass sets ``backend`` to a ``Literal`` of its name, ``label`` (what
    ``--engine``'s help says of it) and implements :meth:`pipeline`; the rest has the defaults of an engine that
    searches tuner's own chunks as tuner builds them."""

    backend: str
    label: ClassVar[str]
    """What ``--engine NAME`` is, for its help."""
    on_command_line: ClassVar[bool] = True
    """Whether ``--engine`` offers it (an engine with its own flags, as ``tuner eval --external``, says no)."""
    measures_latency: ClassVar[bool] = True
    """Whether a trial's first-stage search time is tuner's to measure (``constraints.max_latency_ms``)."""

    def pipeline(self, dataset: Dataset, cache: DiskCache | None = None, reporter: Reporter | None = None,
                 embeddings: EmbeddingContext | None = None, encoder: CachedEncoder | None = None,
                 calls: Callable[[], CallStore] | None = None) -> RetrievalPipeline:
        """The retrieval of ``dataset`` on this engine (connected here: an unreachable engine is a
        :class:`tuner.errors.UserError` before any trial). ``encoder``: the encoder of its embedding model, as
        :class:`tuner.retrieval.RetrievalPipeline` takes it; ``calls``: opens where an engine that calls a service
        keeps its replies (the call cache)."""
        raise NotImplementedError(f"engine {self.backend} has no pipeline")

    def described(self) -> dict[str, Any]:
        """What a run prints and records of the engine (a study, an export): never a secret."""
        return {"backend": self.backend}

    def recorded(self, pipeline: RetrievalPipeline) -> dict[str, Any]:
        """What a study records of the engine its ``pipeline`` searches, by record key: ``engine`` (where tuner's own
        first stage ran) or ``retrieval`` (a service's)."""
        return {"engine": self.described()}

    def announced(self) -> str | None:
        """The line a study prints of its engine before any trial (None: nothing to say)."""
        return f"engine: {', '.join(f'{k} {v}' for k, v in self.described().items() if v)}"

    def ready(self, pipeline: RetrievalPipeline, settings: RetrievalSettings) -> None:
        """What a study checks on ``pipeline`` before any trial (a collection's schema, its doc ids)."""

    @property
    def attached(self) -> bool:
        """Whether the index is someone else's, read and never written: the conflicts cannot be put into it (v3 is
        ``hard_mode: inject`` by default) and the served corpus cannot be changed."""
        return False

    @property
    def asked_only(self) -> tuple[tuple[str, ...], str] | None:
        """The only settings the engine is asked (every other one is inert, whatever the dataset) and why, or None."""
        return None

    def fixed_settings(self) -> dict[str, tuple[Any, str]]:
        """The settings the engine decides, with why: a study's fixed value must agree, a space's is fixed there."""
        return {}

    def fixed_knobs(self, space: SpaceChoices, base: RetrievalSettings) -> list[InertKnob]:
        """The settings of ``space`` this engine fixes (``base``: the study's fixed settings)."""
        return []

    def without_bm25(self) -> str | None:
        """Why the engine cannot score BM25 (a retriever that needs it is refused), or None when it can."""
        return None

    def relative_to(self, folder: Path) -> Engine:
        """The engine with the paths it names read relative to ``folder`` (a study file's)."""
        return self

    def serving(self, provenance: Mapping[str, Any]) -> Engine:
        """The engine that serves an export of ``provenance`` here (what the export fixes of the engine it was
        measured on: the dense index, an attached collection)."""
        return self

    def reachable(self) -> None:
        """Connect once: an unreachable engine or a bad secret is a :class:`tuner.errors.UserError` now."""

    @classmethod
    def from_record(cls, recorded: Mapping[str, Any], where: str) -> Engine:
        """The engine an export or study recorded (:meth:`described`), its secrets read from the variables named."""
        return parse_engine({k: v for k, v in recorded.items() if k in cls.model_fields and v is not None}, where)


E = TypeVar("E", bound=Engine)

ENGINES: dict[str, type[Engine]] = {}
"""Every engine by ``backend``, in registration order (``memory`` first: the default)."""


def register_engine(cls: type[E]) -> type[E]:
    """Class decorator: ``cls`` as the engine of its ``backend`` (a ``Literal`` of one name)."""
    [backend] = get_args(cls.model_fields["backend"].annotation)
    assert isinstance(backend, str) and backend not in ENGINES, f"engine backend {backend!r} registered twice"
    ENGINES[backend] = cls
    _engine_model.cache_clear()
    return cls


def engine_config() -> Any:
    """The ``engine:`` annotation: the registered engines, told apart by ``backend``."""
    return Annotated[Union[tuple(ENGINES.values())], Field(discriminator="backend")]  # noqa: UP007


@cache
def _engine_model() -> type[StrictModel]:
    return create_model("Engines", __base__=StrictModel, engine=(engine_config(), ...))


def parse_engine(data: Any, where: str) -> Engine:
    """``data`` (an ``engine:`` mapping) as an engine; a :class:`UserError` naming ``where`` (a file, the command line)
    and the key otherwise.

    >>> parse_engine({"backend": "milvus", "uri": "kb.db"}, "study.yaml").index
    'FLAT'
    >>> parse_engine({"backend": "milvus", "uri": "kb"}, "study.yaml")
    Traceback (most recent call last):
    ...
    tuner.errors.UserError: study.yaml: engine.milvus.uri: must be a Milvus Lite file ending in .db or a server URL (http://host:19530), got 'kb'
    """
    try:
        engine: Engine = getattr(_engine_model().model_validate({"engine": data}), "engine")
    except ValidationError as exc:
        raise UserError(f"{where}: {describe_validation_error(exc)}") from None
    return engine


@register_engine
class MemoryEngine(Engine):
    """tuner's own indexes (BM25 arrays, FAISS) in the process that runs the trial."""

    backend: Literal["memory"] = "memory"
    label: ClassVar[str] = "tuner's own indexes in this process (default; with --config, the engine the export was measured on)"

    def pipeline(self, dataset: Dataset, cache: DiskCache | None = None, reporter: Reporter | None = None,
                 embeddings: EmbeddingContext | None = None, encoder: CachedEncoder | None = None,
                 calls: Callable[[], CallStore] | None = None) -> RetrievalPipeline:
        from tuner.retrieval import RetrievalPipeline

        return RetrievalPipeline(dataset, cache, reporter, encoder, embeddings)

    def announced(self) -> str | None:
        return None

