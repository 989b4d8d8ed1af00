"""Noise-aware pruning for multi-objective studies (Optuna has none for several objectives).

A running trial T is pruned after a batch only when some trial F of the current front is better on
EVERY objective by more than that objective's margin, each with statistical confidence:

- recall@k is deterministic and known on every case before the first batch; the per-case differences
  ``recall_i(F) − recall_i(T)`` are tested with H0: mean ≤ ε_recall;
- v3 Δfaithful is compared on the cases T has been evaluated on so far, paired with F's values on the
  same cases (every trial walks one shared shuffled case order). Δ is a ratio of means; it is
  linearized per case as ``d_i = (f0_i − f3_i) / mean(f0)`` (so mean(d) = Δ) and the paired
  differences ``d_i(T) − d_i(F)`` are tested with H0: mean ≤ ε_Δ;
- context words (when it is an objective) are deterministic: ``words(T) − words(F) > ε_words``.

Both tests are one-sided paired t-tests (``tuner.stats.one_sided_margin_test``). Pruning needs every
test to reject (an intersection–union test): if T is in fact not beaten on some objective, pruning
needs that objective's test to reject wrongly, so the error is bounded by the largest component
level. The Δ test is repeated after every batch on growing data, so it rejects at the per-look alpha
of an alpha-spending schedule over the planned looks (total ≤ alpha); the recall test sees the same
complete data at every look, so a single level-alpha test suffices for it.

The margins ε are the run-to-run part of the calibrated noise floor (``NoiseFloor.run_margins``): the
case-sampling part of the floor is exactly what the paired tests measure on the shared cases, so adding
it as a margin too would count it twice. With deterministic backends the margins are 0 and the tests
alone decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tuner.stats import SpendingKind, alpha_spending, one_sided_margin_test


@dataclass(frozen=True)
class TrialProfile:
    """What pruning compares: per-case recall (dataset order), context words, and per-case
    faithfulness at v0 and v3 in the study's shared case order (None = missing)."""

    number: int
    recall: Sequence[float]
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
    margin: dict[str, float],
    look: int,
    max_looks: int,
    alpha: float,
    spending: SpendingKind,
    use_context_words: bool,
) -> dict[str, Any] | None:
    """The evidence for pruning ``current`` after ``evaluated`` cases, or None to keep it running."""
    alpha_look = alpha_spending(alpha, look, max_looks, spending)
    for rival in front:
        words_gap = current.context_words - rival.context_words
        if use_context_words and words_gap <= margin.get("context_words", 0.0):
            continue
        recall_diffs = np.asarray(rival.recall, dtype=float) - np.asarray(current.recall, dtype=float)
        if len(recall_diffs) < 2:
            continue
        p_recall = one_sided_margin_test(recall_diffs, margin.get("recall_at_k", 0.0))
        if p_recall >= alpha:
            continue
        t0, t3, r0, r3 = _paired(current, rival, evaluated)
        if len(t0) < 2:
            continue
        d_current, d_rival = linearized_delta(t0, t3), linearized_delta(r0, r3)
        if d_current is None or d_rival is None:
            continue
        delta_diffs = d_current - d_rival
        p_delta = one_sided_margin_test(delta_diffs, margin.get("v3_delta_faithful", 0.0))
        if p_delta < alpha_look:
            return {
                "look": look,
                "max_looks": max_looks,
                "cases_used": int(len(delta_diffs)),
                "dominated_by": rival.number,
                "differences": {
                    "recall_at_k": round(float(np.mean(recall_diffs)), 6),
                    "v3_delta_faithful": round(float(np.mean(delta_diffs)), 6),
                    **({"context_words": round(words_gap, 3)} if use_context_words else {}),
                },
                "margin": dict(margin),
                "p_values": {"recall_at_k": p_recall, "v3_delta_faithful": p_delta},
                "alpha": {"recall_at_k": alpha, "v3_delta_faithful": alpha_look},
            }
    return None
