from __future__ import annotations

import numpy as np

from tuner.study import TrialProfile, linearized_delta, should_prune

MARGIN = {"recall_at_k": 0.02, "v3_delta_faithful": 0.05}
N = 50


def _recall(misses: int) -> list[float]:
    """Per-case recall over N cases, the first ``misses`` cases missed."""
    return [0.0] * misses + [1.0] * (N - misses)


def _profile(number: int, misses: int, f0: list[float], f3: list[float], words: float = 100.0) -> TrialProfile:
    return TrialProfile(number, _recall(misses), words, f0, f3)


def _check(current: TrialProfile, front: list[TrialProfile], evaluated: int = 20, look: int = 1) -> dict | None:
    return should_prune(current, evaluated, front, MARGIN, look, 5, 0.05, "bonferroni", use_context_words=False)


def test_linearized_delta_averages_to_the_ratio_of_means() -> None:
    f0, f3 = np.array([1.0, 1.0, 0.5, 0.5]), np.array([1.0, 0.0, 0.5, 0.0])
    # Δ = (0.75 − 0.375) / 0.75 = 0.5
    assert np.mean(linearized_delta(f0, f3)) == 0.5
    assert linearized_delta(np.zeros(3), np.zeros(3)) is None


def test_clearly_dominated_trial_is_pruned_with_its_evidence() -> None:
    rng = np.random.default_rng(0)
    f0 = list(rng.choice([0.5, 1.0], size=20))
    robust = _profile(0, 5, f0, f0)  # recall 0.9, Δ = 0 on every case
    misled = _profile(7, 15, f0, [0.0 if i % 2 else v for i, v in enumerate(f0)])  # recall 0.7, loses half its cases
    evidence = _check(misled, [robust])
    assert evidence is not None
    assert evidence["dominated_by"] == 0 and evidence["cases_used"] == 20
    assert evidence["differences"]["recall_at_k"] == 0.2
    assert evidence["alpha"] == {"recall_at_k": 0.05, "v3_delta_faithful": 0.01}  # Δ: 0.05 / 5 looks
    assert all(evidence["p_values"][k] < evidence["alpha"][k] for k in evidence["alpha"])


def test_tie_within_the_margin_is_not_pruned() -> None:
    f0 = [1.0] * 20
    front = _profile(0, 5, f0, [1.0] * 19 + [0.0])  # Δ = 0.05
    close = _profile(3, 15, f0, [1.0] * 18 + [0.0, 0.0])  # Δ = 0.10: worse by exactly the margin, not more
    assert _check(close, [front]) is None


def test_recall_within_its_margin_or_better_protects_a_less_robust_trial() -> None:
    f0 = [1.0] * 20
    front = _profile(0, 10, f0, f0)
    better_recall = _profile(4, 9, f0, [0.0] * 10 + [1.0] * 10)  # much worse Δ, better recall
    assert _check(better_recall, [front]) is None
    within_margin = _profile(5, 11, f0, [0.0] * 10 + [1.0] * 10)  # recall worse on 1 of 50 cases: 0.02 = margin
    assert _check(within_margin, [front]) is None


def test_too_few_cases_or_missing_scores_never_prune() -> None:
    front = _profile(0, 0, [1.0, 1.0], [1.0, 1.0])
    bad = _profile(1, 30, [1.0, None], [0.0, None])  # type: ignore[list-item]
    assert _check(bad, [front], evaluated=2) is None


def test_repeated_looks_spend_less_alpha_per_look() -> None:
    f0 = [1.0] * 12
    front = _profile(0, 0, f0, f0)
    noisy = _profile(1, 25, f0, [1.0, 0.0, 1.0] * 4)  # Δ = 1/3 with some variance: one-sided p ≈ 0.035
    single_look = should_prune(noisy, 12, [front], MARGIN, 1, 1, 0.05, "bonferroni", False)
    many_looks = should_prune(noisy, 12, [front], MARGIN, 1, 20, 0.05, "bonferroni", False)
    assert single_look is not None and many_looks is None


def test_context_words_must_also_be_worse_when_it_is_an_objective() -> None:
    f0 = [1.0] * 20
    front = _profile(0, 5, f0, f0, words=300.0)
    cheaper = _profile(1, 15, f0, [0.0] * 10 + [1.0] * 10, words=100.0)
    assert should_prune(cheaper, 20, [front], MARGIN, 1, 5, 0.05, "bonferroni", True) is None
    assert should_prune(cheaper, 20, [front], MARGIN, 1, 5, 0.05, "bonferroni", False) is not None
