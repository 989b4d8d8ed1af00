"""What a study and each of its trials record in Optuna's user attributes (study → **trial record** → front).

One typed home for the keys: the objective writes a :class:`TrialRecord`, and the front, the report,
the exports and the benchmarks read it back with :meth:`TrialRecord.from_trial`, so a new attribute is
added in one place. The stored form is plain JSON (what optuna-dashboard shows); docs/report.md lists it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Annotated, Any, TypeVar

import optuna
from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator

from tuner.dataset import LabelProvenance
from tuner.evaluation import NOT_MEASURED
from tuner.metrics import DeltaParts, TiedExposure, delta_parts
from tuner.objectives import DELTA
from tuner.retrieval import SearchLatency
from tuner.stats import Proportion, run_sd_of_margin


@dataclass(frozen=True)
class PruneEvidence:
    """Why a trial was pruned, stored in its ``pruning`` user attribute.

    At look ``look`` of ``max_looks``, on its first ``cases_used`` of ``n_total`` cases, trial
    ``dominated_by`` beat it by ``differences`` (rival better by this much per objective, recall and
    context words exact, Δ estimated); ``estimate`` ± ``se`` is the pruned trial's estimated Δ on all
    cases and ``rival_delta`` the rival's; H0 (not beaten by more than ``margin``) had ``p_value`` <
    ``alpha``, the α this look's test uses; ``objective`` names the robustness objective
    (``v3_delta_faithful`` or ``v3_delta_correct``) the Δ figures are of. Pruned exactly (``objective``
    ``conflict_exposure``, ``tuner.study._pruning.exact_rival``): look 0 of 0 before any case was answered,
    ``estimate`` and ``rival_delta`` the two exposures, ``se``, ``p_value`` and ``alpha`` 0. ``fraction`` is the look's
    information fraction (planned cases / N), ``alpha_spent`` the α spent up to and including this look
    by the ``spending`` function. Evidence written before looks at fixed fractions has no fraction, spent
    α or spending (NaN, NaN, "").
    """

    look: int
    max_looks: int
    cases_used: int
    n_total: int
    dominated_by: int
    differences: dict[str, float]
    estimate: float
    se: float
    rival_delta: float
    margin: dict[str, float]
    p_value: float
    alpha: float
    objective: str = DELTA
    fraction: float = math.nan
    alpha_spent: float = math.nan
    spending: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "look": self.look,
            "max_looks": self.max_looks,
            "cases_used": self.cases_used,
            "n_total": self.n_total,
            "dominated_by": self.dominated_by,
            "differences": dict(self.differences),
            "objective": self.objective,
            self.objective: {"estimate": self.estimate, "se": self.se, "rival": self.rival_delta},
            "margin": dict(self.margin),
            "p_value": self.p_value,
            "alpha": self.alpha,
            "fraction": self.fraction,
            "alpha_spent": self.alpha_spent,
            "spending": self.spending,
        }

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> PruneEvidence:
        objective = str(values.get("objective", DELTA))
        delta = values.get(objective, {})
        return cls(
            look=int(values.get("look", 0)),
            max_looks=int(values.get("max_looks", 0)),
            cases_used=int(values.get("cases_used", 0)),
            n_total=int(values.get("n_total", 0)),
            dominated_by=int(values["dominated_by"]),
            differences=dict(values.get("differences", {})),
            estimate=float(delta.get("estimate", math.nan)),
            se=float(delta.get("se", math.nan)),
            rival_delta=float(delta.get("rival", math.nan)),
            margin=dict(values.get("margin", {})),
            p_value=float(values.get("p_value", math.nan)),
            alpha=float(values.get("alpha", math.nan)),
            objective=objective,
            fraction=float(values.get("fraction", math.nan)),
            alpha_spent=float(values.get("alpha_spent", math.nan)),
            spending=str(values.get("spending", "")),
        )


@dataclass(frozen=True)
class TrialCalls:
    """Generator and judge requests a trial made (memo hits excluded), the tokens and remote calls they cost:
    ``tokens`` = ``prompt_tokens`` + ``completion_tokens``; ``cached_tokens``, the prompt tokens the provider served
    from its prefix cache; ``cost``, their price at the backends' ``pricing`` (0 without one)."""

    generator: int = 0
    judge: int = 0
    tokens: int = 0
    remote_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> TrialCalls:
        """The stored form back; a field written before it existed reads as 0."""
        counts = {name: int(stored.get(name, 0)) for name in cls.__dataclass_fields__ if name != "cost"}
        return cls(**counts, cost=float(stored.get("cost", 0.0)))

    def __add__(self, other: TrialCalls) -> TrialCalls:
        """Field by field: what two trials spent together."""
        return TrialCalls(**{name: getattr(self, name) + getattr(other, name) for name in self.__dataclass_fields__})

    @property
    def llm(self) -> int:
        """Generator plus judge requests: what ``budget.max_llm_calls`` counts."""
        return self.generator + self.judge


