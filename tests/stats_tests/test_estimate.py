from __future__ import annotations

import json
import math

import pytest

from tuner.stats import Estimate, by_group, mean_estimate


def test_missing_values_are_counted_by_reason_never_as_zero() -> None:
    values = [1.0, 0.5, None, 0.0, None, None]
    reasons = [None, None, "timeout", None, "parse failure", "timeout"]
    estimate = mean_estimate(values, reasons, ci_method=None)
    assert estimate.value == pytest.approx(0.5)  # (1 + 0.5 + 0)/3, not (1 + 0.5 + 0)/6 = 0.25
    assert (estimate.n, estimate.n_total) == (3, 6)
    assert estimate.missing == {"parse failure": 1, "timeout": 2}
    assert estimate.ci is None


def test_missing_without_a_reason_counts_as_missing() -> None:
    assert mean_estimate([None, 1.0], ci_method=None).missing == {"missing": 1}


def test_all_missing_has_no_value() -> None:
    estimate = mean_estimate([None, None], ["empty answer", "empty answer"])
    assert estimate.value is None
    assert estimate.ci is None
    assert str(estimate) == "n/a (0/2)"
    assert estimate.describe() == "n/a (0/2; missing: empty answer 2)"


def test_nan_is_refused_so_nothing_shrinks_the_average_silently() -> None:
    with pytest.raises(ValueError, match="NaN"):
        mean_estimate([1.0, math.nan])


def test_reasons_must_line_up_with_values() -> None:
    with pytest.raises(ValueError, match="has a value and a missing reason"):
        mean_estimate([1.0], ["timeout"])
    with pytest.raises(ValueError, match="2 values but 1 reasons"):
        mean_estimate([1.0, None], ["timeout"])
    with pytest.raises(ValueError, match="unknown ci_method"):
        mean_estimate([], ci_method="normal")  # type: ignore[arg-type]


def test_str_carries_n_over_N() -> None:
    estimate = mean_estimate([1.0] * 9 + [None] * 9, ci_method=None)
    # 15/18 of one and 3/18 of another would also print 0.833; n/N tells them apart
    assert str(Estimate(0.8333, 9, 18, None, {"timeout": 9})) == "0.833 (9/18)"
    assert str(estimate) == "1.000 (9/18)"


def test_t_interval_by_hand() -> None:
    # mean 0.7, s = 0.2, se = 0.2/√3 = 0.115470, t_{0.975, 2} = 4.302653 → half-width 0.496828
    estimate = mean_estimate([0.5, 0.7, 0.9], ci_method="t")
    assert estimate.ci == pytest.approx((0.7 - 0.496828, 0.7 + 0.496828), abs=1e-6)


def test_t_interval_with_zero_variance_is_a_point() -> None:
    assert mean_estimate([0.4, 0.4, 0.4], ci_method="t").ci == pytest.approx((0.4, 0.4))


def test_wilson_interval_for_proportions() -> None:
    estimate = mean_estimate([1.0] * 8 + [0.0] * 2 + [None], ci_method="wilson")
    assert estimate.value == pytest.approx(0.8)  # 8/10
    assert estimate.ci == pytest.approx((0.4902, 0.9433), abs=1e-4)
    with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
        mean_estimate([0.5, 1.2], ci_method="wilson")


def test_a_perfect_mean_of_per_case_scores_has_a_lower_bound_below_one() -> None:
    """Issue 37 §3: 57 of 57 held-out cases at recall 1. The percentile bootstrap collapses to [1, 1]; the Wilson
    interval keeps the lower bound at 57 / (57 + z²) = 57 / 60.8415 = 0.93686 (z = 1.959964, z² = 3.841459)."""
    perfect = [1.0] * 57
    assert mean_estimate(perfect, ci_method="bootstrap").ci == (1.0, 1.0)
    low, high = mean_estimate(perfect, ci_method="wilson").ci or (None, None)
    assert low == pytest.approx(0.93686, abs=5e-5) and high == 1.0
    assert mean_estimate([0.0] * 57, ci_method="wilson").ci == pytest.approx((0.0, 1 - 0.93686), abs=5e-5)


def test_fractional_scores_take_the_wilson_interval_of_their_mean() -> None:
    # recall per case 1, 0.5, 1, 0.5: mean 0.75 over n = 4, z² = 3.841459; centre = (0.75 + 0.480182) / 1.960365
    # = 0.627527, half = 1.959964 · √(0.046875 + 0.060023) / 1.960365 = 0.326886 → (0.300642, 0.954413)
    estimate = mean_estimate([1.0, 0.5, 1.0, 0.5], ci_method="wilson")
    assert estimate.ci == pytest.approx((0.300642, 0.954413), abs=5e-5)


def test_one_scored_case_has_no_bootstrap_or_t_interval() -> None:
    assert mean_estimate([0.7, None], ci_method="bootstrap").ci is None
    assert mean_estimate([0.7], ci_method="t").ci is None


def test_bootstrap_interval_is_reproducible_and_brackets_the_mean() -> None:
    values = [0.2, 0.9, 0.4, 1.0, 0.6, 0.3]
    first = mean_estimate(values, n_resamples=300, seed=7)
    again = mean_estimate(values, n_resamples=300, seed=7)
    assert first.ci == again.ci
    assert first.ci is not None
    assert first.ci[0] < first.value < first.ci[1]  # type: ignore[operator]


def test_describe_and_to_dict() -> None:
    estimate = Estimate(0.8333, 9, 12, (0.71, 0.92), {"timeout": 2, "parse failure": 1})
    assert estimate.describe() == "0.833 [0.710, 0.920] (9/12; missing: timeout 2, parse failure 1)"
    payload = estimate.to_dict()
    assert payload == {
        "value": 0.8333,
        "n": 9,
        "n_total": 12,
        "ci": [0.71, 0.92],
        "missing": {"timeout": 2, "parse failure": 1},
    }
    json.dumps(payload, allow_nan=False)


def test_to_dict_writes_undefined_values_as_null() -> None:
    payload = Estimate(math.nan, 3, 3, (math.nan, math.nan)).to_dict()
    assert payload["value"] is None and payload["ci"] == [None, None]


def test_counts_must_add_up() -> None:
    with pytest.raises(ValueError, match="does not add up"):
        Estimate(0.5, 3, 5, None, {"timeout": 1})


def test_by_group_reports_each_group_with_its_own_counts() -> None:
    values = [1.0, 0.0, None, 0.5, 1.0]
    groups = ["pricing", "legal", "pricing", "legal", "pricing"]
    reasons = [None, None, "timeout", None, None]
    result = by_group(values, groups, reasons, ci_method=None)
    assert list(result) == ["legal", "pricing"]
    assert result["legal"].value == pytest.approx(0.25)  # (0 + 0.5)/2
    assert (result["legal"].n, result["legal"].n_total) == (2, 2)
    assert result["pricing"].value == pytest.approx(1.0)  # (1 + 1)/2, the timeout left out
    assert (result["pricing"].n, result["pricing"].n_total, result["pricing"].missing) == (2, 3, {"timeout": 1})


def test_by_group_needs_one_label_per_value() -> None:
    with pytest.raises(ValueError, match="group labels"):
        by_group([1.0, 0.0], ["a"])
