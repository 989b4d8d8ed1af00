from __future__ import annotations

import math

import numpy as np
import pytest

from tuner.stats import min_detectable_difference, variance_decomposition


def test_min_detectable_difference_by_hand() -> None:
    # 1.96 · √2 · √(0.03² + 0.04²) = 1.96 · 1.41421 · 0.05 = 0.13859
    assert min_detectable_difference(0.03, 0.04) == pytest.approx(0.13859, abs=1e-5)
    # z = 1: √2 · √(0.06² + 0.08²) = 1.41421 · 0.1
    assert min_detectable_difference(0.06, 0.08, z=1.0) == pytest.approx(0.141421, abs=1e-6)
    assert min_detectable_difference(0.0, 0.0) == 0.0  # deterministic metric on a fixed case list


def test_min_detectable_difference_rejects_negative_sd() -> None:
    with pytest.raises(ValueError):
        min_detectable_difference(-0.1, 0.1)


def test_variance_decomposition_by_hand() -> None:
    regenerated = [[1.0, 0.5], [0.0, 0.5]]
    rejudged = [[0.5, 0.5], [0.0, 0.5]]
    result = variance_decomposition(regenerated, rejudged)
    # regenerated: case 0 has runs (1, 0): var = ((0.5)² + (0.5)²)/1 = 0.5; case 1 var 0 → total 0.25
    assert result.total_var == pytest.approx(0.25)
    # rejudged: case 0 runs (0.5, 0): var = 0.125; case 1 var 0 → judge 0.0625
    assert result.judge_var == pytest.approx(0.0625)
    assert result.generator_var == pytest.approx(0.1875)  # 0.25 − 0.0625
    assert result.judge_share == pytest.approx(0.25)  # 0.0625/0.25
    assert result.generator_share == pytest.approx(0.75)
    # run means 0.75 and 0.25: sd = √((0.25² + 0.25²)/1) = 0.353553
    assert result.run_sd == pytest.approx(0.353553, abs=1e-6)


def test_metric_that_never_reads_the_answer_is_all_judge() -> None:
    # same spread whether the answer was regenerated or not → generator adds nothing
    scores = np.array([[0.8, 0.6, 1.0], [0.6, 0.6, 0.8], [0.7, 0.9, 1.0]])
    result = variance_decomposition(scores, scores)
    assert result.generator_var == 0.0
    assert result.judge_share == 1.0


def test_judge_noisier_than_total_is_floored() -> None:
    regenerated = [[1.0, 1.0], [1.0, 1.0]]  # total var 0
    rejudged = [[1.0, 0.0], [0.0, 1.0]]  # var 0.5 per case
    result = variance_decomposition(regenerated, rejudged)
    assert result.generator_var == 0.0  # max(0 − 0.5, 0)
    assert (result.judge_share, result.generator_share) == (1.0, 0.0)


def test_deterministic_pipeline_has_no_shares() -> None:
    zeros = np.zeros((3, 4))
    result = variance_decomposition(zeros, zeros)
    assert (result.total_var, result.judge_var, result.generator_var, result.run_sd) == (0.0, 0.0, 0.0, 0.0)
    assert result.judge_share is None and result.generator_share is None


def test_runs_may_differ_in_number_but_cases_must_match() -> None:
    result = variance_decomposition(np.ones((5, 2)), np.ones((2, 2)))
    assert result.total_var == 0.0
    with pytest.raises(ValueError, match="cases"):
        variance_decomposition(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="at least 2 runs"):
        variance_decomposition(np.ones((1, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="missing run"):
        variance_decomposition([[1.0, math.nan], [1.0, 1.0]], np.ones((2, 2)))