def _reader(kind: type[Any], read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Validation of a field holding a ``kind`` object: an instance passes, a stored value is read back by ``read``."""
    return lambda value: value if isinstance(value, kind) else read(value)


Latency = Annotated[SearchLatency, PlainValidator(_reader(SearchLatency, SearchLatency.from_dict)),
                    PlainSerializer(SearchLatency.to_dict)]
Calls = Annotated[TrialCalls, PlainValidator(_reader(TrialCalls, TrialCalls.from_dict)), PlainSerializer(asdict)]
# evidence stored empty (``{}``) reads as none, as it always has
Pruning = Annotated[PruneEvidence, PlainValidator(_reader(PruneEvidence, lambda v: PruneEvidence.from_dict(v) if v else None)),
                    PlainSerializer(PruneEvidence.to_dict)]
@dataclass(frozen=True)
class Column:
    """How the trial tables show a record field (declared on the field, ``Annotated[..., Column(...)]``): the front
    table of ``tuner pareto`` and of the report show it beside n/N whenever a front member has it set, headed
    ``header`` (per report language), each cell ``text`` of the value (— when unset), with ``note`` (per language)
    under the report's table; ``pareto --json`` and ``tuner run --json`` carry the stored value under the field's name,
    and ``tuner trials``' flat rows (:func:`tuner.front.trial_rows`) the value under ``flat`` (the field's name when
    empty), or each of ``flat_parts`` of it as ``flat.part``. A trial field shown in the tables is its declaration here
    and the line of ``tuner/study/_objective.py`` that sets it."""

    header: Mapping[str, str]
    text: Callable[[Any], str]
    note: Mapping[str, str] = field(default_factory=dict)
    flat: str = ""
    flat_parts: tuple[str, ...] = ()


SEARCH_MS = Column(
    header={"en": "search ms p50 / p95", "zh": "检索耗时 ms p50 / p95"},
    text=lambda latency: f"{latency.p50_ms:.3g} / {latency.p95_ms:.3g}",
    note={"en": "Search ms: how long the trial's first stage took to search one question, median and 95th percentile "
                "over the first golden questions searched one per call (question embedding and reranking excluded), "
                "timed on the machine that ran the trial.",
          "zh": "检索耗时：该试验的第一阶段检索单个问题所用的时间，取前若干个标准问题逐个检索的中位数与第 95 百分位数（不含问题向量化与重排序），"
                "在运行该试验的机器上计时。"},
    flat="latency", flat_parts=("p50_ms", "p95_ms"),
)

T = TypeVar("T")
Cases = Annotated[tuple[T, ...], PlainSerializer(list)]
"""Per-case values in the study's case order: a tuple in the record, a JSON list in storage."""


