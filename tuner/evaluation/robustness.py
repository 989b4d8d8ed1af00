"""Noise-robustness evaluation of one configuration: answers and keypoint verdicts for v0–v4, Δfaithful.

Per case and variant the generator answers from the variant's context and the judge gives, per
keypoint, two separate verdicts (answer, context). Only the context differs between variants.
Calls are memoized per (question, context) and (answer, context, keypoints), so trials whose contexts
equal an earlier trial's cost nothing; remote backends also persist their calls in the call cache.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from tuner.dataset import GoldenCase
from tuner.generation import Answer, Generator
from tuner.judging import Judge, KeypointVerdict
from tuner.llm import map_concurrent
from tuner.metrics import contradicted_share, delta_faithful, faithful, grade_delta, misled, missing_reason, rejected
from tuner.noise import VARIANTS, NoiseConfig, VariantBuilder, VariantContext
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import Estimate, mean_estimate, ratio_of_means_ci


@dataclass(frozen=True)
class VariantOutcome:
    variant: str
    context: VariantContext
    answer: Answer
    verdicts: tuple[KeypointVerdict, ...]

    @property
    def missing(self) -> str | None:
        """Why this outcome has no score (generation or judging failed), else None."""
        return self.answer.missing_reason or missing_reason(self.verdicts)

    @property
    def faithful(self) -> float | None:
        return None if self.answer.missing_reason else faithful(self.verdicts)

    @property
    def contradicted(self) -> float | None:
        return None if self.answer.missing_reason else contradicted_share(self.verdicts)

    @property
    def context_support(self) -> float | None:
        """Share of keypoints the context supports: low values mean a retrieval failure, not a generation one."""
        labels = [v.context for v in self.verdicts]
        if not labels or any(label is None for label in labels):
            return None
        return labels.count("supported") / len(labels)


@dataclass(frozen=True)
class CaseOutcome:
    case: GoldenCase
    variants: dict[str, VariantOutcome]


K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """Thread-safe memo: a key is computed once even when concurrent callers ask for it at the same time
    (the others wait for the first), so concurrent requests for one context cost one call."""

    def __init__(self) -> None:
        self._futures: dict[K, Future[V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, compute: Callable[[], V]) -> tuple[V, bool]:
        """(value, True if this call computed it)."""
        with self._lock:
            future = self._futures.get(key)
            owner = future is None
            if future is None:
                future = self._futures[key] = Future()
        if owner:
            try:
                future.set_result(compute())
            except BaseException as exc:
                future.set_exception(exc)
                with self._lock:
                    del self._futures[key]  # a later call may try again
                raise
        return future.result(), owner


@dataclass
class CallCounts:
    """Generator and judge requests actually made (memo hits excluded), and the tokens they reported."""

    generator: int = 0
    judge: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, generator: int = 0, judge: int = 0) -> None:
        with self._lock:
            self.generator += generator
            self.judge += judge

    def as_dict(self) -> dict[str, int]:
        return {"generator": self.generator, "judge": self.judge, "total": self.generator + self.judge}


class RobustnessEvaluator:
    """Evaluates cases of one dataset under noise variants for any retrieval settings.

    >>> evaluator = RobustnessEvaluator(pipeline, generator, judge, NoiseConfig())  # doctest: +SKIP
    >>> outcomes = evaluator.evaluate(RetrievalSettings(top_k=4), variants=("v0", "v3"))  # doctest: +SKIP
    >>> summarize(outcomes, ("v0", "v3")).variants["v3"].delta_faithful  # doctest: +SKIP
    """

    def __init__(self, pipeline: RetrievalPipeline, generator: Generator, judge: Judge, noise: NoiseConfig) -> None:
        self.pipeline = pipeline
        self.generator = generator
        self.judge = judge
        self.noise = noise
        self.calls = CallCounts()
        self._answers: Memo[tuple[str, tuple[str, ...]], Answer] = Memo()
        self._verdicts: Memo[tuple[str, str, tuple[str, ...]], tuple[KeypointVerdict, ...]] = Memo()
        self._builders: dict[tuple[object, ...], VariantBuilder] = {}
        self._question_vectors: dict[str, np.ndarray] = {}
        dataset = pipeline.dataset
        self._conflicts_with = {c.doc_id: c.conflicts_with for c in dataset.conflicts}
        self._wrong_values: dict[str, list[str]] = {}
        for conflict in dataset.conflicts:
            self._wrong_values.setdefault(conflict.conflicts_with, []).extend(conflict.wrong_values)
        self._rows = {case.id: row for row, case in enumerate(dataset.golden)}

    def wrong_answers(self, case: GoldenCase) -> list[str]:
        """The case's known wrong answers plus the wrong values asserted by conflicts of its relevant documents."""
        extra = [value for doc in case.relevant_doc_ids for value in self._wrong_values.get(doc, [])]
        return list(dict.fromkeys([*case.wrong_answers, *extra]))

    def _builder(self, settings: RetrievalSettings) -> VariantBuilder:
        key = (settings.chunking, settings.embedding_model)
        if key not in self._builders:
            encoder = self.pipeline.encoder(settings)
            if settings.embedding_model not in self._question_vectors:
                self._question_vectors[settings.embedding_model] = encoder.encode(self.pipeline.queries)
            table = self.pipeline.table(settings)
            self._builders[key] = VariantBuilder(
                table, self._question_vectors[settings.embedding_model], self.noise, self._conflicts_with
            )
        return self._builders[key]

    def _answer(self, case: GoldenCase, context: VariantContext) -> Answer:
        key = (case.question, tuple(context.passages))
        answer, computed = self._answers.get(key, lambda: self.generator.generate(case.question, context.passages))
        if computed:
            self.calls.add(generator=1)
        return answer

    def _judge(self, case: GoldenCase, answer: Answer, context: VariantContext) -> tuple[KeypointVerdict, ...]:
        if answer.missing_reason:
            return ()

        def ask() -> tuple[KeypointVerdict, ...]:
            wrong = self.wrong_answers(case)
            return tuple(self.judge.judge(case.question, answer.text, context.passages, case.keypoints, wrong))

        verdicts, computed = self._verdicts.get((case.id, answer.text, tuple(context.passages)), ask)
        if computed:
            self.calls.add(judge=2 * len(case.keypoints))
        return verdicts

    def evaluate(
        self,
        settings: RetrievalSettings,
        variants: Sequence[str] = VARIANTS,
        case_ids: Sequence[str] | None = None,
    ) -> list[CaseOutcome]:
        """Outcomes for the given cases (default: every case with keypoints), in the order given."""
        unknown = [v for v in variants if v not in VARIANTS]
        if unknown:
            raise ValueError(f"unknown variants {unknown}")
        variants = tuple(dict.fromkeys(["v0", *variants]))
        golden = self.pipeline.dataset.golden
        cases = [golden[self._rows[cid]] for cid in case_ids] if case_ids is not None else list(golden)
        cases = [c for c in cases if c.keypoints]
        clean = self.pipeline.retrieve(settings, "clean")
        in_index = (
            self.pipeline.retrieve(settings, "all")
            if "v3" in variants and self.noise.hard_mode == "in_index"
            else None
        )
        builder = self._builder(settings)
        contexts = []
        for case in cases:
            row = self._rows[case.id]
            hard = None if in_index is None else in_index[row]
            contexts += [(case, builder.build(row, case, clean[row], hard, variant)) for variant in variants]
        answers = map_concurrent(lambda job: self._answer(*job), contexts, self.generator.concurrency)
        verdicts = map_concurrent(
            lambda job: self._judge(job[0][0], job[1], job[0][1]), list(zip(contexts, answers)), self.judge.concurrency
        )
        outcomes: dict[str, dict[str, VariantOutcome]] = {}
        for (case, context), answer, verdict in zip(contexts, answers, verdicts):
            outcomes.setdefault(case.id, {})[context.variant] = VariantOutcome(context.variant, context, answer, verdict)
        return [CaseOutcome(case, outcomes[case.id]) for case in cases]


