from __future__ import annotations

import pytest

from tuner.stats import Proportion, wilson_interval


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        # z = 1.95996, p̂ = 0.8: centre = (0.8 + 0.19207)/1.38415 = 0.71675,
        # half = 1.95996 · √(0.016 + 0.0096036)/1.38415 = 0.22659 → (0.4902, 0.9433)
        (8, 10, (0.4902, 0.9433)),
        # p̂ = 0: centre = half = 0.19207/1.38415 = 0.13876 → (0, 0.2775)
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),  # mirror image of 0/10
        # n = 1, p̂ = 1: centre = (1 + 1.92073)/4.84146 = 0.60327, half = 1.95996·√0.96037/4.84146 = 0.39673
        (1, 1, (0.2065, 1.0)),
    ],
)
def test_known_values(successes: int, n: int, expected: tuple[float, float]) -> None:
    assert wilson_interval(successes, n) == pytest.approx(expected, abs=5e-5)


def test_bounds_are_exact_at_the_extremes() -> None:
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0


def test_higher_confidence_is_wider() -> None:
    lo95, hi95 = wilson_interval(8, 10, 0.95)
    lo99, hi99 = wilson_interval(8, 10, 0.99)
    assert lo99 < lo95 and hi99 > hi95


@pytest.mark.parametrize(("successes", "n", "confidence"), [(0, 0, 0.95), (11, 10, 0.95), (-1, 10, 0.95), (5, 10, 1.0)])
def test_invalid_input_raises(successes: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError):
        wilson_interval(successes, n, confidence)


def test_a_proportion_is_n_over_N_with_an_interval_honest_at_the_boundary() -> None:
    # 0/57: centre = half = (z²/114)/(1 + z²/57) = 0.033696/1.067393 = 0.031569 → (0, 0.0631)
    none = Proportion(0, 57)
    assert none.value == 0.0 and none.ci == pytest.approx((0.0, 0.0631), abs=5e-5)
    # 57/57 mirrors it: the lower bound stays below 1
    every = Proportion.of([True] * 57)
    assert every.value == 1.0 and every.ci == pytest.approx((0.9369, 1.0), abs=5e-5)
    assert Proportion.of([True, False, False, True]).to_dict() == {
        "value": 0.5, "n": 2, "n_total": 4, "ci": list(wilson_interval(2, 4))
    }
    assert Proportion(0, 0).describe() == "n/a (0/0)" and Proportion(0, 0).ci is None
    assert Proportion(27, 225).describe() == "0.120 [0.084, 0.169] (27/225)"
    with pytest.raises(ValueError, match="between 0 and n_total"):
        Proportion(3, 2)
