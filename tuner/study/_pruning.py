"""Trial record (metrics → **pruning** → trial record): noise-aware pruning for multi-objective studies (Optuna has none
for several objectives).

Pruning stops a trial early, so the question it answers is: will this trial, once evaluated on every
case, be beaten by a trial of the current front on every objective by more than the noise margin?
A running trial T is pruned after a batch only when some front trial F, already evaluated on every
case, is better on every objective by more than that objective's margin:

- recall@k is deterministic and known on every case before the first batch, so its comparison is
  exact: ``recall(F) − recall(T) > ε_recall``;
- context words (when it is an objective) likewise: ``words(T) − words(F) > ε_words``;
- v3 Δfaithful of T is known only on the cases evaluated so far, the first m of the study's one
  shuffled case order. Among the front trials that beat T on the exact objectives, the one with the
  lowest Δ is the rival (chosen from completed trials only, before T's Δ data are looked at, so there
  is one test per look, not one per front trial). ``tuner.stats.ratio_excess_test`` estimates T's Δ
  on all N cases from the m cases, with the rival's per-case values on the same cases as a control
  variate (the paired comparison) and a finite-population correction, and tests H0: Δ(T) − Δ(F) ≤ ε_Δ
  one-sided. It is repeated at a few planned looks, at fixed fractions of the case list (``plan_looks``),
  so it rejects at the per-look alpha of an α-spending function over those information fractions (the
  per-look alphas sum to alpha; ``tuner.stats.alpha_spending``). Looks at fixed fractions keep the number
  of looks, and so the alpha of each, the same whatever the size of the golden set.

The margins ε are the run-to-run part of the calibrated noise floor (``NoiseFloor.run_margins``):
regenerating and re-judging would move a trial's values by that much, so a smaller advantage is not
one another run would reproduce. The case-sampling part of the floor is not a margin here: trials
are compared on one frozen case list, recall exactly and Δ by the test above, whose only sampling
uncertainty is the cases not yet evaluated. With deterministic backends the margins are 0.

What this guarantees: with probability ≥ 1 − alpha, a pruned trial would have been dominated on the
complete evaluation by a trial that stays in the study, so it would not have been on the front.

A study whose second objective is ``conflict_exposure`` has only exact objectives (recall@k, exposure and context
words all come from retrieval): a trial is pruned before any answer when a front trial beats it on every one of
them by more than its margin (``exact_rival``; no test, no run-to-run term: exposure has none, and its margin is 0),
and with certainty it would not have been on the front.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tuner.metrics import delta_faithful
from tuner.objectives import CONTEXT_WORDS, DELTA, EXPOSURE, OBJECTIVES, RECALL
from tuner.front import PruneEvidence
from tuner.stats import alpha_spending, ratio_excess_test
from tuner.study._config import PruningConfig


@dataclass(frozen=True)
class Look:
    """A planned look: after the first ``cases`` of the case list (``fraction`` of it), look ``number`` of
    ``of`` tests at ``alpha`` with ``spent`` spent so far by the ``spending`` function."""

    number: int
    of: int
    cases: int
    fraction: float
    alpha: float
    spent: float
    spending: str


def plan_looks(config: PruningConfig, n_cases: int) -> list[Look]:
    """The looks of a study on ``n_cases`` cases: after the first ⌈t·N⌉ cases for each fraction t of
    ``config.looks`` (or after every ``batch_size`` cases for ``every_batch``), keeping those with at least two
    cases and short of N (the complete evaluation is exact and needs no test), α spent over their actual
    fractions m/N.

    >>> [(look.cases, round(look.alpha, 4)) for look in plan_looks(PruningConfig(looks=(0.25, 0.5), spending="bonferroni"), 100)]
    [(25, 0.025), (50, 0.025)]
    """
    if config.looks == "every_batch":
        planned = list(range(config.batch_size, n_cases, config.batch_size))
    else:
        planned = [math.ceil(t * n_cases - 1e-9) for t in config.looks]
    cases = sorted({m for m in planned if 2 <= m < n_cases})
    if not cases:
        return []
    levels = alpha_spending(config.alpha, [m / n_cases for m in cases], config.spending)
    return [
        Look(j, len(cases), m, level.fraction, level.alpha, level.spent, config.spending)
        for j, (m, level) in enumerate(zip(cases, levels), start=1)
    ]


def batches(case_order: Sequence[str], config: PruningConfig) -> list[tuple[list[str], Look | None]]:
    """The case list in batches of ``batch_size`` (the unit of concurrency; all at once without pruning), each
    with the look taken after it, if any: a look's case count also ends a batch.

    >>> [(len(cases), look and look.number) for cases, look in batches("abcdefghij", PruningConfig(batch_size=4, looks=(0.5,)))]
    [(4, None), (1, 1), (3, None), (2, None)]
    """
    n = len(case_order)
    looks = {look.cases: look for look in plan_looks(config, n)} if config.enabled else {}
    size = config.batch_size if config.enabled else n
    ends = sorted({*range(size, n, size), *looks, n})
    return [(list(case_order[start:end]), looks.get(end)) for start, end in zip([0, *ends], ends)]


@dataclass(frozen=True)
class TrialProfile:
    """What pruning compares: recall@k and context words (exact), and per-case scores at v0 and v3 of the
    study's robustness measure (faithful, or correct for ``v3_delta_correct``) in the study's shared case
    order (None = missing; a front trial has every case)."""

    number: int
    recall: float
    context_words: float
    f0: Sequence[float | None]
    f3: Sequence[float | None]

    def scores(self) -> tuple[np.ndarray, np.ndarray]:
        """(f0, f3) per case as arrays, NaN where missing."""
        f0 = np.array([np.nan if v is None else v for v in self.f0], dtype=float)
        f3 = np.array([np.nan if v is None else v for v in self.f3], dtype=float)
        return f0, f3

    def drops(self) -> tuple[np.ndarray, np.ndarray]:
        """(f0 − f3, f0) per case, NaN where missing: Δfaithful = Σ(f0 − f3) / Σ f0 is their ratio."""
        f0, f3 = self.scores()
        return f0 - f3, f0


def _delta(profile: TrialProfile) -> float:
    """Δfaithful over the cases scored at both v0 and v3 (NaN when there are none or mean F0 = 0)."""
    f0, f3 = profile.scores()
    scored = np.isfinite(f0) & np.isfinite(f3)
    return delta_faithful(f0[scored], f3[scored]) if scored.any() else math.nan


def should_prune(
    current: TrialProfile,
    front: Sequence[TrialProfile],
    margin: dict[str, float],
    look: Look,
    use_context_words: bool,
    objective: str = DELTA,
) -> PruneEvidence | None:
    """The evidence for pruning ``current`` (evaluated on its first ``len(current.f0)`` cases) at ``look``, or None."""
    recall_margin, words_margin = margin.get(RECALL, 0.0), margin.get(CONTEXT_WORDS, 0.0)
    rivals = [
        (delta, rival)
        for rival in front
        if rival.recall - current.recall > recall_margin
        and (not use_context_words or current.context_words - rival.context_words > words_margin)
        and np.isfinite(delta := _delta(rival))
    ]
    if not rivals:
        return None
    _, rival = min(rivals, key=lambda pair: pair[0])
    test = ratio_excess_test(*current.drops(), *rival.drops(), margin=margin.get(objective, 0.0))
    if test is None or test.p_value >= look.alpha:
        return None
    return PruneEvidence(
        look=look.number,
        max_looks=look.of,
        cases_used=test.n,
        n_total=test.n_total,
        dominated_by=rival.number,
        differences={
            RECALL: round(rival.recall - current.recall, 6),
            objective: round(test.estimate - test.rival, 6),
            **({CONTEXT_WORDS: round(current.context_words - rival.context_words, 3)} if use_context_words else {}),
        },
        estimate=round(test.estimate, 6),
        se=round(test.se, 6),
        rival_delta=round(test.rival, 6),
        margin=dict(margin),
        p_value=test.p_value,
        alpha=look.alpha,
        objective=objective,
        fraction=look.fraction,
        alpha_spent=look.spent,
        spending=look.spending,
    )


def exact_rival(
    current: Mapping[str, float], front: Sequence[tuple[int, Mapping[str, float]]], margin: Mapping[str, float],
    n_total: int,
) -> PruneEvidence | None:
    """The evidence for pruning a trial whose objectives ``current`` are all exact (recall@k, conflict exposure,
    context words), or None. A front trial (number, its values) is a rival when, for every objective o of
    ``current``, it is better by more than ``margin[o]`` (0 when absent): value_F − value_T > margin for a maximized
    objective, value_T − value_F > margin for a minimized one. The rival with the lowest exposure is named.

    >>> exact_rival({"recall_at_k": 0.8, "conflict_exposure": 0.3}, [(4, {"recall_at_k": 0.9, "conflict_exposure": 0.1})], {}, 50).dominated_by
    4
    """

    def advantage(name: str, theirs: float, mine: float) -> float:
        return theirs - mine if OBJECTIVES[name] == "maximize" else mine - theirs

    rivals = [
        (number, values) for number, values in front
        if all(advantage(name, values[name], value) > margin.get(name, 0.0) for name, value in current.items())
    ]
    if not rivals:
        return None
    number, values = min(rivals, key=lambda rival: (rival[1][EXPOSURE], rival[0]))
    return PruneEvidence(
        look=0, max_looks=0, cases_used=0, n_total=n_total, dominated_by=number,
        differences={name: round(advantage(name, values[name], value), 6) for name, value in current.items()},
        estimate=current[EXPOSURE], se=0.0, rival_delta=values[EXPOSURE], margin=dict(margin), p_value=0.0, alpha=0.0,
        objective=EXPOSURE,
    )