@dataclass(frozen=True)
class VariantSummary:
    faithful: Estimate
    contradicted: Estimate
    delta_faithful: float | None
    delta_ci: tuple[float, float] | None
    delta_n: int
    grade: str | None
    misled_rate: Estimate | None
    rejection_rate: Estimate | None
    context_support: Estimate
    injected: int
    shortfall: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "faithful": self.faithful.value,
            "faithful_ci": _ci(self.faithful.ci),
            "delta_faithful": self.delta_faithful,
            "ci": _ci(self.delta_ci),
            "grade": self.grade,
            "misled_rate": None if self.misled_rate is None else self.misled_rate.value,
            "rejection_rate": None if self.rejection_rate is None else self.rejection_rate.value,
            "contradicted": self.contradicted.value,
            "context_support": self.context_support.value,
            "n": self.faithful.n,
            "n_total": self.faithful.n_total,
            "n_paired": self.delta_n,
            "missing": self.faithful.missing,
            "injected": self.injected,
            "shortfall": self.shortfall,
        }


def _ci(ci: tuple[float, float] | None) -> list[float | None] | None:
    if ci is None:
        return None
    return [c if math.isfinite(c) else None for c in ci]


def paired_faithful(outcomes: Sequence[CaseOutcome], variant: str) -> tuple[list[float], list[float]]:
    """(F(v0), F(v)) of the cases scored at both v0 and ``variant``, paired by case."""
    f0, fv = [], []
    for outcome in outcomes:
        a, b = outcome.variants["v0"].faithful, outcome.variants[variant].faithful
        if a is not None and b is not None:
            f0.append(a)
            fv.append(b)
    return f0, fv


