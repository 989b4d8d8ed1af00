from __future__ import annotations

import math

import pytest

from tuner.metrics import delta_faithful
from tuner.stats import bootstrap_sd


def test_mean_of_two_values_matches_the_exact_bootstrap_distribution() -> None:
    # resampled means of [0, 1]: 0, ½, ½, 1 with probability ¼ each → variance ⅛, SD = √⅛ ≈ 0.3536
    assert bootstrap_sd([0.0, 1.0], n_resamples=20_000) == pytest.approx(math.sqrt(1 / 8), abs=0.01)


def test_constant_scores_have_no_case_sampling_noise() -> None:
    assert bootstrap_sd([0.5, 0.5, 0.5, 0.5]) == 0.0


def test_samples_are_resampled_as_pairs() -> None:
    # the same case indices for both lists: F3 = F0 case by case, so every resampled Δ is exactly 0;
    # resampling the lists independently would not give 0
    assert bootstrap_sd([1.0, 0.5, 0.25], [1.0, 0.5, 0.25], statistic=delta_faithful) == 0.0
    # F0 = (1, 1), F3 = (1, 0): resampled Δ is 0, ½, ½, 1 as above
    assert bootstrap_sd([1.0, 1.0], [1.0, 0.0], statistic=delta_faithful, n_resamples=20_000) == pytest.approx(
        math.sqrt(1 / 8), abs=0.01
    )


def test_undefined_replicates_are_dropped_and_all_undefined_is_nan() -> None:
    assert math.isnan(bootstrap_sd([0.0, 0.0], [0.0, 0.0], statistic=delta_faithful))


def test_is_reproducible_and_checks_its_input() -> None:
    assert bootstrap_sd([0.1, 0.7, 0.3], seed=4) == bootstrap_sd([0.1, 0.7, 0.3], seed=4)
    with pytest.raises(ValueError, match="equal length"):
        bootstrap_sd([1.0, 0.5], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_sd([1.0, math.nan])
