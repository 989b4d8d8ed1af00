"""Noise-aware pruning for multi-objective studies (Optuna has none for several objectives).

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tuner.metrics import delta_faithful
from tuner.stats import SpendingKind, alpha_spending, ratio_excess_test


@dataclass(frozen=True)
class TrialProfile:
    """What pruning compares: recall@k and context words (exact), and per-case faithfulness at v0 and v3
    in the study's shared case order (None = missing; a front trial has every case)."""

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
) -> dict[str, Any] | None:
    """The evidence for pruning ``current`` (evaluated on its first ``len(current.f0)`` cases), or None."""
    recall_margin, words_margin = margin.get("recall_at_k", 0.0), margin.get("context_words", 0.0)
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
    test = ratio_excess_test(*current.drops(), *rival.drops(), margin=margin.get("v3_delta_faithful", 0.0))
    alpha_look = alpha_spending(alpha, look, max_looks, spending)
    if test is None or test.p_value >= alpha_look:
        return None
    return {
        "look": look,
        "max_looks": max_looks,
        "cases_used": test.n,
        "n_total": test.n_total,
        "dominated_by": rival.number,
        "differences": {
            "recall_at_k": round(rival.recall - current.recall, 6),
            "v3_delta_faithful": round(test.estimate - test.rival, 6),
            **({"context_words": round(current.context_words - rival.context_words, 3)} if use_context_words else {}),
        },
        "v3_delta_faithful": {"estimate": round(test.estimate, 6), "se": round(test.se, 6), "rival": round(test.rival, 6)},
        "margin": dict(margin),
        "p_value": test.p_value,
        "alpha": alpha_look,
    }
