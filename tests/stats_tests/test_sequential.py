from __future__ import annotations

import numpy as np
import pytest

from tuner.stats import (
    SPENDING,
    alpha_spending,
    linear_spending,
    obrien_fleming_spending,
    pocock_spending,
    ratio_excess_test,
)


def test_ratio_excess_by_hand() -> None:
    # trial known on 3 of 4 cases: a = [0, 1, 1], b = [1, 1, 1] → R̂ = 2/3; the rival's a are all 0 → R_F = 0, v = 0
    # u = a − 2/3 = [−2/3, 1/3, 1/3]: s² = (4/9 + 1/9 + 1/9)/2 = 1/3; SE = √(1 − 3/4) · √(1/3) / √3 = 1/6
    # t = (2/3 − 0)/(1/6) = 4, df = 2: P(T_2 ≥ 4) = 0.02860
    result = ratio_excess_test([0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0] * 4, [1.0] * 4)
    assert result is not None
    assert (result.estimate, result.rival, result.n, result.n_total) == (pytest.approx(2 / 3), 0.0, 3, 4)
    assert result.se == pytest.approx(1 / 6)
    assert result.p_value == pytest.approx(0.02860, abs=1e-5)
    # a margin of 0.5 leaves t = (2/3 − 0.5)/(1/6) = 1: P(T_2 ≥ 1) = 0.2113
    assert ratio_excess_test([0.0, 1.0, 1.0], [1.0] * 3, [0.0] * 4, [1.0] * 4, margin=0.5).p_value == pytest.approx(0.2113, abs=1e-4)


def test_ratio_excess_uses_the_rival_as_a_control_variate() -> None:
    # the rival's full ratio is 0.25 (1 of 4), but it scored 0.5 on the two sampled cases: the sample is a
    # "hard" one, so the trial's 1.0 on it is corrected down by v̄_S = mean((a^F − 0.25 b^F)/1) = 0.25
    result = ratio_excess_test([1.0, 1.0], [1.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0] * 4)
    assert result is not None and result.rival == 0.25
    assert result.estimate == pytest.approx(0.75)


def test_ratio_excess_is_exact_on_the_whole_list_and_silent_without_spread() -> None:
    full = ratio_excess_test([1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], margin=0.4)
    assert full is not None and (full.estimate, full.se, full.p_value) == (0.5, 0.0, 0.0)
    assert ratio_excess_test([1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], margin=0.5).p_value == 1.0
    # two of four cases, the same value on both: no variance estimate, so no evidence either way
    flat = ratio_excess_test([1.0, 1.0], [1.0, 1.0], [0.0] * 4, [1.0] * 4)
    assert flat is not None and flat.p_value == 1.0


def test_ratio_excess_skips_missing_scores_and_needs_two_cases() -> None:
    nan = float("nan")
    result = ratio_excess_test([1.0, nan, 0.0, 1.0], [1.0, nan, 1.0, 1.0], [0.0] * 6, [1.0] * 6)
    assert result is not None and (result.n, result.n_total) == (3, 6)
    assert ratio_excess_test([1.0, nan], [1.0, 1.0], [0.0] * 4, [1.0] * 4) is None
    assert ratio_excess_test([1.0, 1.0], [1.0, 1.0], [0.0] * 4, [0.0] * 4) is None  # the rival's Σ b = 0
    with pytest.raises(ValueError, match="aligned"):
        ratio_excess_test([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.0, 0.0], [1.0, 1.0])


