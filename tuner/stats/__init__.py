"""Statistics (metrics → **estimates** → front): means over cases with n/N and missing-by-reason, intervals, paired and
sequential tests, the noise floor.

Every function is pure; formulas are in the docstrings and in docs/metrics.md.
"""

from __future__ import annotations

from tuner.stats._estimate import CiMethod, Estimate, by_group, finite_or_none, mean_estimate, unscored
from tuner.stats._variance import VarianceDecomposition, min_detectable_difference, run_sd_of_margin, variance_decomposition
from tuner.stats._paired import (
    CaseScores,
    PairedComparison,
    delta_statistic,
    mean_statistic,
    paired_comparison,
)
from tuner.stats._resampling import PairedDifference, bootstrap_ci, bootstrap_sd, paired_bootstrap_diff, ratio_of_means_ci
from tuner.stats._sequential import (
    SPENDING,
    LookAlpha,
    RatioExcess,
    SpendingKind,
    alpha_spending,
    linear_spending,
    obrien_fleming_spending,
    pocock_spending,
    ratio_excess_test,
)
from tuner.stats._power import cases_to_separate
from tuner.stats._wilson import Proportion, wilson_interval

__all__ = [
    "SPENDING",
    "CaseScores",
    "CiMethod",
    "Estimate",
    "LookAlpha",
    "PairedComparison",
    "PairedDifference",
    "Proportion",
    "RatioExcess",
    "SpendingKind",
    "VarianceDecomposition",
    "alpha_spending",
    "bootstrap_ci",
    "bootstrap_sd",
    "by_group",
    "cases_to_separate",
    "delta_statistic",
    "finite_or_none",
    "linear_spending",
    "mean_statistic",
    "mean_estimate",
    "min_detectable_difference",
    "obrien_fleming_spending",
    "paired_comparison",
    "paired_bootstrap_diff",
    "pocock_spending",
    "ratio_excess_test",
    "ratio_of_means_ci",
    "run_sd_of_margin",
    "unscored",
    "variance_decomposition",
    "wilson_interval",
]
