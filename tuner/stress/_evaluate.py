"""Stress (ranking → answers → verdicts → **stress matrix**): accuracy of one configuration under the RAGStress
conditions of one index, and under the position of injected conflicts.

Every condition is a metadata view of the SAME chunk table and retriever (see ``ChunkTable.mask``),
so index construction cannot confound the comparison:

- ``no_retrieval``: the generator answers from the question alone (no context);
- ``clean``: the corpus only (is_corrupted = false);
- ``unfiltered``: everything (corpus and every corrupted document);
- ``<type>/<severity>``: ONLY the corrupted documents of that type and severity (view ``only:kind=…,severity=…``);
- ``clean+<type>/<severity>`` (extra, on request): the corpus plus those corrupted documents, i.e.
  how much one type of rot hurts an otherwise clean knowledge base.

Per case and condition the generator answers from the condition's retrieved context and the judge
gives per-keypoint verdicts. The case is **correct** when the answer states every keypoint
(faithful = 1), a yes/no outcome. Cases whose answer or verdicts are missing are counted by reason,
never as wrong. The metrics are in :mod:`tuner.stress._metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tuner.chunking import CONFLICT
from tuner.corruption import CORRUPTORS, SEVERITIES
from tuner.dataset import Dataset, GoldenCase
from tuner.errors import UserError
from tuner.evaluation import Responder, RobustnessEvaluator
from tuner.llm import map_concurrent
from tuner.metrics import faithful
from tuner.variants import VariantsConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import Estimate, mean_estimate
from tuner.stress._metrics import Difference, delta, empty_rate, misled_rate, paired_table
from tuner.verdicts import KeypointVerdict

NO_RETRIEVAL = "no_retrieval"
CLEAN = "clean"
UNFILTERED = "unfiltered"
CLEAN_PLUS = "clean+"
TYPES: tuple[str, ...] = tuple(CORRUPTORS)
"""The four corruption types of the matrix, in report order (semantic fidelity first)."""
Position = Literal["front", "middle", "end"]
POSITIONS: tuple[Position, ...] = ("front", "middle", "end")
UNFILTERED_NOTE = (
    "'unfiltered' retrieves over the mixed index (clean and every corrupted document together); "
    "it is not a worst-case sensitivity: read the type × severity conditions for that."
)


@dataclass(frozen=True)
class Condition:
    """A named index view; ``view`` None = no retrieval. ``kind``/``severity`` name a corrupted-document filter."""

    name: str
    view: str | None
    kind: str | None = None
    severity: str | None = None


def matrix_pairs(dataset: Dataset) -> list[tuple[str, str]]:
    """The type × severity cells: the 4 × 3 of the taxonomy, then any other (kind, severity) in the
    dataset's conflicts (e.g. ``stale_version``), sorted."""
    canonical = [(kind, severity) for kind in TYPES for severity in SEVERITIES]
    others = sorted({(c.kind, c.severity) for c in dataset.conflicts} - set(canonical))
    return canonical + others


def stress_conditions(dataset: Dataset, clean_plus_type: bool = False) -> list[Condition]:
    """``no_retrieval``, ``clean``, ``unfiltered``, then one ``<type>/<severity>`` per cell of
    :func:`matrix_pairs` that has corrupted documents; with ``clean_plus_type`` also the
    ``clean+<type>/<severity>`` views of the same cells."""
    present = {(c.kind, c.severity) for c in dataset.conflicts}
    cells = [pair for pair in matrix_pairs(dataset) if pair in present]
    conditions = [Condition(NO_RETRIEVAL, None), Condition(CLEAN, "clean"), Condition(UNFILTERED, "all")]
    conditions += [Condition(f"{k}/{s}", f"only:kind={k},severity={s}", k, s) for k, s in cells]
    if clean_plus_type:
        conditions += [Condition(f"{CLEAN_PLUS}{k}/{s}", f"kind={k},severity={s}", k, s) for k, s in cells]
    return conditions


