"""Metrics (variants → answers → verdicts → **metrics**): robustness evaluation of one configuration: answers and
keypoint verdicts for v0–v4, Δfaithful, and v3's Δ split into conflict exposure and the reader's susceptibility.

Per case and variant the generator answers from the variant's context and the judge gives, per
keypoint, two separate verdicts (answer, context). Only the context differs between variants.
Answers and verdicts come from a :class:`~tuner.evaluation.Responder`, memoized per (question, context)
and (answer, context, keypoints), so trials whose contexts equal an earlier trial's cost nothing; remote
backends also persist their calls in the call cache.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tuner.dataset import GoldenCase
from tuner.evaluation._responder import Responder
from tuner.evaluation.retrieval import exposure_ties
from tuner.generation import Answer
from tuner.llm import map_concurrent
from tuner.metrics import (
    DeltaParts,
    TiedExposure,
    contradicted_share,
    correct,
    delta_faithful,
    delta_parts,
    exposed,
    faithful,
    grade_delta,
    misled,
    missing_reason,
    rejected,
)
from tuner.progress import NullTask, Task
from tuner.variants import GRADED_VARIANTS, VARIANTS, VariantsConfig, VariantBuilder, VariantContext, shortfall_warning
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import CiMethod, Estimate, Proportion, mean_estimate, ratio_of_means_ci
from tuner.verdicts import KeypointVerdict


@dataclass(frozen=True)
class VariantOutcome:
    """One case at one variant. ``exposure_tie``: v3 ``in_index`` only, whether a tie at the cut decided
    :attr:`exposed` (:func:`tuner.metrics.tie_flip`: +1 could become exposed, −1 unexposed, 0 neither)."""

    variant: str
    context: VariantContext
    answer: Answer
    verdicts: tuple[KeypointVerdict, ...]
    exposure_tie: int | None = None

    @property
    def missing(self) -> str | None:
        """Why this outcome has no score (generation or judging failed), else None."""
        return self.answer.missing_reason or missing_reason(self.verdicts)

    @property
    def faithful(self) -> float | None:
        return None if self.answer.missing_reason else faithful(self.verdicts)

    @property
    def correct(self) -> float | None:
        """Share of keypoints the answer states or does not contradict (lenient; see :func:`tuner.metrics.correct`)."""
        return None if self.answer.missing_reason else correct(self.verdicts)

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

    @property
    def exposed(self) -> bool:
        """The context holds a chunk of a conflicting document (:func:`tuner.metrics.exposed`)."""
        return exposed([c.conflicting for c in self.context.chunks])


@dataclass(frozen=True)
class CaseOutcome:
    case: GoldenCase
    variants: dict[str, VariantOutcome]


class RobustnessEvaluator:
    """Evaluates cases of one dataset under variants v0–v4 for any retrieval settings.

    >>> evaluator = RobustnessEvaluator(pipeline, Responder(generator, judge), VariantsConfig())  # doctest: +SKIP
    >>> outcomes = evaluator.evaluate(RetrievalSettings(top_k=4), variants=("v0", "v3"))  # doctest: +SKIP
    >>> summarize(outcomes, ("v0", "v3")).variants["v3"].delta_faithful  # doctest: +SKIP
    """

    def __init__(self, pipeline: RetrievalPipeline, responder: Responder, variant_config: VariantsConfig) -> None:
        self.pipeline = pipeline
        self.responder = responder
        self.variant_config = variant_config
        self._builders: dict[tuple[object, ...], VariantBuilder] = {}
        dataset = pipeline.dataset
        self._conflicts_with = {c.doc_id: c.conflicts_with for c in dataset.conflicts}
        self._rows = {case.id: row for row, case in enumerate(dataset.golden)}

    def _builder(self, settings: RetrievalSettings) -> VariantBuilder:
        key = (settings.chunking, settings.encoding)
        if key not in self._builders:
            self._builders[key] = VariantBuilder(
                self.pipeline.table(settings), lambda: self.pipeline.query_vectors(settings), self.variant_config,
                self._conflicts_with,
            )
        return self._builders[key]

    def evaluate(
        self,
        settings: RetrievalSettings,
        variants: Sequence[str] = VARIANTS,
        case_ids: Sequence[str] | None = None,
        task: Task | None = None,
    ) -> list[CaseOutcome]:
        """Outcomes for the given cases (default: every case with keypoints), in the order given. ``task``, when
        given, advances by one per answer and one per verdict (:func:`evaluation_steps` of them): every answer comes
        before the first verdict."""
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
            if "v3" in variants and self.variant_config.hard_mode == "in_index"
            else None
        )
        ties = None if in_index is None else exposure_ties(
            self.pipeline, settings, tuple(exposed([c.conflicting for c in ctx.chunks]) for ctx in in_index))
        builder = self._builder(settings)
        contexts = []
        for case in cases:
            row = self._rows[case.id]
            hard = None if in_index is None else in_index[row]
            contexts += [(case, builder.build(row, case, clean[row], hard, variant)) for variant in variants]
        responder, dataset = self.responder, self.pipeline.dataset
        step = task or NullTask()

        def answer_one(job: tuple[GoldenCase, VariantContext]) -> Answer:
            reply = responder.answer(job[0].question, job[1].passages)
            step.advance()
            return reply

        def judge_one(job: tuple[tuple[GoldenCase, VariantContext], Answer]) -> tuple[KeypointVerdict, ...]:
            (case, context), reply = job
            verdict = responder.judge(case, reply, context.passages, dataset.wrong_answers(case))
            step.advance()
            return verdict

        answers = map_concurrent(answer_one, contexts, responder.generator.concurrency)
        verdicts = map_concurrent(judge_one, list(zip(contexts, answers)), responder.judge_backend.concurrency)
        outcomes: dict[str, dict[str, VariantOutcome]] = {}
        for (case, context), answer, verdict in zip(contexts, answers, verdicts):
            tie = ties[self._rows[case.id]] if ties is not None and context.variant == "v3" else None
            outcomes.setdefault(case.id, {})[context.variant] = VariantOutcome(context.variant, context, answer, verdict, tie)
        return [CaseOutcome(case, outcomes[case.id]) for case in cases]


def evaluation_steps(n_cases: int, variants: Sequence[str]) -> int:
    """Steps of :meth:`RobustnessEvaluator.evaluate` over ``n_cases`` cases: 2 · n_cases · |{v0} ∪ variants|
    (an answer and a verdict per case and variant)."""
    return 2 * n_cases * len(dict.fromkeys(["v0", *variants]))


@dataclass(frozen=True)
class VariantSummary:
    """One variant over a set of cases. ``faithful``: the answer states the keypoint; ``correct``: it states it
    or does not contradict it (lenient). Each has its Δ against v0 (``delta_faithful``/``delta_ci`` and
    ``delta_correct``/``delta_correct_ci``, over the ``delta_n`` cases scored at both); ``grade`` grades
    Δfaithful (v1–v3 only).

    v3 only (None elsewhere): ``exposure``, the cases whose v3 context holds a conflicting chunk (n/N over every case
    evaluated; with ``hard_mode: in_index`` a retrieval fact), ``parts``, Δfaithful split into faithfulness at risk and
    susceptibility (:func:`tuner.metrics.delta_parts`), and ``unexposed_changed``, the unexposed cases whose v3
    context still differs from v0's (the only ones that can put a loss in ``parts.unexposed_loss``: with BM25 the
    conflicting documents change the term statistics of every query, so a context can move without a conflict in it),
    and ``exposure_ties``, the cases whose exposure a tie at the cut decided (``hard_mode: in_index`` only).
    """

    variant: str
    faithful: Estimate
    correct: Estimate
    contradicted: Estimate
    delta_faithful: float | None
    delta_ci: tuple[float, float] | None
    delta_correct: float | None
    delta_correct_ci: tuple[float, float] | None
    delta_n: int
    grade: str | None
    misled_rate: Estimate | None
    rejection_rate: Estimate | None
    context_support: Estimate
    injected: int
    shortfall: int
    exposure: Proportion | None = None
    parts: DeltaParts | None = None
    unexposed_changed: int = 0
    exposure_ties: TiedExposure | None = None

    @property
    def susceptibility(self) -> float | None:
        """Δ among exposed cases, Σ_E(f0 − f3) / Σ_E f0 (None when none is exposed)."""
        return None if self.parts is None else self.parts.susceptibility

    @property
    def at_risk(self) -> float | None:
        """The share of v0-faithful keypoint credit on exposed cases, Σ_E f0 / Σ f0."""
        return None if self.parts is None else self.parts.at_risk

    @property
    def shortfall_warning(self) -> str | None:
        """The warning when more than 10% of this variant's injection slots went unfilled (see :mod:`tuner.variants`)."""
        return shortfall_warning(self.variant, self.injected, self.shortfall)

    def to_dict(self) -> dict[str, Any]:
        return {
            "faithful": self.faithful.value,
            "faithful_ci": _ci(self.faithful.ci),
            "delta_faithful": self.delta_faithful,
            "ci": _ci(self.delta_ci),
            "grade": self.grade,
            "correct": self.correct.value,
            "correct_ci": _ci(self.correct.ci),
            "delta_correct": self.delta_correct,
            "delta_correct_ci": _ci(self.delta_correct_ci),
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
            "shortfall_warning": self.shortfall_warning,
            **self._exposure_dict(),
        }

    def _exposure_dict(self) -> dict[str, Any]:
        """v3's exposure and Δ's parts (nothing for the other variants)."""
        if self.exposure is None:
            return {}
        return {
            "exposure": {**self.exposure.to_dict(),
                         **({} if self.exposure_ties is None else self.exposure_ties.to_dict(self.exposure.successes))},
            "at_risk": self.at_risk,
            "susceptibility": self.susceptibility,
            "unexposed_loss": None if self.parts is None else self.parts.unexposed_loss,
            "exposed_paired": 0 if self.parts is None else self.parts.exposed,
            "unexposed_changed": self.unexposed_changed,
        }


