"""Metrics (ranking → **metrics**): retrieval evaluation of one configuration: every retrieval metric per case, mean
with n/N, per bucket, and the conflict exposure of its final contexts over the index with conflicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tuner.metrics import RETRIEVAL_METRICS, TiedExposure, exposed, tie_flip
from tuner.retrieval import RetrievalPipeline, RetrievedContext
from tuner.settings import RetrievalSettings
from tuner.stats import CiMethod, Estimate, Proportion, by_group, mean_estimate
from tuner.text import word_count

NOT_MEASURED = "not_measured"
"""The key an exposure that could not be measured is stored and printed under (with why), never a 0."""
EXPOSURE_UNKNOWN = ("tuner cannot tell which of this retrieval's chunks conflict (an attached collection none of whose "
                    "rows conflicts.jsonl names or its metadata shows as an older version, or a retrieval service): "
                    "docs/engine.md")
"""Why a retrieval's conflict exposure is not measured (recorded, shown and exported as such, never 0)."""


@dataclass(frozen=True)
class RetrievalReport:
    """Per-case metric values (dataset order) and their summaries; deterministic for a dataset and settings.
    ``exposed``: per case, whether its final context over the index with conflicts holds a conflicting chunk (None
    when the dataset has no conflicts; :func:`conflict_exposure`); ``exposure_ties``, per case, whether a tie at the cut
    decided that flag (:func:`exposure_ties`, +1/−1/0; None with ``exposed``); ``exposure_not_measured`` why exposure
    is not known (:data:`EXPOSURE_UNKNOWN`: the pipeline does not tell which of its chunks conflict), None where it is
    measured or the dataset has no conflicts to be exposed to."""

    settings: RetrievalSettings
    case_ids: tuple[str, ...]
    per_case: dict[str, tuple[float, ...]]
    context_words: tuple[int, ...]
    overall: dict[str, Estimate]
    by_category: dict[str, dict[str, Estimate]]
    by_difficulty: dict[str, dict[str, Estimate]]
    exposed: tuple[bool, ...] | None = None
    exposure_ties: tuple[int, ...] | None = None
    exposure_not_measured: str | None = None

    @property
    def exposure(self) -> Proportion | None:
        """The share of cases shown a conflicting chunk, n/N with its Wilson interval (None without conflicts)."""
        return None if self.exposed is None else Proportion.of(self.exposed)

    @property
    def tied_exposure(self) -> TiedExposure | None:
        """How many cases' exposure a tie at the cut decided (None without conflicts)."""
        return None if self.exposure_ties is None else TiedExposure.of(self.exposure_ties)

    @property
    def mean_context_words(self) -> float:
        return sum(self.context_words) / len(self.context_words) if self.context_words else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``tuner eval --json``: metric means at top level, intervals and buckets beside; the
        conflict exposure as ``tuner pareto --json`` writes a trial's (``{"not_measured": why}`` where it is not
        measured, null without conflicts)."""
        first = next(iter(self.overall.values()))
        out: dict[str, Any] = {name: est.value for name, est in self.overall.items()}
        out.update(
            n=first.n,
            n_total=first.n_total,
            ci={name: list(est.ci) if est.ci else None for name, est in self.overall.items()},
            mean_context_words=round(self.mean_context_words, 2),
            by_category={b: _bucket(m) for b, m in self.by_category.items()},
            by_difficulty={b: _bucket(m) for b, m in self.by_difficulty.items()},
            settings=self.settings.model_dump(),
        )
        exposure, ties = self.exposure, self.tied_exposure
        if exposure is None:
            out["conflict_exposure"] = None if self.exposure_not_measured is None else {NOT_MEASURED: self.exposure_not_measured}
        else:
            out["conflict_exposure"] = {**exposure.to_dict(), **({} if ties is None else ties.to_dict(exposure.successes))}
        return out


def _bucket(metrics: dict[str, Estimate]) -> dict[str, Any]:
    first = next(iter(metrics.values()))
    return {**{name: est.value for name, est in metrics.items()}, "n": first.n, "n_total": first.n_total}


def score_contexts(
    pipeline: RetrievalPipeline, contexts: list[RetrievedContext]
) -> dict[str, list[float]]:
    """Each retrieval metric for each case, from the labeled relevant documents."""
    cases = pipeline.dataset.golden
    return {
        name: [metric(ctx.doc_ids, case.relevant_doc_ids) for ctx, case in zip(contexts, cases)]
        for name, metric in RETRIEVAL_METRICS.items()
    }


def conflict_exposure(pipeline: RetrievalPipeline, settings: RetrievalSettings) -> tuple[bool, ...] | None:
    """Per golden case (dataset order): does ``settings``' final context over the index with its conflicting documents
    (the ``all`` view, what v3 ``in_index`` hands the reader) hold a conflicting chunk (:func:`tuner.metrics.exposed`)?
    None when the dataset has no conflicts or the pipeline does not search them (a retrieval service). Retrieval only:
    no generator or judge call."""
    if not pipeline.dataset.conflicts or not pipeline.searches_conflicts:
        return None
    return tuple(exposed([c.conflicting for c in ctx.chunks]) for ctx in pipeline.retrieve(settings, "all"))


def exposure_ties(pipeline: RetrievalPipeline, settings: RetrievalSettings, flags: tuple[bool, ...]) -> tuple[int, ...]:
    """Per golden case, whether an exact tie at the cut decided its exposure flag ``flags[i]`` (:func:`conflict_exposure`):
    :func:`tuner.metrics.tie_flip` of the flag and of the flags with conflicting chunks ranked ahead of, then behind,
    the chunks they tie with. Two more rankings of the cached candidates; the figures keep the first-stage order."""
    table = pipeline.table(settings)
    conflicting = table.is_conflict
    ahead = pipeline.retrieve(settings, "all", conflicting)
    behind = pipeline.retrieve(settings, "all", ~conflicting)
    return tuple(
        tie_flip(flag, exposed([c.conflicting for c in a.chunks]), exposed([c.conflicting for c in b.chunks]))
        for flag, a, b in zip(flags, ahead, behind, strict=True)
    )


def evaluate_retrieval(
    pipeline: RetrievalPipeline, settings: RetrievalSettings, view: str = "clean", ci: bool = True
) -> RetrievalReport:
    """Retrieve every golden case with ``settings`` in index ``view`` and score it; with conflicts in the dataset, also
    its conflict exposure (:func:`conflict_exposure`, always over the index with conflicts) and where a tie decided it
    (:func:`exposure_ties`); over a pipeline that does not search conflicts (an attached collection, a service), why
    exposure is not measured.

    >>> report = evaluate_retrieval(RetrievalPipeline(load_dataset("data/demo")), RetrievalSettings())  # doctest: +SKIP
    >>> print(report.overall["recall_at_k"])  # doctest: +SKIP
    0.871 (180/180)
    """
    contexts = pipeline.retrieve(settings, view)
    values = score_contexts(pipeline, contexts)
    cases = pipeline.dataset.golden
    # every retrieval metric is a mean of per-case scores in [0, 1]: Wilson stays honest at 0 and 1 (57/57 is not
    # [1, 1]), where a percentile bootstrap collapses to a point
    method: CiMethod | None = "wilson" if ci else None
    categories = [c.category for c in cases]
    difficulties = [c.difficulty for c in cases]

    flags = conflict_exposure(pipeline, settings)

    def buckets(labels: list[str]) -> dict[str, dict[str, Estimate]]:
        grouped = {name: by_group(v, labels, ci_method=None) for name, v in values.items()}
        return {label: {name: grouped[name][label] for name in values} for label in sorted(set(labels))}

    return RetrievalReport(
        settings=settings,
        case_ids=tuple(c.id for c in cases),
        per_case={name: tuple(v) for name, v in values.items()},
        context_words=tuple(sum(word_count(p) for p in ctx.passages) for ctx in contexts),
        overall={name: mean_estimate(v, ci_method=method) for name, v in values.items()},
        by_category=buckets(categories),
        by_difficulty=buckets(difficulties),
        exposed=flags,
        exposure_ties=None if flags is None else exposure_ties(pipeline, settings, flags),
        exposure_not_measured=None if pipeline.searches_conflicts else EXPOSURE_UNKNOWN,
    )