def summarize_variant(
    outcomes: Sequence[CaseOutcome], variant: str, ci: bool = True, seed: int = 0
) -> VariantSummary:
    method = "bootstrap" if ci else None
    rows = [o.variants[variant] for o in outcomes]
    reasons = [r.missing for r in rows]
    faithful_values = [r.faithful if r.missing is None else None for r in rows]
    delta = delta_ci = grade = misled_rate = None
    delta_n = 0
    if variant != "v0":
        f0, fv = paired_faithful(outcomes, variant)
        delta_n = len(f0)
        if f0 and np.mean(f0) > 0:
            delta = delta_faithful(f0, fv)
            grade = grade_delta(delta)
            if ci and len(f0) > 1:
                delta_ci = ratio_of_means_ci(f0, fv, seed=seed)
        flags = [misled(o.variants["v0"].verdicts, o.variants[variant].verdicts)
                 if o.variants["v0"].verdicts and o.variants[variant].verdicts else None for o in outcomes]
        misled_rate = mean_estimate([None if f is None else float(f) for f in flags], ci_method=None)
    rejection = None
    if variant == "v4":
        rejection = mean_estimate(
            [None if r.answer.missing_reason else float(rejected(r.answer.text)) for r in rows],
            [r.answer.missing_reason for r in rows],
            ci_method="wilson" if ci else None,
        )
    return VariantSummary(
        faithful=mean_estimate(faithful_values, reasons, ci_method=method, seed=seed),
        contradicted=mean_estimate([r.contradicted if r.missing is None else None for r in rows], reasons, ci_method=None),
        delta_faithful=delta,
        delta_ci=delta_ci,
        delta_n=delta_n,
        grade=grade,
        misled_rate=misled_rate,
        rejection_rate=rejection,
        context_support=mean_estimate([r.context_support if r.missing is None else None for r in rows], reasons, ci_method=None),
        injected=sum(r.context.injected for r in rows),
        shortfall=sum(r.context.shortfall for r in rows),
    )


@dataclass(frozen=True)
class RobustnessReport:
    variants: dict[str, VariantSummary]
    by_category: dict[str, dict[str, VariantSummary]]
    by_difficulty: dict[str, dict[str, VariantSummary]]
    calls: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        missing = {v: s.faithful.missing for v, s in self.variants.items() if s.faithful.missing}
        return {
            "variants": {v: s.to_dict() for v, s in self.variants.items()},
            "by_category": {b: {v: s.to_dict() for v, s in per.items()} for b, per in self.by_category.items()},
            "by_difficulty": {b: {v: s.to_dict() for v, s in per.items()} for b, per in self.by_difficulty.items()},
            "missing": missing,
            "calls": self.calls,
        }


def summarize(outcomes: Sequence[CaseOutcome], variants: Sequence[str], calls: dict[str, int] | None = None) -> RobustnessReport:
    """Per-variant summaries overall and per category / difficulty (buckets without CIs)."""
    variants = tuple(dict.fromkeys(["v0", *variants]))

    def buckets(label_of: Any) -> dict[str, dict[str, VariantSummary]]:
        groups: dict[str, list[CaseOutcome]] = {}
        for outcome in outcomes:
            groups.setdefault(label_of(outcome.case), []).append(outcome)
        return {label: {v: summarize_variant(group, v, ci=False) for v in variants} for label, group in sorted(groups.items())}

    return RobustnessReport(
        variants={v: summarize_variant(outcomes, v) for v in variants},
        by_category=buckets(lambda c: c.category),
        by_difficulty=buckets(lambda c: c.difficulty),
        calls=dict(calls or {}),
    )