def _population(rng: np.random.Generator, n: int, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-case (f0 − f3, f0) of n cases: f0 in {0.5, 1}, a share ``rate`` of the cases misled (f3 = 0)."""
    f0 = rng.choice([0.5, 1.0], size=n)
    misled = rng.random(n) < rate
    return np.where(misled, f0, 0.0), f0


def test_ratio_excess_level_and_power_over_random_case_orders() -> None:
    rng = np.random.default_rng(3)
    n, m, runs = 180, 40, 1000
    trial_a, trial_b = _population(rng, n, 0.2)
    shuffled = rng.permutation(n)
    same_a, same_b = trial_a[shuffled], trial_b[shuffled]  # another trial misled on other cases, with the same Δ
    rejected = powered = 0
    for _ in range(runs):
        order = rng.permutation(n)
        sample_a, sample_b = trial_a[order][:m], trial_b[order][:m]
        boundary = ratio_excess_test(sample_a, sample_b, same_a[order], same_b[order])  # H0 holds: Δ − Δ_F = 0
        rejected += boundary is not None and boundary.p_value < 0.05
        robust = ratio_excess_test(sample_a, sample_b, np.zeros(n), trial_b[order])  # the rival is never misled
        powered += robust is not None and robust.p_value < 0.05
    assert rejected / runs <= 0.07  # the level is alpha = 0.05, up to the t approximation and simulation error
    assert powered / runs >= 0.95  # a trial that loses ~16% of its faithfulness is told apart on 40 of 180 cases


def test_obrien_fleming_spending_by_hand() -> None:
    # z_{0.975} = 1.959964; at t = 1/2: 1.959964/√0.5 = 2.771808, Φ(2.771808) = 0.9972127
    # α(1/2) = 2 − 2·0.9972127 = 0.0055746
    assert obrien_fleming_spending(0.05, 0.5) == pytest.approx(0.0055746, abs=1e-7)
    # α(1/5) = 2 − 2Φ(1.959964·√5 = 4.382613) = 2 · 5.863e-6 = 1.1726e-5: an early look prunes only on
    # overwhelming evidence
    assert obrien_fleming_spending(0.05, 0.2) == pytest.approx(1.1726e-5, rel=1e-3)
    assert obrien_fleming_spending(0.05, 1.0) == pytest.approx(0.05)
    assert obrien_fleming_spending(0.05, 0.0) == 0.0


def test_pocock_spending_by_hand() -> None:
    # α(t) = α·ln(1 + (e − 1)t): t = 1/2 → 0.05·ln(1.859141) = 0.05·0.620115 = 0.0310057
    assert pocock_spending(0.05, 0.5) == pytest.approx(0.0310057, abs=1e-7)
    # t = 1/5 → 0.05·ln(1.343656) = 0.05·0.295395 = 0.0147698: more than O'Brien–Fleming early
    assert pocock_spending(0.05, 0.2) == pytest.approx(0.0147698, abs=1e-7)
    assert pocock_spending(0.05, 1.0) == pytest.approx(0.05)
    assert linear_spending(0.05, 0.25) == pytest.approx(0.0125)


def test_alpha_is_spent_by_the_last_look_and_each_look_uses_its_increment() -> None:
    # spending time τ = t / t_K: looks at 35% and 70% are τ = 1/2 and 1
    looks = alpha_spending(0.05, [0.35, 0.7], "obf")
    assert [look.fraction for look in looks] == [0.35, 0.7]
    assert [look.alpha for look in looks] == pytest.approx([0.0055746, 0.0444254], abs=1e-7)
    assert [look.spent for look in looks] == pytest.approx([0.0055746, 0.05], abs=1e-7)
    for kind in SPENDING:
        schedule = alpha_spending(0.05, [0.1, 0.2, 0.35, 0.5, 0.7], kind)
        assert sum(look.alpha for look in schedule) == pytest.approx(0.05)
        assert all(look.alpha > 0 for look in schedule)
    obf = alpha_spending(0.05, [0.1, 0.2, 0.35, 0.5, 0.7], "obf")
    assert [look.alpha for look in obf] == sorted(look.alpha for look in obf)  # later looks get more


def test_bonferroni_splits_alpha_evenly_over_equally_spaced_looks() -> None:
    assert [look.alpha for look in alpha_spending(0.05, [0.25, 0.5, 0.75, 1.0], "bonferroni")] == pytest.approx([0.0125] * 4)


@pytest.mark.parametrize(
    ("alpha", "fractions", "kind"),
    [(0.0, [0.5], "bonferroni"), (0.05, [], "obf"), (0.05, [0.5, 0.4], "obf"), (0.05, [0.0, 0.5], "pocock"),
     (0.05, [0.5], "obrien_fleming")],
)
def test_alpha_spending_rejects_bad_arguments(alpha: float, fractions: list[float], kind: str) -> None:
    with pytest.raises(ValueError):
        alpha_spending(alpha, fractions, kind)  # type: ignore[arg-type]
