from __future__ import annotations

import math

import numpy as np
import pytest

from tuner.stats import bootstrap_ci, paired_bootstrap_diff, ratio_of_means_ci


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2]
    assert bootstrap_ci(values, n_resamples=200, seed=3) == bootstrap_ci(values, n_resamples=200, seed=3)
    assert bootstrap_ci(values, n_resamples=200, seed=3) != bootstrap_ci(values, n_resamples=200, seed=4)


def test_bootstrap_of_two_points_by_hand() -> None:
    # resampled means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4;
    # each end carries 25% > 2.5%, so the 95% percentile interval is (0, 1)
    assert bootstrap_ci([0.0, 1.0], n_resamples=400) == (0.0, 1.0)


def test_bootstrap_of_a_constant_is_a_point() -> None:
    assert bootstrap_ci([0.6] * 5, n_resamples=50) == pytest.approx((0.6, 0.6))
    assert bootstrap_ci([0.6], n_resamples=50) == pytest.approx((0.6, 0.6))


def test_bootstrap_takes_any_statistic() -> None:
    # the max of a resample of [0, 1, 1, 1] is 0 only when all four draws are the 0: (1/4)⁴ = 0.4% < 2.5%
    assert bootstrap_ci([0.0, 1.0, 1.0, 1.0], statistic=np.max, n_resamples=400) == (1.0, 1.0)
    # the mean of the same data does reach below 1
    assert bootstrap_ci([0.0, 1.0, 1.0, 1.0], n_resamples=400)[0] < 1.0


def test_bootstrap_rejects_empty_and_nan() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([0.1, math.nan])


def test_paired_difference_by_hand() -> None:
    a = [0.9, 0.8, 0.7, 1.0]
    b = [0.6, 0.8, 0.4, 0.9]
    result = paired_bootstrap_diff(a, b, n_resamples=500, seed=1)
    assert result.mean_diff == pytest.approx(0.175)  # diffs 0.3, 0, 0.3, 0.1 → 0.7/4
    assert result.n == 4
    assert 0.0 <= result.ci[0] <= 0.175 <= result.ci[1] <= 0.3  # bounded by the smallest and largest diff
    assert result == paired_bootstrap_diff(a, b, n_resamples=500, seed=1)


def test_paired_p_value_with_zero_variance() -> None:
    # every diff is 0.2: every resampled mean equals the observed one, none is as far from it as 0.2
    # → p = (1 + 0)/(B + 1)
    shifted = paired_bootstrap_diff([0.5, 0.6, 0.7], [0.3, 0.4, 0.5], n_resamples=99)
    assert shifted.p_value == pytest.approx(1 / 100)
    assert shifted.ci == pytest.approx((0.2, 0.2))
    # identical configurations: every resample counts → p = (1 + 99)/100 = 1
    assert paired_bootstrap_diff([0.5, 0.6], [0.5, 0.6], n_resamples=99).p_value == 1.0


def test_paired_p_value_separates_signal_from_noise() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.9, size=30)
    noise = rng.normal(0.0, 0.05, size=30)
    assert paired_bootstrap_diff(base + 0.2 + noise, base, n_resamples=500).p_value < 0.01
    assert paired_bootstrap_diff(base + noise, base, n_resamples=500).p_value > 0.05


def test_paired_inputs_must_have_equal_length() -> None:
    with pytest.raises(ValueError, match="equal length"):
        paired_bootstrap_diff([1.0, 0.5], [1.0])


def test_ratio_of_means_ci_of_a_constant_ratio() -> None:
    # every resample: (mean f0 − mean f0/2)/mean f0 = 0.5
    assert ratio_of_means_ci([1.0, 0.8, 0.6], [0.5, 0.4, 0.3], n_resamples=100) == pytest.approx((0.5, 0.5))


def test_ratio_of_means_ci_drops_resamples_without_baseline() -> None:
    # resamples of case indices {0,0} have mean f0 = 0 (no ratio); {0,1}, {1,0}, {1,1} all give
    # (mean f0 − mean fv)/mean f0 = (0.5 − 0.25)/0.5 = (1 − 0.5)/1 = 0.5
    assert ratio_of_means_ci([0.0, 1.0], [0.0, 0.5], n_resamples=200) == pytest.approx((0.5, 0.5))


def test_ratio_of_means_ci_is_undefined_without_baseline() -> None:
    lo, hi = ratio_of_means_ci([0.0, 0.0], [0.5, 0.0], n_resamples=20)
    assert math.isnan(lo) and math.isnan(hi)


def test_ratio_of_means_ci_brackets_the_observed_delta() -> None:
    f0 = [1.0, 0.8, 0.6, 0.9, 0.7, 1.0]
    fv = [0.8, 0.8, 0.3, 0.9, 0.5, 0.6]
    observed = (np.mean(f0) - np.mean(fv)) / np.mean(f0)  # (0.8333 − 0.65)/0.8333 = 0.22
    lo, hi = ratio_of_means_ci(f0, fv, n_resamples=400, seed=2)
    assert lo < observed < hi
    assert (lo, hi) == ratio_of_means_ci(f0, fv, n_resamples=400, seed=2)


@pytest.mark.parametrize("n", [2, 9, 17, 130])
def test_ratio_of_means_ci_is_the_percentile_of_delta_faithful_on_each_resample_bit_for_bit(
        n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row means of the resampled arrays, a few rows at a time (here 4 rows per block: many blocks), give the
    interval of delta_faithful computed resample by resample, exactly: intervals stored by earlier runs stay valid."""
    from tuner.metrics.delta import delta_faithful
    from tuner.stats import _resampling

    rng = np.random.default_rng(n)
    f0 = rng.choice([0.0, 1 / 3, 0.5, 0.7, 1.0], size=n)
    f0[0] = 1.0
    fv = np.clip(f0 - 0.3 * rng.random(n), 0.0, 1.0)
    replicates = np.array([delta_faithful(f0[idx], fv[idx]) for idx in _resampling._resample_indices(n, 300, 5)])
    lo, hi = np.percentile(replicates[~np.isnan(replicates)], [2.5, 97.5])
    monkeypatch.setattr(_resampling, "_RESAMPLED_VALUES", 4 * n)
    assert ratio_of_means_ci(f0, fv, n_resamples=300, seed=5) == (float(lo), float(hi))
