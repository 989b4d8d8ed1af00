"""Stress (ranking → answers → verdicts → **stress matrix**): accuracy of one configuration under each corruption
condition of one index, and under noise position.

Every condition is a metadata view of the SAME chunk table and retriever (``clean``, ``all``,
``kind=K,severity=S``: see ``ChunkTable.mask``), so index construction cannot confound the comparison.

Per case and condition the generator answers from the condition's retrieved context and the judge
gives per-keypoint verdicts. The case is **correct** when the answer states every keypoint
(faithful = 1), a yes/no outcome, so accuracy = correct / scored is a proportion with a Wilson 95%
interval. Cases whose answer or verdicts are missing are counted by reason, never as wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tuner.chunking import CONFLICT
from tuner.dataset import Dataset, GoldenCase
from tuner.errors import UserError
from tuner.evaluation import Responder, RobustnessEvaluator
from tuner.llm import map_concurrent
from tuner.metrics import faithful, misled
from tuner.noise import NoiseConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import Estimate, mean_estimate
from tuner.verdicts import KeypointVerdict

CLEAN = "clean"
UNFILTERED = "unfiltered"
Position = Literal["front", "middle", "end"]
POSITIONS: tuple[Position, ...] = ("front", "middle", "end")
UNFILTERED_NOTE = (
    "'unfiltered' retrieves over the mixed index (clean and every corrupted document together); "
    "it is not a worst-case sensitivity: read the per-type conditions for that."
)


@dataclass(frozen=True)
class Condition:
    """A named index view: ``clean``, ``unfiltered`` (view ``all``), or one corruption ``kind`` at one ``severity``."""

    name: str
    view: str
    kind: str | None = None
    severity: str | None = None


def stress_conditions(dataset: Dataset) -> list[Condition]:
    """``clean``, ``unfiltered`` and every (kind, severity) present in the dataset's conflicts, sorted."""
    pairs = sorted({(c.kind, c.severity) for c in dataset.conflicts})
    return [
        Condition(CLEAN, "clean"),
        Condition(UNFILTERED, "all"),
        *(Condition(f"{kind}/{severity}", f"kind={kind},severity={severity}", kind, severity) for kind, severity in pairs),
    ]


@dataclass(frozen=True)
class CaseResult:
    """One case under one condition: ``correct`` is None when the answer or a verdict is missing
    (``missing`` says why); ``conflicts`` are the doc ids of conflicting chunks in its context."""

    case_id: str
    correct: bool | None
    missing: str | None
    verdicts: tuple[KeypointVerdict, ...]
    conflicts: tuple[str, ...] = ()


def _accuracy(results: Sequence[CaseResult]) -> Estimate:
    return mean_estimate(
        [None if r.correct is None else float(r.correct) for r in results],
        [r.missing for r in results],
        ci_method="wilson",
    )


@dataclass(frozen=True)
class ConditionResult:
    """accuracy with its Wilson interval; ``delta`` = accuracy − clean accuracy over the cases scored in
    both (negative = worse than clean); ``misled_rate`` = share of the cases right when clean whose
    answer here contradicts a keypoint (``misled_n`` such cases); ``exposed`` = cases whose context
    held at least one conflicting chunk."""

    condition: Condition
    cases: tuple[CaseResult, ...]
    accuracy: Estimate
    delta: float | None
    misled_rate: float | None
    misled_n: int
    exposed: int

    def to_dict(self) -> dict[str, object]:
        return {
            "view": self.condition.view,
            "kind": self.condition.kind,
            "severity": self.condition.severity,
            "accuracy": self.accuracy.value,
            "ci": list(self.accuracy.ci) if self.accuracy.ci else None,
            "delta": self.delta,
            "misled_rate": self.misled_rate,
            "misled_n": self.misled_n,
            "n": self.accuracy.n,
            "n_total": self.accuracy.n_total,
            "missing": dict(self.accuracy.missing),
            "exposed": self.exposed,
        }


def compare_with_clean(condition: Condition, cases: Sequence[CaseResult], clean: Sequence[CaseResult]) -> ConditionResult:
    """Accuracy, Δ vs clean and misled rate of ``cases`` (paired with ``clean`` by position)."""
    both = [(c, r) for c, r in zip(clean, cases, strict=True) if c.correct is not None and r.correct is not None]
    delta = (sum(bool(r.correct) for _, r in both) - sum(bool(c.correct) for c, _ in both)) / len(both) if both else None
    right = [(c, r) for c, r in both if c.correct]
    flags = [misled(c.verdicts, r.verdicts) for c, r in right]
    return ConditionResult(
        condition=condition,
        cases=tuple(cases),
        accuracy=_accuracy(cases),
        delta=delta,
        misled_rate=sum(bool(f) for f in flags) / len(flags) if flags else None,
        misled_n=len(flags),
        exposed=sum(bool(r.conflicts) for r in cases),
    )


