"""Statistics (metrics → **estimates** → front): percentile bootstrap intervals: one-sample, paired difference, and the
paired ratio of means."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tuner.stats._types import FloatValues

Statistic = Callable[[NDArray[np.float64]], float]


def _as_values(values: FloatValues, what: str) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{what} needs a non-empty 1-d sequence of values")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} got NaN or infinite values; drop missing cases (with their reason) first")
    return array


def _paired(a: FloatValues, b: FloatValues, what: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    first, second = _as_values(a, what), _as_values(b, what)
    if first.size != second.size:
        raise ValueError(f"{what} needs paired sequences of equal length, got {first.size} and {second.size}")
    return first, second


_RESAMPLED_VALUES = 1 << 20
"""Resampled values held at once per array by :func:`ratio_of_means_ci` (8 MiB of float64)."""


def _resample_indices(n: int, n_resamples: int, seed: int) -> NDArray[np.int64]:
    """[n_resamples, n] case indices drawn with replacement; a fixed seed makes every interval reproducible."""
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def _percentile_interval(replicates: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(replicates, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_ci(
    values: FloatValues,
    statistic: Statistic = np.mean,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic`` over cases.

    Draw B = ``n_resamples`` samples of n cases with replacement, compute θ*_b = statistic(sample_b),
    and return the (α/2, 1 − α/2) percentiles of θ*, with α = 1 − ``confidence``.

    >>> bootstrap_ci([1.0, 1.0, 1.0])
    (1.0, 1.0)
    """
    array = _as_values(values, "bootstrap_ci")
    samples = array[_resample_indices(array.size, n_resamples, seed)]
    replicates = np.array([statistic(sample) for sample in samples], dtype=np.float64)
    return _percentile_interval(replicates, confidence)


@dataclass(frozen=True)
class PairedDifference:
    """mean(a − b) over paired cases with its bootstrap interval and two-sided p-value for mean(a − b) = 0."""

    mean_diff: float
    ci: tuple[float, float]
    p_value: float
    n: int


def paired_bootstrap_diff(
    a: FloatValues,
    b: FloatValues,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Paired case bootstrap of d̄ = mean(a_i − b_i).

    The interval is the percentile interval of the resampled means d̄*_b. The p-value tests
    H0: mean(a − b) = 0 by centring the bootstrap distribution on the null:
    p = (1 + #{b : |d̄*_b − d̄| ≥ |d̄|}) / (B + 1), which is never 0 (the +1 counts the observed sample).
    """
    first, second = _paired(a, b, "paired_bootstrap_diff")
    diffs = first - second
    observed = float(diffs.mean())
    means = diffs[_resample_indices(diffs.size, n_resamples, seed)].mean(axis=1)
    extreme = np.abs(means - observed) >= abs(observed)
    p_value = (1 + int(extreme.sum())) / (n_resamples + 1)
    return PairedDifference(observed, _percentile_interval(means, confidence), p_value, int(diffs.size))


def ratio_of_means_ci(
    f0: FloatValues,
    fv: FloatValues,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Paired case bootstrap interval of Δfaithful = (mean f0 − mean fv) / mean f0.

    Resample case indices (the same indices for both lists, which keeps each case's pair together),
    recompute the ratio on each resample and take percentiles. Resamples whose mean(f0*) = 0 have no
    ratio and are left out; if the observed mean(f0) is 0 the ratio is undefined and the interval is
    (nan, nan). The ratios are those of :func:`~tuner.metrics.delta.delta_faithful` on each resample, bit for
    bit, computed as row means of the resampled arrays (a trial's intervals were a loop of 2,000 calls).
    """
    base, variant = _paired(f0, fv, "ratio_of_means_ci")
    if base.mean() == 0:
        return (float("nan"), float("nan"))
    indices = _resample_indices(base.size, n_resamples, seed)
    rows = max(1, _RESAMPLED_VALUES // base.size)  # resampled rows at a time: bounded memory on long case lists
    blocks = np.split(indices, range(rows, n_resamples, rows))
    baseline = np.concatenate([base[block].mean(axis=1) for block in blocks])
    varied = np.concatenate([variant[block].mean(axis=1) for block in blocks])
    defined = baseline != 0
    return _percentile_interval((baseline[defined] - varied[defined]) / baseline[defined], confidence)


def bootstrap_sd(
    *samples: FloatValues,
    statistic: Callable[..., float] = np.mean,
    n_resamples: int = 2000,
    seed: int = 0,
) -> float:
    """Bootstrap standard error of ``statistic`` over cases, paired across ``samples``.

    Draw B = ``n_resamples`` sets of n case indices with replacement; each set indexes every sample
    (so a case's values stay together), θ*_b = statistic(sample_1[idx_b], ..., sample_k[idx_b]), and
    the result is the standard deviation of the θ*_b (ddof = 1). Replicates that are NaN (an
    undefined ratio) are left out; with fewer than two defined replicates the result is NaN. This is
    the case-sampling noise of one configuration's score, the ``bootstrap_sd`` of
    :func:`min_detectable_difference`.

    >>> bootstrap_sd([0.5, 0.5, 0.5])
    0.0
    >>> from tuner.metrics.delta import delta_faithful
    >>> bootstrap_sd([1.0, 0.5], [1.0, 0.5], statistic=delta_faithful)   # paired: every replicate is 0
    0.0
    """
    if not samples:
        raise ValueError("bootstrap_sd needs at least one sample")
    arrays = [_as_values(sample, "bootstrap_sd") for sample in samples]
    if len({array.size for array in arrays}) != 1:
        raise ValueError(f"bootstrap_sd needs paired samples of equal length, got {[a.size for a in arrays]}")
    replicates = np.array(
        [statistic(*(array[idx] for array in arrays)) for idx in _resample_indices(arrays[0].size, n_resamples, seed)],
        dtype=np.float64,
    )
    replicates = replicates[~np.isnan(replicates)]
    if replicates.size < 2:
        return float("nan")
    return float(replicates.std(ddof=1))
