"""Serve (export → **gate** in CI): what the gate measures for one configuration: retrieval on every case, the variant
matrix on a sample, and a second judging of the same answers (the judge self-check)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tuner import __version__
from tuner.dataset import Dataset
from tuner.evaluation import (
    CaseOutcome,
    Responder,
    RetrievalReport,
    RobustnessEvaluator,
    RobustnessReport,
    evaluate_retrieval,
    summarize,
)
from tuner.gate._baseline import Baseline, case_fingerprint, now_iso
from tuner.generation import Generator
from tuner.judging import Judge
from tuner.llm import map_concurrent
from tuner.variants import GRADED_VARIANTS as GRADED_VARIANTS  # the gate's public name for it (tuner.gate)
from tuner.variants import VariantsConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.verdicts import KeypointVerdict

@dataclass(frozen=True)
class JudgeAgreement:
    """Keypoints whose (answer, context) verdicts were identical in two judgings of the same answers."""

    identical: int
    compared: int

    @property
    def rate(self) -> float | None:
        return self.identical / self.compared if self.compared else None


def verdict_agreement(
    first: Sequence[Sequence[KeypointVerdict]], second: Sequence[Sequence[KeypointVerdict]]
) -> JudgeAgreement:
    """agreement = |{keypoints with identical (answer, context) verdicts}| / |keypoints|.

    ``first[i]`` and ``second[i]`` are two judgings of the same answer and contexts; keypoints pair
    by position. A missing verdict (None) agrees only with another missing one.
    """
    identical = compared = 0
    for one, two in zip(first, second, strict=True):
        if len(one) != len(two):
            raise ValueError(f"judgings differ in keypoint count: {len(one)} vs {len(two)}")
        for a, b in zip(one, two):
            compared += 1
            identical += (a.answer, a.context) == (b.answer, b.context)
    return JudgeAgreement(identical, compared)


@dataclass(frozen=True)
class GateMeasurement:
    settings: RetrievalSettings
    variant_config: VariantsConfig | None
    dataset_hash: str
    categories: dict[str, str]
    retrieval: RetrievalReport
    variants: tuple[str, ...]
    outcomes: tuple[CaseOutcome, ...]
    robustness: RobustnessReport | None
    judge_agreement: JudgeAgreement | None
    fingerprints: dict[str, str]
    """:func:`case_fingerprint` of every case, by id."""

    def retrieval_values(self) -> dict[str, dict[str, float]]:
        return {
            name: dict(zip(self.retrieval.case_ids, values)) for name, values in self.retrieval.per_case.items()
        }

    def faithful_values(self) -> dict[str, dict[str, float | None]]:
        return {
            variant: {o.case.id: o.variants[variant].faithful for o in self.outcomes} for variant in self.variants
        }

    def summary(self) -> dict[str, float | None]:
        """Means under the names noise-floor files use: ``recall_at_k``, ``faithful_v0``, ``v3_delta_faithful``, ..."""
        out: dict[str, float | None] = {name: est.value for name, est in self.retrieval.overall.items()}
        if self.robustness is None:
            return out
        for variant, summary in self.robustness.variants.items():
            out[f"faithful_{variant}"] = summary.faithful.value
            if variant in GRADED_VARIANTS:
                out[f"{variant}_delta_faithful"] = summary.delta_faithful
            if summary.rejection_rate is not None:
                out[f"{variant}_rejection_rate"] = summary.rejection_rate.value
        return out

    def to_baseline(self) -> Baseline:
        return Baseline(
            written_at=now_iso(),
            tool_version=__version__,
            dataset_hash=self.dataset_hash,
            settings=self.settings.model_dump(mode="json"),
            variant_config=self.variant_config.model_dump(mode="json") if self.variant_config is not None else {},
            variants=list(self.variants),
            retrieval=self.retrieval_values(),
            faithful=self.faithful_values(),
            summary=self.summary(),
            cases=self.fingerprints,
        )


def recheck_judge(dataset: Dataset, outcomes: Sequence[CaseOutcome], judge: Judge) -> JudgeAgreement:
    """Judge every answered outcome again with ``judge`` and compare with the verdicts it already has."""
    jobs = [
        (outcome.case, variant)
        for outcome in outcomes
        for variant in outcome.variants.values()
        if variant.answer.missing_reason is None and variant.verdicts
    ]
    again = map_concurrent(
        lambda job: judge.judge(
            job[0].question, job[1].answer.text, job[1].context.passages, job[0].keypoints, dataset.wrong_answers(job[0])
        ),
        jobs,
        judge.concurrency,
    )
    return verdict_agreement([variant.verdicts for _, variant in jobs], again)


@dataclass(frozen=True)
class RobustnessSetup:
    """How the variant matrix is run: answers by ``generator``, verdicts by ``judge``; the first
    ``judge_cases`` sampled cases are judged again by ``recheck`` (no self-check when None or 0)."""

    generator: Generator
    judge: Judge
    variant_config: VariantsConfig
    variants: tuple[str, ...] = ("v0", "v3")
    recheck: Judge | None = None
    judge_cases: int = 20


def measure(
    pipeline: RetrievalPipeline,
    settings: RetrievalSettings,
    case_ids: Sequence[str],
    robustness: RobustnessSetup | None,
) -> GateMeasurement:
    """Retrieval metrics on every case (they cost nothing) and, unless ``robustness`` is None or the
    dataset has no keypoints, the variant matrix on ``case_ids`` only."""
    report = evaluate_retrieval(pipeline, settings)
    outcomes: list[CaseOutcome] = []
    summary = agreement = None
    variants: tuple[str, ...] = ()
    if robustness is not None and not pipeline.dataset.retrieval_only:
        variants = tuple(dict.fromkeys(["v0", *robustness.variants]))
        responder = Responder(robustness.generator, robustness.judge)
        outcomes = RobustnessEvaluator(pipeline, responder, robustness.variant_config).evaluate(settings, variants, case_ids)
        summary = summarize(outcomes, variants, responder.calls())
        if robustness.recheck is not None and robustness.judge_cases > 0:
            agreement = recheck_judge(pipeline.dataset, outcomes[: robustness.judge_cases], robustness.recheck)
    return GateMeasurement(
        settings=settings,
        variant_config=robustness.variant_config if robustness is not None else None,
        dataset_hash=pipeline.dataset.content_hash,
        categories={case.id: case.category for case in pipeline.dataset.golden},
        retrieval=report,
        variants=variants,
        outcomes=tuple(outcomes),
        robustness=summary,
        judge_agreement=agreement,
        fingerprints={case.id: case_fingerprint(case) for case in pipeline.dataset.golden},
    )