class TrialRecord(BaseModel):
    """A trial's user attributes. Every field is optional: a running, pruned or failed trial has only some.

    ``recall_cases`` is recall@k per case in the study's case order (what paired comparisons of recall read);
    ``exposed_cases`` per case in that order 1 when its final context over the index with conflicts holds a
    conflicting chunk, else 0 (conflict exposure is their mean; Δ's parts are read from it with ``f0``/``f3``);
    ``exposure_ties`` per case in that order whether a tie at the cut decided that flag (+1 could become exposed, −1
    unexposed, 0 neither: :func:`tuner.metrics.tie_flip`); ``exposure_not_measured`` why exposure is not known (the
    retrieval does not tell tuner which of its chunks conflict: an attached collection none of whose rows is known to,
    a retrieval service), where ``exposed_cases`` is then absent, never zeros;
    ``f0``/``f3`` are per-case faithfulness at v0 and v3 in the study's case order (None = missing);
    ``ci`` maps an objective to its 95% interval (a bound is None when undefined); ``n``/``n_total`` are
    the cases scored at both variants and the cases with keypoints; ``partial_values`` are a pruned
    trial's objective values on the cases it ran; ``pruning`` is the evidence it was pruned on.
    ``duplicate_of`` names the trial whose configuration this one repeats (it was not evaluated again);
    ``unscorable`` says why Δ could not be computed (the trial is infeasible, off every front); ``skipped`` why no
    case was answered at all (a check known from retrieval alone: recall@k below ``constraints.min_recall``, or
    nothing retrieved), so the trial made no generator or judge request;
    ``failure`` what a backend raised when the trial failed; ``warnings`` what the reader of its figures must
    know (a variant short of its injection slots, so its Δ understates the effect); ``embedding_backend``
    what ran the embedding model (``embedding.backend``: torch is the fp32 reference); ``search_latency`` how long its
    first stage took to search one question (p50/p95 milliseconds, :class:`tuner.retrieval.SearchLatency`; none for a
    retrieval service); ``collection`` the engine collection its first stage searched (none in memory: what
    ``tuner export --format milvus`` names).
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    worker: str | None = None
    embedding_backend: str | None = None
    collection: str | None = None
    settings: dict[str, Any] | None = None
    context_words: float | None = None
    search_latency: Annotated[Latency | None, SEARCH_MS] = None
    calls: Calls | None = None
    cases_evaluated: int | None = None
    recall_cases: Cases[float] | None = None
    exposed_cases: Cases[int] | None = None
    exposure_ties: Cases[int] | None = None
    exposure_not_measured: str | None = None
    f0: Cases[float | None] | None = None
    f3: Cases[float | None] | None = None
    ci: dict[str, list[float | None] | None] | None = None
    n: int | None = None
    n_total: int | None = None
    grade: str | None = None
    by_category: dict[str, dict[str, Any]] | None = None
    partial_values: dict[str, float | None] | None = None
    pruning: Pruning | None = None
    duplicate_of: int | None = None
    unscorable: str | None = None
    skipped: str | None = None
    failure: str | None = None
    warnings: Cases[str] | None = None

    def to_attrs(self) -> dict[str, Any]:
        """The fields that are set, as JSON-ready user attributes."""
        return self.model_dump(exclude_none=True)

    def write(self, trial: optuna.Trial) -> None:
        for key, value in self.to_attrs().items():
            trial.set_user_attr(key, value)

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, Any]) -> TrialRecord:
        """The record of a trial's stored user attributes (any other key is left alone)."""
        return cls.model_validate(attrs)

    @classmethod
    def from_trial(cls, trial: optuna.trial.FrozenTrial) -> TrialRecord:
        return cls.from_attrs(trial.user_attrs)

    def cell(self, name: str) -> str:
        """The table cell of column ``name`` (:data:`TRIAL_COLUMNS`): its text, or — when this trial has no value."""
        value = getattr(self, name)
        return "—" if value is None else TRIAL_COLUMNS[name].text(value)

    def flat_values(self) -> dict[str, Any]:
        """Each column's value in ``tuner trials``' flat rows (:attr:`Column.flat`; None when unset)."""
        row: dict[str, Any] = {}
        for name, column in TRIAL_COLUMNS.items():
            value, key = getattr(self, name), column.flat or name
            if not column.flat_parts:
                row[key] = value
            row.update({f"{key}.{part}": None if value is None else getattr(value, part) for part in column.flat_parts})
        return row

    def column_values(self) -> dict[str, Any]:
        """Each column's stored value (None when unset), what the JSON outputs carry beside a front row."""
        stored = self.to_attrs()
        return {name: stored.get(name) for name in TRIAL_COLUMNS}

    def exposure(self) -> Proportion | None:
        """Conflict exposure over the study's cases: exposed / all, with its Wilson interval (None when not recorded)."""
        return None if self.exposed_cases is None else Proportion.of([bool(flag) for flag in self.exposed_cases])

    def tied_exposure(self) -> TiedExposure | None:
        """How many cases' exposure a tie at the cut decided (None when not recorded: a study written before)."""
        return None if self.exposure_ties is None else TiedExposure.of(self.exposure_ties)

    def exposure_dict(self) -> dict[str, Any] | None:
        """The exposure as ``{"value", "ci"}`` with, where recorded, ``tied``, ``could_expose``, ``could_unexpose``
        and ``range`` (:meth:`tuner.metrics.TiedExposure.to_dict`); None when not recorded."""
        share, ties = self.exposure(), self.tied_exposure()
        if share is None:
            return None if self.exposure_not_measured is None else {NOT_MEASURED: self.exposure_not_measured}
        return {"value": share.value, "ci": None if share.ci is None else list(share.ci),
                **({} if ties is None else ties.to_dict(share.successes))}

    def delta_parts(self) -> DeltaParts | None:
        """Δ of the recorded v0/v3 scores split by exposure (:func:`tuner.metrics.delta_parts`) over the cases scored at
        both; None without per-case exposure or scores."""
        if self.exposed_cases is None or self.f0 is None or self.f3 is None:
            return None
        paired = [(a, b, bool(e)) for a, b, e in zip(self.f0, self.f3, self.exposed_cases) if a is not None and b is not None]
        if not paired:
            return None
        return delta_parts([p[0] for p in paired], [p[1] for p in paired], [p[2] for p in paired])

    def exposure_figures(self) -> dict[str, Any] | None:
        """What an export's provenance keeps beside Δ: the exposure (``value``, ``ci``, ``n`` exposed of ``n_total``)
        and Δ's parts (``at_risk``, ``susceptibility``, ``delta``); None when the trial has no exposure recorded."""
        share, parts = self.exposure(), self.delta_parts()
        if share is None:
            return None if self.exposure_not_measured is None else {NOT_MEASURED: self.exposure_not_measured}
        ties = self.tied_exposure()
        return {**share.to_dict(), **({} if ties is None else ties.to_dict(share.successes)),
                "at_risk": None if parts is None else parts.at_risk,
                "susceptibility": None if parts is None else parts.susceptibility,
                "delta": None if parts is None else parts.delta}

    def describe_exposure(self) -> str | None:
        """``conflict exposure 0.120 [0.084, 0.169] (27/225); faithfulness at risk 0.110, susceptibility 0.450`` (the
        susceptibility — when no case is exposed), or None when the trial has no exposure recorded."""
        share, parts = self.exposure(), self.delta_parts()
        if share is None:
            return None if self.exposure_not_measured is None else (
                f"conflict exposure not measured: {self.exposure_not_measured}")
        ties = self.tied_exposure()
        said = None if ties is None else ties.describe()
        text = f"conflict exposure {share.describe()}" + ("" if said is None else f", {said}")
        if parts is not None and parts.at_risk is not None:
            susceptibility = "—" if parts.susceptibility is None else f"{parts.susceptibility:.3f}"
            text += f"; faithfulness at risk {parts.at_risk:.3f}, susceptibility {susceptibility}"
        return text

    def intervals(self) -> dict[str, tuple[float, float]]:
        """The 95% interval of each objective whose bounds are both defined."""
        intervals: dict[str, tuple[float, float]] = {}
        for name, bounds in (self.ci or {}).items():
            if bounds is None:
                continue
            low, high = bounds[0], bounds[1]
            if low is not None and high is not None:
                intervals[name] = (float(low), float(high))
        return intervals


