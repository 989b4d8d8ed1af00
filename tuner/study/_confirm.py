"""Study (**confirmation**): the confirmation split (``confirm:`` in a study file): golden cases the search never sees,
on which each front member is evaluated when the study ends, so the winner's curse is measured (the figures are read
by ``tuner.front``: optimism, held-out picks)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import optuna

from tuner.dataset import Dataset
from tuner.errors import UserError
from tuner.golden import question_groups
from tuner.evaluation import RobustnessEvaluator, evaluate_retrieval, summarize_variant
from tuner.objectives import DELTA, DELTA_CORRECT, EXPOSURE, RECALL, ROBUSTNESS_OBJECTIVES, robustness_objective
from tuner.pareto import FrontEntry
from tuner.progress import Reporter
from tuner.settings import RetrievalSettings, settings_from_mapping
from tuner.study._config import ConfirmConfig
from tuner.study._interrupt import InterruptGuard
from tuner.study._objective import robustness_scores
from tuner.front import Confirmation, StudyRecord, TrialRecord
from tuner.stats import Proportion, finite_or_none

MIN_CONFIRM_CASES = 30
"""Fewer confirmation cases than this cannot tell a pick's optimism from case-sampling noise; fewer tuning cases than
this leave the search nothing but noise to pick on."""


def split_cases(cases: Sequence[Any], share: float, seed: int) -> tuple[list[str], list[str]]:
    """(tuning ids, confirmation ids): within each stratum of the split (a case's category, and its drafted stratum
    where it has one: ``head``, ``tail``, ``known_bad``, ...), round(share · n_stratum) cases are held out, the counts
    rounded by largest remainder so that the total is round(share · N).

    Questions that are one question (exact duplicates once normalized, or near duplicates:
    :func:`tuner.golden.question_groups`) are one unit, counted in the stratum of their first case by id, and fall on
    one side together: a copy of a held-out question in the tuning share would let the search see it. Within a
    stratum the units, sorted by their first id and shuffled with ``seed``, are held out in that order while they fit
    the stratum's count. It depends only on the case ids, questions, categories, strata, share and seed: every worker
    and every resume draws the same split, and a set without duplicates splits exactly as before they were grouped."""
    ordered = sorted(cases, key=lambda c: c.id)
    roots = question_groups([c.question for c in ordered])
    units: dict[str, list[str]] = {}
    for case, root in zip(ordered, roots):
        units.setdefault(ordered[root].id, []).append(case.id)
    by_stratum: dict[tuple[str, ...], list[str]] = {}
    sizes: dict[tuple[str, ...], int] = {}
    for case in ordered:
        if case.id not in units:
            continue
        key: tuple[str, ...] = (case.category,) if case.stratum is None else (case.category, case.stratum)
        by_stratum.setdefault(key, []).append(case.id)
        sizes[key] = sizes.get(key, 0) + len(units[case.id])
    wanted = {key: share * size for key, size in sizes.items()}
    counts = {key: int(value) for key, value in wanted.items()}
    left = round(share * len(cases)) - sum(counts.values())
    for key in sorted(wanted, key=lambda k: (-(wanted[k] - counts[k]), k))[:max(left, 0)]:
        counts[key] += 1
    rng = random.Random(seed)
    held: set[str] = set()
    for key in sorted(by_stratum):
        firsts = list(by_stratum[key])
        rng.shuffle(firsts)
        taken = 0
        for first in firsts:
            if taken + len(units[first]) <= counts[key]:
                held.update(units[first])
                taken += len(units[first])
    return [c.id for c in cases if c.id not in held], [c.id for c in cases if c.id in held]


def _subset(dataset: Dataset, ids: Sequence[str], part: str) -> Dataset:
    """The dataset with only the golden cases ``ids``; its content hash names the part, so its retrieval caches (one row
    per golden question) are its own."""
    keep = set(ids)
    digest = hashlib.sha256(f"{dataset.content_hash}:{part}:{','.join(sorted(keep))}".encode()).hexdigest()
    return replace(dataset, golden=tuple(c for c in dataset.golden if c.id in keep), content_hash=digest)


def confirmation_split(dataset: Dataset, config: ConfirmConfig | None) -> tuple[Dataset, Dataset | None]:
    """(the tuning share, the confirmation share) of ``dataset``; without ``confirm:`` the whole dataset and None.
    Fewer than ``MIN_CONFIRM_CASES`` confirmation cases, or fewer than that many tuning cases (a search on a handful of
    cases picks noise), is a :class:`UserError` naming ``confirm.share``."""
    if config is None:
        return dataset, None
    tuning, held = split_cases(dataset.golden, config.share, config.seed)
    total = len(dataset.golden)
    if len(held) < MIN_CONFIRM_CASES:
        raise UserError(f"confirm.share {config.share:g}: {len(held)} confirmation case(s) of {total}, "
                        f"fewer than {MIN_CONFIRM_CASES}; raise confirm.share, add cases or remove confirm:")
    if len(tuning) < MIN_CONFIRM_CASES:
        raise UserError(f"confirm.share {config.share:g}: {len(tuning)} tuning case(s) of {total}, fewer than "
                        f"{MIN_CONFIRM_CASES}; lower confirm.share, add cases or remove confirm:")
    return _subset(dataset, tuning, "tuning"), _subset(dataset, held, "confirm")


def _confirm_one(evaluator: RobustnessEvaluator, settings: RetrievalSettings, robustness: str, seed: int) -> Confirmation:
    """One configuration on the held-out cases: recall@k, the robustness Δ and the conflict exposure with their
    intervals and n/N, and the per-case scores they come from (``recall_cases`` over the held-out cases, ``f0``/``f3``
    and ``exposed_cases`` over those with keypoints, all in the golden set's order), which the pick notes compare
    paired. In a study that optimizes exposure the Δ is Δfaithful."""
    retrieval = evaluate_retrieval(evaluator.pipeline, settings, "clean")
    recall = retrieval.overall[RECALL]
    values: dict[str, float | None] = {RECALL: recall.value}
    ci: dict[str, list[float | None] | None] = {RECALL: list(recall.ci) if recall.ci else None}
    scores: tuple[tuple[float | None, ...], tuple[float | None, ...]] | tuple[None, None] = (None, None)
    shown: tuple[int, ...] | None = None
    if retrieval.exposed is not None:
        shown = tuple(int(flag) for flag, case in zip(retrieval.exposed, evaluator.pipeline.dataset.golden, strict=True)
                      if case.keypoints)
        exposure = Proportion.of([bool(flag) for flag in shown])
        values[EXPOSURE] = exposure.value
        ci[EXPOSURE] = None if exposure.ci is None else list(exposure.ci)
    robustness = robustness if robustness in ROBUSTNESS_OBJECTIVES else DELTA
    if not evaluator.pipeline.dataset.retrieval_only:
        outcomes = evaluator.evaluate(settings, ("v0", "v3"))
        summary = summarize_variant(outcomes, "v3", seed=seed)
        delta, delta_ci = ((summary.delta_correct, summary.delta_correct_ci) if robustness == DELTA_CORRECT
                           else (summary.delta_faithful, summary.delta_ci))
        values[robustness] = finite_or_none(delta)
        ci[robustness] = None if delta_ci is None else [finite_or_none(c) for c in delta_ci]
        scores = robustness_scores(outcomes, robustness)
    return Confirmation(values, ci, recall.n, recall.n_total, tuple(retrieval.per_case[RECALL]), f0=scores[0], f3=scores[1],
                        exposed_cases=shown)


def confirm_front(
    study: optuna.Study, entries: Sequence[FrontEntry], evaluator: RobustnessEvaluator, reporter: Reporter,
    guard: InterruptGuard,
) -> dict[int, Confirmation]:
    """Evaluate each front member not yet confirmed on the confirmation share (``evaluator``'s dataset): recall@k and
    the robustness objective at v0 and v3 with the study's backends. Each result goes to the study's ``confirm`` user
    attribute as soon as it is measured, keyed by trial number (a finished trial's attributes cannot change), so an
    interrupt keeps those done and the next run confirms the rest; returns them all."""
    record = StudyRecord.from_study(study)
    robustness = robustness_objective(record.objectives)
    results = dict(record.confirm)
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}
    pending = [e for e in entries if e.number not in results]
    cases = len(evaluator.pipeline.dataset.golden)
    for done, entry in enumerate(pending, 1):
        reporter.stage(f"confirming front trial {entry.number} on the {cases} held-out cases ({done}/{len(pending)})")
        settings = settings_from_mapping(TrialRecord.from_trial(trials[entry.number]).settings or {}, "trial settings")
        try:
            with guard.interruptible():
                results[entry.number] = guard.call(_confirm_one, evaluator, settings, robustness, entry.number)
        except KeyboardInterrupt:
            reporter.stage(f"interrupted while confirming: {done - 1} of {len(pending)} front trials confirmed and kept; "
                           "run the same command to confirm the rest")
            raise
        study.set_user_attr("confirm", {str(number): c.to_dict() for number, c in results.items()})
    return results


def check_split(study: optuna.Study, golden_hash: str, held_out: Dataset | None) -> None:
    """A :class:`UserError` when this run splits the golden set the study recorded (``golden_hash``, the whole set's
    content hash) into other confirmation cases than it did (another ``confirm.share`` or ``confirm.seed``, or
    ``confirm:`` added or removed): trials must all see one tuning share. Checked before the tuning share's own hash,
    which a new split changes too and which would otherwise call the same data "another dataset"."""
    if "confirm_cases" not in study.user_attrs:
        return
    record = StudyRecord.from_study(study)
    ids = [] if held_out is None else [c.id for c in held_out.golden]
    if record.golden_hash in (None, golden_hash) and record.confirm_cases != ids:
        before = f"{len(record.confirm_cases)} held-out cases" if record.confirm_cases else "no confirm:"
        now = f"{len(ids)}" if ids else "none (no confirm:)"
        raise UserError(f"study '{study.study_name}' was run with another confirmation split ({before}, now {now}): keep "
                        "its confirm: (share and seed) as it was, or use a new name or storage")


def record_split(study: optuna.Study, golden_hash: str, held_out: Dataset | None) -> None:
    """Record the confirmation cases in the study (``confirm_cases``) the first time, and the whole golden set's hash
    (``golden_hash``: what an export names, so that the gate knows the set it measures as the one the configuration
    was chosen on); a later run or worker whose split differs is a :class:`UserError` (:func:`check_split`)."""
    check_split(study, golden_hash, held_out)
    if "confirm_cases" not in study.user_attrs:
        study.set_user_attr("confirm_cases", [] if held_out is None else [c.id for c in held_out.golden])
    if "golden_hash" not in study.user_attrs:
        study.set_user_attr("golden_hash", golden_hash)
