from __future__ import annotations

import numpy as np

from tuner.study import TrialProfile, linearized_delta, should_prune

FLOOR = {"recall_at_k": 0.02, "v3_delta_faithful": 0.05}


def _profile(number: int, recall: float, f0: list[float], f3: list[float], words: float = 100.0) -> TrialProfile:
    return TrialProfile(number, recall, words, f0, f3)


def _check(current: TrialProfile, front: list[TrialProfile], evaluated: int = 20, look: int = 1) -> dict | None:
    return should_prune(current, evaluated, front, FLOOR, look, 5, 0.05, "bonferroni", use_context_words=False)


def test_linearized_delta_averages_to_the_ratio_of_means() -> None:
    f0, f3 = np.array([1.0, 1.0, 0.5, 0.5]), np.array([1.0, 0.0, 0.5, 0.0])
    # Δ = (0.75 − 0.375) / 0.75 = 0.5
    assert np.mean(linearized_delta(f0, f3)) == 0.5
    assert linearized_delta(np.zeros(3), np.zeros(3)) is None


def test_clearly_dominated_trial_is_pruned() -> None:
    rng = np.random.default_rng(0)
    f0 = list(rng.choice([0.5, 1.0], size=20))
    robust = _profile(0, 0.90, f0, f0)  # Δ = 0 on every case
    misled = _profile(7, 0.70, f0, [0.0 if i % 2 else v for i, v in enumerate(f0)])  # loses half its cases under v3
    evidence = _check(misled, [robust])
    assert evidence is not None
    assert evidence["dominated_by"] == 0 and evidence["cases_used"] == 20
    assert evidence["differences"]["recall_at_k"] > FLOOR["recall_at_k"]
    assert evidence["p_values"]["v3_delta_faithful"] < evidence["alpha_at_look"]


def test_tie_within_the_noise_floor_is_not_pruned() -> None:
    f0 = [1.0] * 20
    front = _profile(0, 0.90, f0, [1.0] * 19 + [0.0])  # Δ = 0.05
    close = _profile(3, 0.70, f0, [1.0] * 18 + [0.0, 0.0])  # Δ = 0.10: worse by 0.05, not beyond the floor
    assert _check(close, [front]) is None


def test_better_recall_protects_a_less_robust_trial() -> None:
    f0 = [1.0] * 20
    front = _profile(0, 0.80, f0, f0)
    wide = _profile(4, 0.81, f0, [0.0] * 10 + [1.0] * 10)  # much worse Δ but not worse recall
    assert _check(wide, [front]) is None
    within_floor = _profile(5, 0.79, f0, [0.0] * 10 + [1.0] * 10)  # recall worse by 0.01 < ε_recall
    assert _check(within_floor, [front]) is None


def test_too_few_cases_or_missing_scores_never_prune() -> None:
    front = _profile(0, 0.9, [1.0, 1.0], [1.0, 1.0])
    bad = _profile(1, 0.5, [1.0, None], [0.0, None])  # type: ignore[list-item]
    assert _check(bad, [front], evaluated=2) is None


def test_repeated_looks_spend_less_alpha_per_look() -> None:
    f0 = [1.0] * 12
    front = _profile(0, 0.9, f0, f0)
    noisy = _profile(1, 0.7, f0, [1.0, 0.0, 1.0] * 4)  # Δ = 1/3 with some variance: one-sided p ≈ 0.035
    single_look = should_prune(noisy, 12, [front], FLOOR, 1, 1, 0.05, "bonferroni", False)
    many_looks = should_prune(noisy, 12, [front], FLOOR, 1, 20, 0.05, "bonferroni", False)
    assert single_look is not None and many_looks is None