def _ci(ci: tuple[float, float] | None) -> list[float | None] | None:
    if ci is None:
        return None
    return [c if math.isfinite(c) else None for c in ci]


def paired_scores(outcomes: Sequence[CaseOutcome], variant: str, score: str = "faithful") -> tuple[list[float], list[float]]:
    """(S(v0), S(v)) of the cases scored at both v0 and ``variant``, paired by case; S is ``faithful`` or ``correct``."""
    s0, sv = [], []
    for outcome in outcomes:
        a, b = getattr(outcome.variants["v0"], score), getattr(outcome.variants[variant], score)
        if a is not None and b is not None:
            s0.append(a)
            sv.append(b)
    return s0, sv


def exposure_parts(outcomes: Sequence[CaseOutcome], variant: str = "v3") -> tuple[Proportion, DeltaParts | None, int]:
    """(exposure over every outcome, Δfaithful's parts over the cases scored at both v0 and ``variant``, unexposed
    cases whose context differs from v0's) of ``variant``'s contexts; the parts are None when no case is paired."""
    flags = [o.variants[variant].exposed for o in outcomes]
    changed = sum(
        1 for o, flag in zip(outcomes, flags)
        if not flag and [c.chunk_id for c in o.variants[variant].context.chunks] != [c.chunk_id for c in o.variants["v0"].context.chunks]
    )
    f0, fv, shown = [], [], []
    for outcome, flag in zip(outcomes, flags):
        a, b = outcome.variants["v0"].faithful, outcome.variants[variant].faithful
        if a is not None and b is not None:
            f0.append(a)
            fv.append(b)
            shown.append(flag)
    return Proportion.of(flags), delta_parts(f0, fv, shown) if f0 else None, changed