@dataclass(frozen=True)
class CaseResult:
    """One case under one condition: ``correct`` is None when the answer or a verdict is missing
    (``missing`` says why); ``retrieved`` chunks were in its context, ``conflicts`` are the doc ids of
    its corrupted (conflicting) chunks, one per chunk."""

    case_id: str
    correct: bool | None
    missing: str | None
    verdicts: tuple[KeypointVerdict, ...]
    retrieved: int = 0
    conflicts: tuple[str, ...] = ()


def _accuracy(results: Sequence[CaseResult]) -> Estimate:
    return mean_estimate(
        [None if r.correct is None else float(r.correct) for r in results],
        [r.missing for r in results],
        ci_method="wilson",
    )


@dataclass(frozen=True)
class ConditionResult:
    """One condition: ``accuracy`` (Wilson), ``delta`` = Acc(clean) − Acc(condition) on the paired cases
    (Newcombe interval), ``rho`` = share of queries with nothing retrieved (Wilson), ``misled`` =
    share of the cases right under clean that are wrong here (Wilson); ``corrupted_chunks`` of the
    ``retrieved_chunks`` were corrupted; ``exposed`` cases had at least one."""

    condition: Condition
    cases: tuple[CaseResult, ...]
    accuracy: Estimate
    delta: Difference
    rho: Estimate
    misled: Estimate
    retrieved_chunks: int
    corrupted_chunks: int
    exposed: int

    @property
    def corrupted_share(self) -> float | None:
        """Corrupted chunks / retrieved chunks, over every query (None when nothing was retrieved)."""
        return self.corrupted_chunks / self.retrieved_chunks if self.retrieved_chunks else None

    def to_dict(self) -> dict[str, object]:
        return {
            "view": self.condition.view,
            "kind": self.condition.kind,
            "severity": self.condition.severity,
            "accuracy": self.accuracy.to_dict(),
            "delta": self.delta.to_dict(),
            "rho": self.rho.to_dict(),
            "misled": self.misled.to_dict(),
            "corrupted_share": {
                "value": self.corrupted_share,
                "corrupted_chunks": self.corrupted_chunks,
                "retrieved_chunks": self.retrieved_chunks,
            },
            "exposed": self.exposed,
        }


def compare_with_clean(condition: Condition, cases: Sequence[CaseResult], clean: Sequence[CaseResult]) -> ConditionResult:
    """Every metric of ``cases`` under ``condition``, paired with the ``clean`` results by position."""
    clean_correct = [c.correct for c in clean]
    correct = [r.correct for r in cases]
    return ConditionResult(
        condition=condition,
        cases=tuple(cases),
        accuracy=_accuracy(cases),
        delta=delta(paired_table(clean_correct, correct)),
        rho=empty_rate([r.retrieved for r in cases]),
        misled=misled_rate(clean_correct, correct, [r.missing for r in cases]),
        retrieved_chunks=sum(r.retrieved for r in cases),
        corrupted_chunks=sum(len(r.conflicts) for r in cases),
        exposed=sum(bool(r.conflicts) for r in cases),
    )


@dataclass(frozen=True)
class PositionResult:
    """Accuracy when the same conflicting chunks are injected at one ``position`` (cases that got any)."""

    position: Position
    accuracy: Estimate

    def to_dict(self) -> dict[str, object]:
        return {"accuracy": self.accuracy.to_dict()}


@dataclass(frozen=True)
class StressReport:
    """The conditions of one configuration (``label`` names it: settings file or generator), the
    ``absent`` type × severity cells (no corrupted documents of that kind) and the positions."""

    label: str
    settings: RetrievalSettings
    conditions: dict[str, ConditionResult]
    absent: tuple[str, ...]
    positions: dict[Position, PositionResult]
    injected_conflicts: int

    def matrix(self) -> dict[str, dict[str, ConditionResult]]:
        """The ``<type>/<severity>`` conditions as type → severity → result, in report order."""
        cells: dict[str, dict[str, ConditionResult]] = {}
        for result in self.conditions.values():
            kind, severity = result.condition.kind, result.condition.severity
            if kind is not None and severity is not None and not result.condition.name.startswith(CLEAN_PLUS):
                cells.setdefault(kind, {})[severity] = result
        return cells

    def deltas(self) -> dict[str, dict[str, float | None]]:
        """Δ(M, t, s) as type → severity → value (None when no case was paired)."""
        return {kind: {s: r.delta.value for s, r in row.items()} for kind, row in self.matrix().items()}


