"""Issue 37 §4: the cases at which an observed paired difference would separate (80% power, α 5% two-sided).
Figures by hand."""

from __future__ import annotations

import pytest

from tuner.stats import cases_to_separate


def test_the_sample_size_of_a_paired_difference_by_hand() -> None:
    # z_{0.975} + z_{0.80} = 1.959964 + 0.841621 = 2.801585
    # d 0.05, sd 0.2: (2.801585 · 0.2 / 0.05)² = 11.20634² = 125.58 → 126
    assert cases_to_separate(0.05, 0.2) == 126
    assert cases_to_separate(-0.05, 0.2) == 126  # the sign of the difference does not matter
    # d 0.1, sd 0.3: (2.801585 · 3)² = 8.404755² = 70.64 → 71
    assert cases_to_separate(0.1, 0.3) == 71
    # α 1%, 90% power: (2.575829 + 1.281552)² · (0.2 / 0.05)² = 3.857381² · 16 = 238.07 → 239
    assert cases_to_separate(0.05, 0.2, alpha=0.01, power=0.9) == 239


def test_no_number_of_cases_separates_a_difference_that_is_not_there() -> None:
    assert cases_to_separate(0.0, 0.2) is None
    assert cases_to_separate(float("nan"), 0.2) is None
    assert cases_to_separate(0.1, 0.0) == 1  # no spread: one case shows it


@pytest.mark.parametrize(("alpha", "power", "sd"), [(0.0, 0.8, 0.1), (0.05, 1.0, 0.1), (0.05, 0.8, -0.1)])
def test_invalid_input_raises(alpha: float, power: float, sd: float) -> None:
    with pytest.raises(ValueError):
        cases_to_separate(0.1, sd, alpha=alpha, power=power)