def _relative_drop(
    outcomes: Sequence[CaseOutcome], variant: str, score: str, ci: bool, seed: int
) -> tuple[float | None, tuple[float, float] | None, int]:
    """(Δ, its paired-bootstrap interval, cases paired) of ``score``; Δ is None when mean S(v0) is 0."""
    s0, sv = paired_scores(outcomes, variant, score)
    if not s0 or np.mean(s0) == 0:
        return None, None, len(s0)
    interval = ratio_of_means_ci(s0, sv, seed=seed) if ci and len(s0) > 1 else None
    return delta_faithful(s0, sv), interval, len(s0)


def summarize_variant(
    outcomes: Sequence[CaseOutcome], variant: str, ci: bool = True, seed: int = 0
) -> VariantSummary:
    """Faithfulness, Δ against v0 with its bootstrap interval, misled, rejection and injected counts of ``variant``.

    Δ is graded only for the variants in :data:`~tuner.variants.GRADED_VARIANTS`: v4 has no relevant context,
    so its Δ is ~1 by construction and says nothing; its rejection rate is what it measures.
    """
    # faithful and correct are means of per-case shares in [0, 1]: Wilson stays honest at 0 and 1 (see tuner.stats)
    method: CiMethod | None = "wilson" if ci else None
    rows = [o.variants[variant] for o in outcomes]
    reasons = [r.missing for r in rows]
    faithful_values = [r.faithful if r.missing is None else None for r in rows]
    delta = delta_ci = grade = misled_rate = delta_correct = delta_correct_ci = None
    delta_n = 0
    if variant != "v0":
        delta, delta_ci, delta_n = _relative_drop(outcomes, variant, "faithful", ci, seed)
        delta_correct, delta_correct_ci, _ = _relative_drop(outcomes, variant, "correct", ci, seed)
        if delta is not None and variant in GRADED_VARIANTS:
            grade = grade_delta(delta)
        flags = [misled(o.variants["v0"].verdicts, o.variants[variant].verdicts)
                 if o.variants["v0"].verdicts and o.variants[variant].verdicts else None for o in outcomes]
        misled_rate = mean_estimate([None if f is None else float(f) for f in flags], ci_method=None)
    exposure = parts = ties = None
    changed = 0
    if variant == "v3":
        exposure, parts, changed = exposure_parts(outcomes)
        flips = [o.variants[variant].exposure_tie for o in outcomes]
        ties = None if any(f is None for f in flips) else TiedExposure.of([f for f in flips if f is not None])
    rejection = None
    if variant == "v4":
        rejection = mean_estimate(
            [None if r.answer.missing_reason else float(rejected(r.answer.text)) for r in rows],
            [r.answer.missing_reason for r in rows],
            ci_method="wilson" if ci else None,
        )
    return VariantSummary(
        variant=variant,
        faithful=mean_estimate(faithful_values, reasons, ci_method=method, seed=seed),
        correct=mean_estimate([r.correct if r.missing is None else None for r in rows], reasons, ci_method=method, seed=seed),
        contradicted=mean_estimate([r.contradicted if r.missing is None else None for r in rows], reasons, ci_method=None),
        delta_faithful=delta,
        delta_ci=delta_ci,
        delta_correct=delta_correct,
        delta_correct_ci=delta_correct_ci,
        delta_n=delta_n,
        grade=grade,
        misled_rate=misled_rate,
        rejection_rate=rejection,
        context_support=mean_estimate([r.context_support if r.missing is None else None for r in rows], reasons, ci_method=None),
        injected=sum(r.context.injected for r in rows),
        shortfall=sum(r.context.shortfall for r in rows),
        exposure=exposure,
        parts=parts,
        unexposed_changed=changed,
        exposure_ties=ties,
    )


@dataclass(frozen=True)
class RobustnessReport:
    variants: dict[str, VariantSummary]
    by_category: dict[str, dict[str, VariantSummary]]
    by_difficulty: dict[str, dict[str, VariantSummary]]
    calls: dict[str, int]

    @property
    def warnings(self) -> list[str]:
        """Every variant's shortfall warning (more than 10% of its injection slots unfilled), in variant order."""
        return [w for s in self.variants.values() if (w := s.shortfall_warning) is not None]

    def to_dict(self) -> dict[str, Any]:
        missing = {v: s.faithful.missing for v, s in self.variants.items() if s.faithful.missing}
        return {
            "warnings": self.warnings,
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