@dataclass(frozen=True)
class PositionResult:
    """Accuracy when the same conflicting chunks are injected at one ``position`` (cases that got any)."""

    position: Position
    accuracy: Estimate

    def to_dict(self) -> dict[str, object]:
        ci = self.accuracy.ci
        return {"accuracy": self.accuracy.value, "ci": list(ci) if ci else None, "n": self.accuracy.n,
                "n_total": self.accuracy.n_total, "missing": dict(self.accuracy.missing)}


@dataclass(frozen=True)
class StressReport:
    settings: RetrievalSettings
    conditions: dict[str, ConditionResult]
    positions: dict[Position, PositionResult]
    noise_n: int

    def to_dict(self) -> dict[str, object]:
        return {
            "settings": self.settings.model_dump(mode="json"),
            "accuracy": "share of cases whose answer states every keypoint; Wilson 95% interval",
            "note": UNFILTERED_NOTE,
            "conditions": {name: result.to_dict() for name, result in self.conditions.items()},
            "positions": {name: result.to_dict() for name, result in self.positions.items()},
            "noise_n": self.noise_n,
        }


class StressEvaluator:
    """Runs every condition and position for one configuration over one pipeline (one index).

    >>> report = StressEvaluator(pipeline, Responder(generator, judge)).run(RetrievalSettings(top_k=4))  # doctest: +SKIP
    >>> report.conditions["factual_corruption/moderate"].accuracy.describe()  # doctest: +SKIP
    """

    def __init__(self, pipeline: RetrievalPipeline, responder: Responder, noise_n: int = 2) -> None:
        dataset = pipeline.dataset
        if not dataset.conflicts:
            raise UserError(f"{dataset.path}: no conflicting documents (conflicts.jsonl); write some with 'tuner corrupt'")
        if dataset.retrieval_only:
            raise UserError(f"{dataset.path}: no golden case has keypoints; accuracy cannot be judged")
        self.pipeline = pipeline
        self.noise_n = noise_n
        self.responder = responder
        self.cases = [case for case in dataset.golden if case.keypoints]
        self._rows = {case.id: row for row, case in enumerate(dataset.golden)}

    def _score(self, case: GoldenCase, passages: tuple[str, ...], conflicts: tuple[str, ...]) -> CaseResult:
        answer = self.responder.answer(case.question, passages)
        verdicts = self.responder.judge(case, answer, passages, self.pipeline.dataset.wrong_answers(case))
        if answer.missing_reason:
            return CaseResult(case.id, None, answer.missing_reason, verdicts, conflicts)
        score = faithful(verdicts)
        if score is None:
            reason = next(v.missing_reason for v in verdicts if v.missing_reason)
            return CaseResult(case.id, None, reason, verdicts, conflicts)
        return CaseResult(case.id, score == 1.0, None, verdicts, conflicts)

    def condition(self, settings: RetrievalSettings, condition: Condition) -> list[CaseResult]:
        contexts = self.pipeline.retrieve(settings, condition.view)
        jobs = [contexts[self._rows[case.id]] for case in self.cases]
        return map_concurrent(
            lambda pair: self._score(
                pair[0], tuple(pair[1].passages), tuple(c.doc_id for c in pair[1].chunks if c.source == CONFLICT)
            ),
            list(zip(self.cases, jobs)),
            self.responder.concurrency,
        )

    def position(self, settings: RetrievalSettings, position: Position) -> PositionResult:
        """v3 in ``inject`` mode at ``position``: the same n conflict chunks of each case's relevant
        documents (most similar first), placed at the front, middle or end of its clean context."""
        evaluator = RobustnessEvaluator(
            self.pipeline, self.responder, NoiseConfig(n=self.noise_n, hard_mode="inject", position=position)
        )
        outcomes = [o for o in evaluator.evaluate(settings, ("v3",), [c.id for c in self.cases]) if o.variants["v3"].context.injected]
        rows = [o.variants["v3"] for o in outcomes]
        results = [
            CaseResult(o.case.id, None if v.faithful is None else v.faithful == 1.0, v.missing, v.verdicts)
            for o, v in zip(outcomes, rows)
        ]
        return PositionResult(position, _accuracy(results))

    def run(self, settings: RetrievalSettings, conditions: Sequence[Condition] | None = None) -> StressReport:
        chosen = list(conditions) if conditions is not None else stress_conditions(self.pipeline.dataset)
        clean = self.condition(settings, Condition(CLEAN, "clean"))
        results = {c.name: compare_with_clean(c, clean if c.view == "clean" else self.condition(settings, c), clean) for c in chosen}
        positions = {p: self.position(settings, p) for p in POSITIONS}
        return StressReport(settings, results, positions, self.noise_n)
