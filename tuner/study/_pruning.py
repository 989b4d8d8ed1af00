"""Noise-floor-aware pruning for multi-objective studies (Optuna has none for several objectives).

A running trial T is pruned after a batch only when some trial F of the current front is better on
EVERY objective by more than that objective's noise floor ε:

- recall@k and context words are deterministic and known on all cases before any batch:
  ``recall(F) − recall(T) > ε_recall`` and, when it is an objective, ``words(T) − words(F) > ε_words``;
- v3 Δfaithful is compared on the cases T has been evaluated on so far, paired with F's values on the
  same cases (every trial walks one shared shuffled case order). Δ is a ratio of means; it is
  linearized per case as ``d_i = (f0_i − f3_i) / mean(f0)`` (so mean(d) = Δ) and the paired
  differences ``D_i = d_i(T) − d_i(F)`` are tested with H0: mean(D) ≤ ε_Δ by a one-sided t-test.
  The p-value must be below the per-look alpha of an alpha-spending schedule over the planned looks,
  which bounds the chance of ever pruning a trial that is not worse by more than ε.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tuner.stats import SpendingKind, alpha_spending, one_sided_margin_test


@dataclass(frozen=True)
class TrialProfile:
    """What pruning compares: deterministic objectives and per-case faithfulness in the shared case order."""

    number: int
    recall: float
    context_words: float
    f0: Sequence[float | None]
    f3: Sequence[float | None]


def linearized_delta(f0: np.ndarray, f3: np.ndarray) -> np.ndarray | None:
    """Per-case terms d_i = (f0_i − f3_i) / mean(f0), whose mean is Δfaithful; None when mean(f0) = 0."""
    base = float(np.mean(f0)) if len(f0) else 0.0
    return None if base <= 0 else (f0 - f3) / base


def _paired(a: TrialProfile, b: TrialProfile, m: int) -> tuple[np.ndarray, ...]:
    rows = [
        (a.f0[i], a.f3[i], b.f0[i], b.f3[i])
        for i in range(m)
        if None not in (a.f0[i], a.f3[i], b.f0[i], b.f3[i])
    ]
    array = np.asarray(rows, dtype=float).reshape(-1, 4)
    return array[:, 0], array[:, 1], array[:, 2], array[:, 3]


def should_prune(
    current: TrialProfile,
    evaluated: int,
    front: Sequence[TrialProfile],
    floor: dict[str, float],
    look: int,
    max_looks: int,
    alpha: float,
    spending: SpendingKind,
    use_context_words: bool,
) -> dict[str, Any] | None:
    """The evidence for pruning ``current`` after ``evaluated`` cases, or None to keep it running."""
    alpha_look = alpha_spending(alpha, look, max_looks, spending)
    for rival in front:
        recall_gap = rival.recall - current.recall
        if recall_gap <= floor.get("recall_at_k", 0.0):
            continue
        words_gap = current.context_words - rival.context_words
        if use_context_words and words_gap <= floor.get("context_words", 0.0):
            continue
        t0, t3, r0, r3 = _paired(current, rival, evaluated)
        if len(t0) < 2:
            continue
        d_current, d_rival = linearized_delta(t0, t3), linearized_delta(r0, r3)
        if d_current is None or d_rival is None:
            continue
        diffs = d_current - d_rival
        p_value = one_sided_margin_test(diffs, floor.get("v3_delta_faithful", 0.0))
        if p_value < alpha_look:
            return {
                "look": look,
                "max_looks": max_looks,
                "cases_used": int(len(diffs)),
                "dominated_by": rival.number,
                "differences": {
                    "recall_at_k": round(recall_gap, 6),
                    "v3_delta_faithful": round(float(np.mean(diffs)), 6),
                    **({"context_words": round(words_gap, 3)} if use_context_words else {}),
                },
                "noise_floor": dict(floor),
                "p_values": {"v3_delta_faithful": p_value},
                "alpha_at_look": alpha_look,
            }
    return None
