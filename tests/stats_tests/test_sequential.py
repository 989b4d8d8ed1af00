from __future__ import annotations

import pytest

from tuner.stats import alpha_spending, alpha_spending_schedule, one_sided_margin_test


def test_margin_test_by_hand() -> None:
    # d − margin = [0.05, 0.15, 0.25]: mean 0.15, s = 0.1, t = 0.15/(0.1/√3) = 2.598, df = 2
    # P(T_2 ≥ 2.598) = 0.0608
    assert one_sided_margin_test([0.1, 0.2, 0.3], margin=0.05) == pytest.approx(0.0608, abs=1e-4)


def test_margin_test_at_the_margin_is_one_half() -> None:
    # mean(d) − margin = 0 → t = 0 → p = 0.5
    assert one_sided_margin_test([0.0, 0.2, 0.1, 0.3], margin=0.15) == pytest.approx(0.5)


def test_margin_test_with_zero_variance() -> None:
    assert one_sided_margin_test([0.2, 0.2, 0.2], margin=0.1) == 0.0  # all above the margin
    assert one_sided_margin_test([0.1, 0.1], margin=0.1) == 1.0  # equal to the margin: H0 holds
    assert one_sided_margin_test([0.0, 0.0, 0.0], margin=0.1) == 1.0


def test_margin_test_needs_two_finite_diffs() -> None:
    with pytest.raises(ValueError, match="at least two"):
        one_sided_margin_test([0.3])
    with pytest.raises(ValueError, match="NaN"):
        one_sided_margin_test([0.3, float("nan")])


def test_obrien_fleming_two_looks_by_hand() -> None:
    # z_{0.975} = 1.959964; at t = 1/2: 1.959964/√0.5 = 2.771808, Φ(2.771808) = 0.9972127
    # α(1/2) = 2 − 2·0.9972127 = 0.0055746; look 2 spends the rest: 0.05 − 0.0055746 = 0.0444254
    assert alpha_spending(0.05, 1, 2) == pytest.approx(0.0055746, abs=1e-7)
    assert alpha_spending(0.05, 2, 2) == pytest.approx(0.0444254, abs=1e-7)


def test_obrien_fleming_spends_little_early_and_sums_to_alpha() -> None:
    schedule = alpha_spending_schedule(0.05, 5)
    assert sum(schedule) == pytest.approx(0.05)
    assert schedule == sorted(schedule)  # later looks get more
    # α(1/5) = 2 − 2Φ(1.959964·√5 = 4.382613) = 2 · 5.863e-6 = 1.1726e-5:
    # an early look prunes only on overwhelming evidence
    assert schedule[0] == pytest.approx(1.1726e-5, rel=1e-3)
    assert alpha_spending(0.05, 1, 1) == pytest.approx(0.05)


def test_bonferroni_splits_alpha_evenly() -> None:
    assert alpha_spending(0.05, 3, 4, kind="bonferroni") == pytest.approx(0.0125)  # 0.05/4
    assert sum(alpha_spending_schedule(0.05, 4, kind="bonferroni")) == pytest.approx(0.05)


@pytest.mark.parametrize(
    ("alpha", "look", "max_looks", "kind"),
    [(0.0, 1, 2, "bonferroni"), (0.05, 0, 2, "bonferroni"), (0.05, 3, 2, "obrien_fleming"), (0.05, 1, 2, "pocock")],
)
def test_alpha_spending_rejects_bad_arguments(alpha: float, look: int, max_looks: int, kind: str) -> None:
    with pytest.raises(ValueError):
        alpha_spending(alpha, look, max_looks, kind)  # type: ignore[arg-type]