class StressEvaluator:
    """Runs every condition and position for one configuration over one pipeline (one index).

    >>> report = StressEvaluator(pipeline, Responder(generator, judge)).run(RetrievalSettings(top_k=4))  # doctest: +SKIP
    >>> report.conditions["factual_corruption/moderate"].delta.value  # doctest: +SKIP
    """

    def __init__(self, pipeline: RetrievalPipeline, responder: Responder, injected_conflicts: int = 2) -> None:
        dataset = pipeline.dataset
        if not dataset.conflicts:
            raise UserError(f"{dataset.path}: no conflicting documents (conflicts.jsonl); write some with 'tuner corrupt'")
        if dataset.retrieval_only:
            raise UserError(f"{dataset.path}: no golden case has keypoints; accuracy cannot be judged")
        self.pipeline = pipeline
        self.injected_conflicts = injected_conflicts
        self.responder = responder
        self.cases = [case for case in dataset.golden if case.keypoints]
        self._rows = {case.id: row for row, case in enumerate(dataset.golden)}

    def _score(self, case: GoldenCase, passages: tuple[str, ...], conflicts: tuple[str, ...]) -> CaseResult:
        answer = self.responder.answer(case.question, passages)
        verdicts = self.responder.judge(case, answer, passages, self.pipeline.dataset.wrong_answers(case))
        if answer.missing_reason:
            return CaseResult(case.id, None, answer.missing_reason, verdicts, len(passages), conflicts)
        score = faithful(verdicts)
        if score is None:
            reason = next(v.missing_reason for v in verdicts if v.missing_reason)
            return CaseResult(case.id, None, reason, verdicts, len(passages), conflicts)
        return CaseResult(case.id, score == 1.0, None, verdicts, len(passages), conflicts)

    def condition(self, settings: RetrievalSettings, condition: Condition) -> list[CaseResult]:
        """The results of every case with keypoints under ``condition`` (no context for no retrieval)."""
        if condition.view is None:
            jobs: list[tuple[GoldenCase, tuple[str, ...], tuple[str, ...]]] = [(case, (), ()) for case in self.cases]
        else:
            contexts = self.pipeline.retrieve(settings, condition.view)
            jobs = [
                (case, tuple(ctx.passages), tuple(c.doc_id for c in ctx.chunks if c.source == CONFLICT))
                for case, ctx in ((case, contexts[self._rows[case.id]]) for case in self.cases)
            ]
        return map_concurrent(lambda job: self._score(*job), jobs, self.responder.concurrency)

    def position(self, settings: RetrievalSettings, position: Position) -> PositionResult:
        """v3 in ``inject`` mode at ``position``: the same n conflict chunks of each case's relevant
        documents (most similar first), placed at the front, middle or end of its clean context."""
        evaluator = RobustnessEvaluator(
            self.pipeline, self.responder, VariantsConfig(n=self.injected_conflicts, hard_mode="inject", position=position)
        )
        outcomes = [o for o in evaluator.evaluate(settings, ("v3",), [c.id for c in self.cases]) if o.variants["v3"].context.injected]
        rows = [o.variants["v3"] for o in outcomes]
        results = [
            CaseResult(o.case.id, None if v.faithful is None else v.faithful == 1.0, v.missing, v.verdicts)
            for o, v in zip(outcomes, rows)
        ]
        return PositionResult(position, _accuracy(results))

    def run(self, settings: RetrievalSettings, label: str = "", clean_plus_type: bool = False) -> StressReport:
        dataset = self.pipeline.dataset
        chosen = stress_conditions(dataset, clean_plus_type)
        clean = self.condition(settings, Condition(CLEAN, "clean"))
        results = {
            c.name: compare_with_clean(c, clean if c.name == CLEAN else self.condition(settings, c), clean) for c in chosen
        }
        absent = tuple(f"{k}/{s}" for k, s in matrix_pairs(dataset) if f"{k}/{s}" not in results)
        positions = {p: self.position(settings, p) for p in POSITIONS}
        return StressReport(label, settings, results, absent, positions, self.injected_conflicts)
