from __future__ import annotations

import math

import numpy as np
import pytest

from tuner.stats import delta_statistic, min_detectable_difference, paired_comparison


def test_constant_difference_has_no_case_noise_and_only_the_run_term() -> None:
    # every case differs by 0.5: each resample's difference is 0.5, so case_sd = 0;
    # se = √(0² + 0.03² + 0.04²) = 0.05, margin = 1.96 · 0.05 = 0.098
    result = paired_comparison([[1.0, 0.8, 0.6]], [[0.5, 0.3, 0.1]], run_sd=(0.03, 0.04))
    assert result.difference == pytest.approx(0.5)
    assert result.case_sd == pytest.approx(0.0, abs=1e-12)
    assert result.se == pytest.approx(0.05)
    assert result.margin == pytest.approx(0.098)
    assert result.ci == pytest.approx((0.402, 0.598))
    assert not result.tied


def test_case_sd_by_hand() -> None:
    # per-case differences (1, 0): a resample of 2 cases has mean 0, 0.5, 0.5 or 1 with probability
    # 1/4, 1/2, 1/4: variance = 1/4·0.25 + 1/2·0 + 1/4·0.25 = 0.125, sd = 0.35355
    result = paired_comparison([[1.0, 1.0]], [[0.0, 1.0]], n_resamples=40000)
    assert result.difference == pytest.approx(0.5)
    assert result.case_sd == pytest.approx(math.sqrt(0.125), abs=0.005)
    assert result.tied  # 0.5 ≤ 1.96 · 0.354


def test_shared_case_spread_cancels_where_the_unpaired_floor_ties() -> None:
    # A is B + 0.05 on every case while cases spread from 0 to 1: paired, the difference is exact;
    # the unpaired floor z·√2·bootstrap_sd of one configuration swallows it
    rng = np.random.default_rng(1)
    b = rng.uniform(0, 0.9, 60)
    result = paired_comparison([b + 0.05], [b])
    assert result.case_sd == pytest.approx(0.0, abs=1e-12) and not result.tied
    unpaired = min_detectable_difference(0.0, float(b.std(ddof=1) / math.sqrt(b.size)))
    assert unpaired > 0.05


def test_delta_is_recomputed_per_configuration_on_the_resampled_cases() -> None:
    # A: Δ = (1 − 0.5)/1 = 0.5; B: Δ = (1 − 1)/1 = 0 on both cases → difference 0.5 on every resample
    a = [[1.0, 1.0], [0.5, 0.5]]
    b = [[1.0, 1.0], [1.0, 1.0]]
    result = paired_comparison(a, b, statistic=delta_statistic)
    assert result.difference == pytest.approx(0.5)
    assert result.case_sd == pytest.approx(0.0, abs=1e-12)


def test_only_cases_both_scored_count() -> None:
    result = paired_comparison([[1.0, None, 0.0]], [[0.0, 1.0, math.nan]])
    assert result.n == 1 and result.difference == pytest.approx(1.0)
    empty = paired_comparison([[None]], [[1.0]])
    assert empty.n == 0 and empty.tied


def test_against_zero_uses_one_configuration() -> None:
    # Δ of one configuration against 0: f0 = (1, 1), f3 = (0.5, 1) → Δ = (1 − 0.75)/1 = 0.25
    result = paired_comparison([[1.0, 1.0], [0.5, 1.0]], None, statistic=delta_statistic, run_sd=(0.1, 5.0))
    assert result.difference == pytest.approx(0.25)
    assert result.se >= 0.1 and result.se < 1.0  # B's run_sd is not used


def test_a_a_same_configuration_regenerated_ties_in_95_percent() -> None:
    # A/A: one configuration's per-case faithfulness regenerated twice (per-case noise sd 0.15 around the
    # same true scores); its run-to-run sd of the mean is 0.15/√n. It must tie in ≥ 95% of repetitions.
    rng = np.random.default_rng(7)
    n, repetitions = 80, 200
    truth = rng.uniform(0.3, 1.0, n)
    run_sd = 0.15 / math.sqrt(n)
    separated = 0
    for rep in range(repetitions):
        first, second = (np.clip(truth + rng.normal(0, 0.15, n), 0, 1) for _ in range(2))
        result = paired_comparison([first], [second], run_sd=(run_sd, run_sd), n_resamples=300, seed=rep)
        separated += not result.tied
    assert separated / repetitions <= 0.05


def test_rejects_mismatched_lists() -> None:
    with pytest.raises(ValueError):
        paired_comparison([[1.0, 0.0]], [[1.0]])