TRIAL_COLUMNS: dict[str, Column] = {name: meta for name, info in TrialRecord.model_fields.items()
                                    for meta in info.metadata if isinstance(meta, Column)}
"""The record fields the trial tables show, by field name (:class:`Column`), in declaration order."""


def shown_columns(records: Iterable[TrialRecord]) -> list[str]:
    """The :data:`TRIAL_COLUMNS` a table of ``records`` shows: those set on at least one of them."""
    rows = list(records)
    return [name for name in TRIAL_COLUMNS if any(getattr(record, name) is not None for record in rows)]


MARGIN_Z = 1.96
"""The z of the run-to-run margins of a study written before its run-to-run sd was recorded (``NoiseFloor.z``, which
no study file could change): what :meth:`StudyRecord.from_study` reads such margins back with."""


@dataclass(frozen=True)
class Confirmation:
    """A front member's figures on the confirmation cases (``confirm:``), measured when the study ended: per quality
    objective its value and 95% interval (``ci``; a bound is None when undefined), ``n``/``n_total`` the held-out cases
    scored and asked, and the per-case scores they come from, in the golden set's order (``recall_cases`` over the
    held-out cases, ``f0``/``f3`` and ``exposed_cases`` over those with keypoints; None in a study written before they
    were kept), which the pick notes compare paired. Stored in the study's ``confirm`` user attribute as :meth:`to_dict` writes it,
    keyed by the trial number as a string (JSON keys are strings)."""

    values: dict[str, float | None]
    ci: dict[str, list[float | None] | None]
    n: int
    n_total: int
    recall_cases: tuple[float, ...] | None = None
    f0: tuple[float | None, ...] | None = None
    f3: tuple[float | None, ...] | None = None
    exposed_cases: tuple[int, ...] | None = None

    FIGURES = ("values", "ci", "n", "n_total")
    """What an export keeps of a confirmation (its per-case scores stay in the study)."""

    def to_dict(self) -> dict[str, Any]:
        stored: dict[str, Any] = {"values": dict(self.values), "ci": dict(self.ci), "n": self.n, "n_total": self.n_total}
        for name in ("recall_cases", "f0", "f3", "exposed_cases"):
            value = getattr(self, name)
            if value is not None:
                stored[name] = list(value)
        return stored

    def figures(self) -> dict[str, Any]:
        """The figures without the per-case scores: what an export's provenance keeps."""
        return {name: value for name, value in self.to_dict().items() if name in self.FIGURES}

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> Confirmation:
        """The stored form back; an entry written before the per-case scores were kept has none."""
        recall, f0, f3, shown = stored.get("recall_cases"), stored.get("f0"), stored.get("f3"), stored.get("exposed_cases")
        return cls(
            values={name: None if v is None else float(v) for name, v in dict(stored.get("values") or {}).items()},
            ci=dict(stored.get("ci") or {}),
            n=int(stored.get("n") or 0),
            n_total=int(stored.get("n_total") or 0),
            recall_cases=None if recall is None else tuple(float(v) for v in recall),
            f0=None if f0 is None else tuple(f0),
            f3=None if f3 is None else tuple(f3),
            exposed_cases=None if shown is None else tuple(int(flag) for flag in shown),
        )

    def interval(self, name: str) -> tuple[float, float] | None:
        """The 95% interval of objective ``name`` when both bounds are defined."""
        bounds = self.ci.get(name)
        if bounds is None or bounds[0] is None or bounds[1] is None:
            return None
        return float(bounds[0]), float(bounds[1])

    def held_out_record(self) -> TrialRecord | None:
        """The per-case scores on the held-out cases as a trial record that paired comparisons read; None for an entry
        written before they were kept."""
        if self.recall_cases is None:
            return None
        return TrialRecord(recall_cases=self.recall_cases, f0=self.f0, f3=self.f3, exposed_cases=self.exposed_cases,
                           n_total=None if self.f0 is None else len(self.f0))


