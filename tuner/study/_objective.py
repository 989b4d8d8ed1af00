"""Trial record (metrics → **trial record** → front): one trial: recall@k and conflict exposure on every case first
(cheap, deterministic), then v3 Δfaithful in batches with pruning."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from typing import Any

import optuna

from tuner.errors import BackendFailure, BudgetSpent
from tuner.evaluation import (
    CaseOutcome, RetrievalReport, RobustnessEvaluator, VariantSummary, evaluate_retrieval, summarize_variant,
)
from tuner.llm import Usage, UsageCounts
from tuner.objectives import CONTEXT_WORDS, DELTA, DELTA_CORRECT, EXPOSURE, RECALL, ROBUSTNESS_OBJECTIVES
from tuner.retrieval import RetrievalPipeline, SearchLatency
from tuner.settings import RetrievalSettings, settings_from_mapping
from tuner.study._config import PruningConfig
from tuner.study._pruning import Look, TrialProfile, batches, exact_rival, should_prune
from tuner.front import PruneEvidence, TrialCalls, TrialRecord, front_trials
from tuner.stats import Proportion, finite_or_none
from tuner.study._space import SearchSpace


UNSCORABLE_DELTA = 1.0
"""The Δ an unscorable trial completes with: the worst a faithfulness share can lose. It only gives
Optuna a value to store; the trial's ``scorable`` constraint is violated, so constraint-aware samplers
learn to avoid its region and every front, pick, report and pruning rival leaves it out (feasible
trials only, as ``study.best_trials``). Its recall@k is exact and kept."""


def evaluated_twin(study: optuna.Study, settings: dict[str, Any], number: int) -> int | None:
    """The number of another trial that evaluated exactly ``settings``, or is evaluating them now on any worker:
    complete, pruned or running (duplicates themselves are never twins: they point at the trial they repeat).

    A running twin counts too: two workers must not spend the budget on one configuration at once. The repeat
    is recorded as a duplicate of it and not evaluated; should the running trial fail (its worker killed or
    interrupted), its configuration is queued again, so it is still evaluated once."""
    states = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.RUNNING)
    for other in study.get_trials(deepcopy=False, states=states):
        record = TrialRecord.from_trial(other)
        if other.number != number and record.duplicate_of is None and record.settings == settings:
            return other.number
    return None


def robustness_scores(
    outcomes: Sequence[CaseOutcome], robustness: str
) -> tuple[tuple[float | None, ...], tuple[float | None, ...]]:
    """Per-case scores at v0 and v3, in the order of ``outcomes``, of the measure the robustness objective is the
    relative drop of (faithful, or correct for ``v3_delta_correct``; None = missing)."""
    measure = "correct" if robustness == DELTA_CORRECT else "faithful"
    return (
        tuple(getattr(o.variants["v0"], measure) for o in outcomes),
        tuple(getattr(o.variants["v3"], measure) for o in outcomes),
    )


def trial_profile(trial: optuna.trial.FrozenTrial) -> TrialProfile | None:
    """A completed trial as pruning compares it (recall@k is always the first objective)."""
    record = TrialRecord.from_trial(trial)
    if record.f0 is None or record.f3 is None or record.context_words is None or trial.values is None:
        return None
    return TrialProfile(trial.number, trial.values[0], record.context_words, record.f0, record.f3)


class TrialObjective:
    """The callable given to ``study.optimize``; its user attributes carry intervals, buckets and evidence."""

    def __init__(
        self,
        pipeline: RetrievalPipeline,
        evaluator: RobustnessEvaluator,
        space: SearchSpace,
        base_settings: RetrievalSettings,
        objectives: Sequence[str],
        case_order: Sequence[str],
        margin: dict[str, float],
        pruning: PruningConfig,
        usage: Usage,
        min_recall: float | None = None,
        answer_infeasible: bool = False,
        max_exposure: float | None = None,
        max_latency_ms: float | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.evaluator = evaluator
        self.space = space
        self.base = base_settings
        self.objectives = list(objectives)
        self.case_order = list(case_order)
        self.margin = margin
        self.pruning = pruning
        self.usage = usage
        self.min_recall = min_recall
        self.answer_infeasible = answer_infeasible
        self.max_exposure = max_exposure
        self.max_latency_ms = max_latency_ms
        self.robustness = self.objectives[1] if self.objectives[1] in ROBUSTNESS_OBJECTIVES else DELTA
        """The Δ measured (and shown beside exposure when the study optimizes ``conflict_exposure``)."""

    def settings_for(self, params: dict[str, Any]) -> RetrievalSettings:
        return settings_from_mapping({**self.base.model_dump(), **params}, "search space")

    def claim(self, trial: optuna.Trial) -> None:
        """Sample ``trial``'s configuration and record it, with the trial that already has it, if any
        (:func:`evaluated_twin`). ``tuner run`` calls this under the study's lock, so of two workers that sample one
        configuration at the same time, the second sees the first's claim."""
        settings = self.settings_for(self.space.suggest(trial, self.base.model_dump())).model_dump()
        TrialRecord(settings=settings, duplicate_of=evaluated_twin(trial.study, settings, trial.number)).write(trial)

    def __call__(self, trial: optuna.Trial) -> tuple[float, ...]:
        TrialRecord(worker=f"{socket.gethostname()}:{os.getpid()}").write(trial)
        if "settings" not in trial.user_attrs:
            self.claim(trial)
        settings = self.settings_for(self.space.suggest(trial, self.base.model_dump()))  # claim()'s values: Optuna repeats them
        twin = TrialRecord.from_attrs(trial.user_attrs).duplicate_of
        if twin is not None:
            raise optuna.TrialPruned(f"same configuration as trial {twin}: not evaluated again")
        try:
            return self._evaluate(trial, settings)
        except BackendFailure as exc:
            TrialRecord(failure=str(exc)).write(trial)
            raise

    def _evaluate(self, trial: optuna.Trial, settings: RetrievalSettings) -> tuple[float, ...]:
        calls_before, usage_before = self.evaluator.responder.calls(), self.usage.snapshot()
        retrieval = evaluate_retrieval(self.pipeline, settings, "clean")
        recall = retrieval.overall[RECALL]
        recall_value = float(recall.value or 0.0)
        per_case = dict(zip(retrieval.case_ids, retrieval.per_case[RECALL], strict=True))
        # no conflicts in an index tuner searches: exposure is 0, measured; a retrieval whose conflicting chunks tuner
        # cannot tell: not measured, never 0
        unmeasured = retrieval.exposure_not_measured
        shown = dict(zip(retrieval.case_ids, retrieval.exposed or (False,) * len(retrieval.case_ids), strict=True))
        exposure = Proportion.of([shown[case_id] for case_id in self.case_order])
        ties = None if retrieval.exposure_ties is None else dict(zip(retrieval.case_ids, retrieval.exposure_ties, strict=True))
        TrialRecord(settings=settings.model_dump(), context_words=retrieval.mean_context_words,
                    recall_cases=tuple(per_case[case_id] for case_id in self.case_order),
                    exposed_cases=None if unmeasured else tuple(int(shown[case_id]) for case_id in self.case_order),
                    exposure_not_measured=unmeasured,
                    exposure_ties=None if ties is None else tuple(ties[case_id] for case_id in self.case_order),
                    embedding_backend=self.pipeline.embeddings.backend_in_use(settings.embedding_model, self.pipeline.cache.root),
                    collection=self.pipeline.engine_collection(settings)).write(trial)
        exposure_value = float(exposure.value or 0.0)
        latency = self.pipeline.search_latency(settings)
        if latency is not None:
            TrialRecord(search_latency=latency).write(trial)
        # Optuna's constraint support: feasible when ≤ 0; constraint-aware samplers read it
        if self.min_recall is not None:
            trial.set_constraint("min_recall", self.min_recall - recall_value)
        if self.max_exposure is not None:
            trial.set_constraint("max_exposure", exposure_value - self.max_exposure)
        if self.max_latency_ms is not None and latency is not None:
            trial.set_constraint("max_latency_ms", latency.p95_ms - self.max_latency_ms)
        exact = {RECALL: recall_value, EXPOSURE: exposure_value, CONTEXT_WORDS: retrieval.mean_context_words}
        skip = self._unanswerable(recall_value, exposure_value, retrieval.mean_context_words, latency)
        if skip is not None:
            return self._skipped(trial, exact, skip)
        if self.objectives[1] == EXPOSURE:
            self._prune_exactly(trial, {name: exact[name] for name in self.objectives})
        outcomes: list[CaseOutcome] = []
        for batch, look in batches(self.case_order, self.pruning):
            try:
                outcomes += self.evaluator.evaluate(settings, ("v0", "v3"), batch)
            except BudgetSpent:
                self._spent(outcomes, calls_before, usage_before).write(trial)  # paid for: the study's total counts it
                raise
            if look is None:
                continue
            evidence = None if self.objectives[1] == EXPOSURE else self._check(
                trial, outcomes, recall_value, retrieval.mean_context_words, look
            )
            if evidence is not None:
                partial, _ = self._robustness(summarize_variant(outcomes, "v3", ci=False))
                self._spent(outcomes, calls_before, usage_before).write(trial)
                TrialRecord(
                    partial_values={RECALL: recall_value, self.robustness: finite_or_none(partial)}, pruning=evidence
                ).write(trial)
                raise optuna.TrialPruned(f"dominated by trial {evidence.dominated_by} beyond the noise margin")
        summary = summarize_variant(outcomes, "v3", seed=trial.number)
        self._spent(outcomes, calls_before, usage_before).write(trial)
        delta, delta_ci = self._robustness(summary)
        if delta is None and self.objectives[1] != EXPOSURE:
            return self._unscorable(trial, exact, summary.delta_n, summary.faithful.missing)
        TrialRecord(
            ci={
                RECALL: list(recall.ci) if recall.ci else None,
                self.robustness: [finite_or_none(c) for c in delta_ci] if delta_ci else None,
                EXPOSURE: None if exposure.ci is None else list(exposure.ci),
            },
            n=summary.delta_n,
            n_total=len(self.case_order),
            grade=summary.grade,
            by_category=self._by_category(retrieval, outcomes),
            warnings=tuple(
                w for w in (summary.shortfall_warning, self._undefined(delta, summary.delta_n, summary.faithful.missing), self.pipeline.retrieval_warning()) if w is not None
            ) or None,
        ).write(trial)
        # delta is None only in a study that optimizes exposure, and then it is not among the values returned
        values = {**exact, self.robustness: UNSCORABLE_DELTA if delta is None else delta}
        return tuple(values[name] for name in self.objectives)

    def _undefined(self, delta: float | None, paired: int, missing: Mapping[str, int]) -> str | None:
        """Why Δ is undefined in a study that optimizes conflict exposure (the trial stays feasible: its objectives
        are exact), else None."""
        return None if delta is not None else f"{self.robustness} is undefined: {self._why_undefined(paired, missing)}"

    def _why_undefined(self, paired: int, missing: Mapping[str, int]) -> str:
        """Why Δ is undefined on the cases answered; ``missing``, v3's missing scores by reason, says why a backend gave
        none (``v3 malformed_reply 6``)."""
        if paired == 0:
            counts = ", ".join(f"{reason} {count}" for reason, count in missing.items())
            return f"no case has scores at both v0 and v3 (every answer or verdict is missing{': v3 ' + counts if counts else ''})"
        return f"no case scores above 0 at v0, so {self.robustness} = (S(v0) − S(v3)) / S(v0) is undefined"

    def _unanswerable(self, recall: float, exposure: float, words: float, latency: SearchLatency | None) -> str | None:
        """Why this trial needs no answer at all, from what retrieval alone tells (None: answer it). Such a trial is
        infeasible whatever its answers would be, so every generator and judge request on it would be wasted."""
        if self.min_recall is not None and recall < self.min_recall and not self.answer_infeasible:
            return f"recall@k {recall:.4g} is below constraints.min_recall {self.min_recall:g}"
        if self.max_exposure is not None and exposure > self.max_exposure and not self.answer_infeasible:
            return f"conflict exposure {exposure:.4g} is above constraints.max_exposure {self.max_exposure:g}"
        if (self.max_latency_ms is not None and latency is not None and latency.p95_ms > self.max_latency_ms
                and not self.answer_infeasible):
            return (f"first-stage search p95 {latency.p95_ms:.4g} ms is above constraints.max_latency_ms "
                    f"{self.max_latency_ms:g}")
        if words == 0:
            return "retrieval returned nothing for every case"
        return None

    def _prune_exactly(self, trial: optuna.Trial, current: dict[str, float]) -> None:
        """Prune, before any answer, a trial that a front trial beats on every objective by more than its margin when
        every objective is exact (recall@k, conflict exposure, context words: known from retrieval alone)."""
        front = [(t.number, dict(zip(self.objectives, t.values))) for t in front_trials(trial.study) if t.values is not None]
        evidence = exact_rival(current, front, self.margin, len(self.case_order))
        if evidence is not None:
            TrialRecord(partial_values=dict(current), pruning=evidence, calls=TrialCalls(), cases_evaluated=0).write(trial)
            raise optuna.TrialPruned(f"dominated by trial {evidence.dominated_by} on every exact objective")

    def _skipped(self, trial: optuna.Trial, exact: dict[str, float], reason: str) -> tuple[float, ...]:
        """Complete a trial :meth:`_unanswerable` rules out, with its exact recall@k and exposure and no request:
        infeasible through the ``min_recall``, ``max_exposure`` or ``max_latency_ms`` constraint already set, or through ``scorable`` when
        nothing was retrieved (Δ is undefined). Optuna's constraint-aware samplers learn from it as from any infeasible
        trial."""
        TrialRecord(skipped=reason, calls=TrialCalls(), cases_evaluated=0, n=0, n_total=len(self.case_order)).write(trial)
        if exact[CONTEXT_WORDS] == 0:
            TrialRecord(unscorable=reason).write(trial)
            trial.set_constraint("scorable", 1.0)
        values = {**exact, self.robustness: UNSCORABLE_DELTA}
        return tuple(values[name] for name in self.objectives)

    def _unscorable(self, trial: optuna.Trial, exact: dict[str, float], paired: int, missing: Mapping[str, int]) -> tuple[float, ...]:
        """Record why Δ is undefined on the cases answered and complete the trial as infeasible (see ``UNSCORABLE_DELTA``)."""
        TrialRecord(unscorable=self._why_undefined(paired, missing), n=paired, n_total=len(self.case_order)).write(trial)
        trial.set_constraint("scorable", 1.0)
        values = {**exact, self.robustness: UNSCORABLE_DELTA}
        return tuple(values[name] for name in self.objectives)

    def _check(
        self, trial: optuna.Trial, outcomes: list[CaseOutcome], recall: float, words: float, look: Look
    ) -> PruneEvidence | None:
        f0, f3 = self._scores(outcomes)
        current = TrialProfile(trial.number, recall, words, f0, f3)
        front = [p for t in front_trials(trial.study) if (p := trial_profile(t)) is not None]
        return should_prune(
            current, front, self.margin, look, CONTEXT_WORDS in self.objectives, self.robustness,
        )

    def _robustness(self, summary: VariantSummary) -> tuple[float | None, tuple[float, float] | None]:
        """The study's robustness objective and its interval: Δfaithful, or Δcorrect for ``v3_delta_correct``."""
        if self.robustness == DELTA_CORRECT:
            return summary.delta_correct, summary.delta_correct_ci
        return summary.delta_faithful, summary.delta_ci

    def _scores(self, outcomes: list[CaseOutcome]) -> tuple[tuple[float | None, ...], tuple[float | None, ...]]:
        return robustness_scores(outcomes, self.robustness)

    def _spent(self, outcomes: list[CaseOutcome], calls_before: dict[str, int], usage_before: UsageCounts) -> TrialRecord:
        """What the trial cost and the per-case scores pruning compares."""
        calls_after = self.evaluator.responder.calls()
        tokens = self.usage.snapshot() - usage_before
        scores = self._scores(outcomes)
        return TrialRecord(
            calls=TrialCalls(
                generator=calls_after["generator"] - calls_before["generator"],
                judge=calls_after["judge"] - calls_before["judge"],
                tokens=tokens.prompt_tokens + tokens.completion_tokens,
                remote_calls=tokens.calls,
                prompt_tokens=tokens.prompt_tokens,
                completion_tokens=tokens.completion_tokens,
                cached_tokens=tokens.cached_tokens,
                cost=tokens.cost,
            ),
            cases_evaluated=len(outcomes),
            f0=scores[0],
            f3=scores[1],
        )

    def _by_category(self, retrieval: RetrievalReport, outcomes: list[CaseOutcome]) -> dict[str, Any]:
        """Per case category: recall@k, the Δ measured (None where no case of it was scored), conflict exposure (the
        share of its cases exposed; absent without conflicts) and its case count."""
        groups: dict[str, list[CaseOutcome]] = {}
        for outcome in outcomes:
            groups.setdefault(outcome.case.category, []).append(outcome)
        shown: dict[str, list[bool]] = {}
        if retrieval.exposed is not None:
            for case, flag in zip(self.pipeline.dataset.golden, retrieval.exposed, strict=True):
                shown.setdefault(case.category, []).append(flag)
        table: dict[str, Any] = {}
        for category, metrics in retrieval.by_category.items():
            summary = summarize_variant(groups[category], "v3", ci=False) if category in groups else None
            table[category] = {
                RECALL: metrics[RECALL].value,
                self.robustness: None if summary is None else finite_or_none(self._robustness(summary)[0]),
                **({EXPOSURE: sum(shown[category]) / len(shown[category])} if category in shown else {}),
                "n": metrics[RECALL].n,
            }
        return table
