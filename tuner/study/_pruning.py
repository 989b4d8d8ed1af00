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
  one-sided. It is repeated after every batch, so it rejects at the per-look alpha of an
  alpha-spending schedule over the planned looks (total ≤ alpha).

The margins ε are the run-to-run part of the calibrated noise floor (``NoiseFloor.run_margins``):
regenerating and re-judging would move a trial's values by that much, so a smaller advantage is not
one another run would reproduce. The case-sampling part of the floor is not a margin here: trials
are compared on one frozen case list, recall exactly and Δ by the test above, whose only sampling
uncertainty is the cases not yet evaluated. With deterministic backends the margins are 0.

What this guarantees: with probability ≥ 1 − alpha, a pruned trial would have been dominated on the
complete evaluation by a trial that stays in the study, so it would not have been on the front.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tuner.metrics import delta_faithful
from tuner.objectives import CONTEXT_WORDS, DELTA, RECALL
from tuner.stats import SpendingKind, alpha_spending, ratio_excess_test


@dataclass(frozen=True)
class PruneEvidence:
    """Why a trial was pruned, stored in its ``pruning`` user attribute.

    At look ``look`` of ``max_looks``, on its first ``cases_used`` of ``n_total`` cases, trial
    ``dominated_by`` beat it by ``differences`` (rival better by this much per objective, recall and
    context words exact, Δ estimated); ``estimate`` ± ``se`` is the pruned trial's estimated Δ on all
    cases and ``rival_delta`` the rival's; H0 (not beaten by more than ``margin``) had ``p_value`` <
    ``alpha``, the per-look level of the spending schedule; ``objective`` names the robustness objective
    (``v3_delta_faithful`` or ``v3_delta_correct``) the Δ figures are of.
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
        )


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
    look: int,
    max_looks: int,
    alpha: float,
    spending: SpendingKind,
    use_context_words: bool,
    objective: str = DELTA,
) -> PruneEvidence | None:
    """The evidence for pruning ``current`` (evaluated on its first ``len(current.f0)`` cases), or None."""
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
    alpha_look = alpha_spending(alpha, look, max_looks, spending)
    if test is None or test.p_value >= alpha_look:
        return None
    return PruneEvidence(
        look=look,
        max_looks=max_looks,
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
        alpha=alpha_look,
        objective=objective,
    )