@dataclass(frozen=True)
class StudyRecord:
    """A study's user attributes, fixed when the first worker creates it: the dataset it ran on, the one
    shuffled case order every trial walks, the objectives in ``trial.values`` order, the noise floor,
    the pruning margins and one configuration's run-to-run sd per objective (``run_sd``, what paired comparisons add;
    see ``tuner.noisefloor``), the study file, the fixed settings, and the worker
    (``host:pid``) that measured the noise floor (None when the study file gave it), ``labels``: the golden set's
    provenance (``golden.provenance.json`` as :meth:`tuner.dataset.LabelProvenance.to_dict` writes it; None: unknown
    origin), the golden cases held out for confirmation (``confirm_cases``, empty without ``confirm:``) and each
    confirmed front member's figures on them (``confirm``: trial number → :class:`Confirmation`), ``golden_hash``,
    the content hash of the whole golden set the
    study file names (``dataset_hash`` is that of the tuning share with ``confirm:``; None in a study written before
    tuner recorded it), ``retrieval``: the retrieval service a study over one measured
    (:meth:`tuner.external.ExternalConfig.described`; None: tuner's own retrieval), ``engine``: where tuner's own first
    stage ran (:meth:`tuner.engine.MilvusEngine.described`, never a token; None: a study recorded before tuner kept it,
    which ran in memory), ``language``: the language of
    the golden cases' questions (:func:`tuner.text.detect_language`), which the report is written in (None: a study
    recorded before tuner kept it), and ``text_rules``: how the tuner that created it turned text into scores
    (:data:`tuner.retrieval.TEXT_RULES`: the text layer and the BM25 list rule; None: a study recorded before tuner
    kept them)."""

    dataset_hash: str | None = None
    case_order: list[str] = field(default_factory=list)
    objectives: list[str] = field(default_factory=list)
    noise_floor: dict[str, float] | None = None
    pruning_margin: dict[str, float] = field(default_factory=dict)
    run_sd: dict[str, float] = field(default_factory=dict)
    study_file: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    calibrated_by: str | None = None
    confirm_cases: list[str] = field(default_factory=list)
    confirm: dict[int, Confirmation] = field(default_factory=dict)
    labels: dict[str, Any] | None = None
    golden_hash: str | None = None
    retrieval: dict[str, Any] | None = None
    engine: dict[str, Any] | None = None
    language: str | None = None
    text_rules: dict[str, str] | None = None

    @property
    def created(self) -> bool:
        """True once a worker has written the record (the noise floor is the last thing it decides)."""
        return self.noise_floor is not None

    def write(self, study: optuna.Study) -> None:
        """Write what the first worker fixes; the confirmation split and results are written where they are made
        (``tuner.study._confirm``)."""
        for key, value in asdict(self).items():
            if key not in ("confirm_cases", "confirm", "golden_hash"):
                study.set_user_attr(key, value)

    @classmethod
    def from_study(cls, study: optuna.Study) -> StudyRecord:
        attrs = study.user_attrs
        floor = attrs.get("noise_floor")
        margins = {k: float(v) for k, v in (attrs.get("pruning_margin") or {}).items()}
        run_sd = attrs.get("run_sd")
        # a study written before run_sd was recorded kept only the margins z · √2 · run_sd, at MARGIN_Z
        run_sd = {k: run_sd_of_margin(v, MARGIN_Z) for k, v in margins.items()} if run_sd is None else run_sd
        return cls(
            dataset_hash=attrs.get("dataset_hash"),
            case_order=list(attrs.get("case_order") or []),
            objectives=list(attrs.get("objectives") or []),
            noise_floor=None if floor is None else {k: float(v) for k, v in floor.items()},
            pruning_margin=margins,
            run_sd={k: float(v) for k, v in run_sd.items()},
            study_file=attrs.get("study_file"),
            settings=dict(attrs.get("settings") or {}),
            calibrated_by=attrs.get("calibrated_by"),
            confirm_cases=list(attrs.get("confirm_cases") or []),
            confirm={int(number): Confirmation.from_dict(c) for number, c in (attrs.get("confirm") or {}).items()},
            labels=attrs.get("labels"),
            golden_hash=attrs.get("golden_hash"),
            retrieval=attrs.get("retrieval"),
            engine=attrs.get("engine"),
            language=attrs.get("language"),
            text_rules=attrs.get("text_rules"),
        )

    def provenance(self) -> LabelProvenance | None:
        """``labels`` read back (``None``: unknown origin, or a study written before tuner recorded it)."""
        return None if self.labels is None else LabelProvenance.from_mapping(self.labels, "study attribute labels")
