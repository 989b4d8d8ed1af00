from __future__ import annotations

import math

import pytest

from tuner.metrics import delta_faithful, grade_delta


def test_delta_faithful_is_a_ratio_of_means() -> None:
    # mean F0 = (1 + 0.8 + 0.6)/3 = 0.8, mean Fv = (0.8 + 0.6 + 0.6)/3 = 2/3
    # Δ = (0.8 − 0.6667)/0.8 = 0.1667
    assert delta_faithful([1.0, 0.8, 0.6], [0.8, 0.6, 0.6]) == pytest.approx(1 / 6)
    # a mean of per-case ratios would give (0.2 + 0.25 + 0)/3 = 0.15: the ratio of means differs
    assert delta_faithful([1.0, 0.8, 0.6], [0.8, 0.6, 0.6]) != pytest.approx(0.15)


def test_delta_faithful_is_negative_when_the_variant_scores_higher() -> None:
    assert delta_faithful([0.5, 0.5], [0.75, 0.75]) == pytest.approx(-0.5)  # (0.5 − 0.75)/0.5


def test_delta_faithful_is_undefined_without_baseline_faithfulness() -> None:
    assert math.isnan(delta_faithful([0.0, 0.0], [0.0, 0.5]))


def test_delta_faithful_needs_paired_nonempty_lists() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        delta_faithful([1.0], [1.0, 0.5])
    with pytest.raises(ValueError, match="at least one case"):
        delta_faithful([], [])


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (-0.10, "robust"),
        (0.05, "robust"),  # the limit itself is still robust (≤ 5%)
        (0.0501, "watch"),
        (0.15, "watch"),  # ≤ 15%
        (0.1501, "sensitive"),
        (0.19, "sensitive"),  # the mission's top_k = 8 example
    ],
)
def test_grade_delta_default_limits(delta: float, expected: str) -> None:
    assert grade_delta(delta) == expected


def test_grade_delta_with_tighter_limits_for_critical_categories() -> None:
    assert grade_delta(0.11, robust=0.05, sensitive=0.10) == "sensitive"
    assert grade_delta(0.11) == "watch"


def test_grade_delta_rejects_undefined_delta_and_inverted_limits() -> None:
    with pytest.raises(ValueError, match="undefined"):
        grade_delta(math.nan)
    with pytest.raises(ValueError, match="above the sensitive limit"):
        grade_delta(0.1, robust=0.2, sensitive=0.1)
