"""The RAGStress metrics by hand: Δ with Newcombe's paired interval, ρ, misled, Wilson, Γ, severity trend, hypotheses."""

from __future__ import annotations

import math

import pytest

from tuner.settings import RetrievalSettings
from tuner.stats import Estimate, wilson_interval
from tuner.stress import (
    NO_RETRIEVAL,
    CaseResult,
    Condition,
    PairedTable,
    PositionResult,
    StressComparison,
    StressReport,
    case_gamma,
    check_hypotheses,
    compare_with_clean,
    delta,
    empty_rate,
    gamma,
    misled_rate,
    paired_table,
    severity_trend,
    stress_json,
    stress_markdown,
)


def test_wilson_by_hand() -> None:
    # 9/12: centre = (0.75 + z²/24)/(1 + z²/12) = 0.689376, half = z·√(0.75·0.25/12 + z²/576)/(1 + z²/12) = 0.221681
    assert wilson_interval(9, 12) == pytest.approx((0.467695, 0.911058), abs=1e-5)
    # 7/12: centre 0.563125, half 0.243617
    assert wilson_interval(7, 12) == pytest.approx((0.319508, 0.806742), abs=1e-5)


def test_paired_table_skips_missing_and_counts_each_cell() -> None:
    table = paired_table([True, True, False, False, True, None], [True, False, True, False, None, True])
    assert table == PairedTable(both=1, lost=1, gained=1, neither=1) and table.n == 4
    with pytest.raises(ValueError, match="2 clean outcomes but 1"):
        paired_table([True, False], [True])


def test_delta_is_clean_minus_condition_with_newcombe_interval_by_hand() -> None:
    d = delta(PairedTable(both=6, lost=3, gained=1, neither=2))
    # p₁ = 9/12 (clean), p₂ = 7/12: Δ = 2/12, positive = a loss
    assert d.value == pytest.approx(1 / 6) and d.n == 12
    l1, u1, l2, u2 = 0.467695, 0.911058, 0.319508, 0.806742
    phi = (6 * 2 - 3 * 1) / math.sqrt(9 * 3 * 7 * 5)  # 0.292769
    lower = 1 / 6 - math.sqrt((0.75 - l1) ** 2 - 2 * phi * (0.75 - l1) * (u2 - 7 / 12) + (u2 - 7 / 12) ** 2)
    upper = 1 / 6 + math.sqrt((u1 - 0.75) ** 2 - 2 * phi * (u1 - 0.75) * (7 / 12 - l2) + (7 / 12 - l2) ** 2)
    assert (lower, upper) == pytest.approx((-0.137765, 0.432492), abs=1e-5)
    assert d.ci == pytest.approx((lower, upper), abs=1e-5)
    # a gain is negative; with no discordant pair Δ = 0 and no paired case gives no value
    assert delta(PairedTable(both=2, lost=0, gained=3, neither=1)).value == pytest.approx(-0.5)
    assert delta(PairedTable(0, 0, 0, 0)).value is None and delta(PairedTable(0, 0, 0, 0)).ci is None


def test_delta_interval_stays_inside_minus_one_one() -> None:
    d = delta(PairedTable(both=0, lost=5, gained=0, neither=0))
    assert d.value == 1.0 and d.ci is not None and -1.0 <= d.ci[0] < 1.0 and d.ci[1] == 1.0


def test_misled_is_right_under_clean_then_wrong_over_right_under_clean() -> None:
    clean = [True, True, True, False, True]
    condition = [False, True, None, False, False]
    rate = misled_rate(clean, condition, [None, None, "timeout", None, None])
    # right under clean: cases 0, 1, 2, 4; case 2 is missing; 0 and 4 went wrong: 2/3
    assert (rate.value, rate.n, rate.n_total, rate.missing) == (pytest.approx(2 / 3), 3, 4, {"timeout": 1})
    assert rate.ci == pytest.approx((0.207655, 0.938510), abs=1e-5)
    assert rate.ci == wilson_interval(2, 3)


def test_rho_is_the_share_of_queries_with_nothing_retrieved() -> None:
    rho = empty_rate([3, 0, 5, 0, 0])
    assert (rho.value, rho.n) == (pytest.approx(0.6), 5) and rho.ci == wilson_interval(3, 5)


def test_gamma_is_the_difference_of_severity_averaged_deltas() -> None:
    a = {"subtle": 0.30, "moderate": 0.10, "obvious": 0.20}
    b = {"subtle": 0.10, "moderate": 0.00, "obvious": None}
    # severities present in both: subtle, moderate → (0.30 + 0.10)/2 − (0.10 + 0.00)/2 = 0.15
    assert gamma(a, b) == pytest.approx(0.15)
    assert gamma(b, a) == pytest.approx(-0.15)
    assert gamma(a, {}) is None


def test_severity_trend_is_stated_not_assumed() -> None:
    assert severity_trend([0.1, 0.2, 0.3]) == "increasing"
    assert severity_trend([0.3, 0.3, 0.1]) == "decreasing"
    assert severity_trend([0.1, 0.4, 0.2]) == "not monotonic"
    assert severity_trend([0.2, 0.2, 0.2]) == "flat"
    assert severity_trend([None, 0.2, None]) == "n/a"


def _cases(outcomes: str, retrieved: int = 3) -> list[CaseResult]:
    """'1' right, '0' wrong, '-' missing (timeout)."""
    return [
        CaseResult(f"q{i}", None if o == "-" else o == "1", "timeout" if o == "-" else None, (), retrieved)
        for i, o in enumerate(outcomes)
    ]


def _report(matrix: dict[str, str], clean_outcomes: str = "11111111", no_retrieval: str = "11110000") -> StressReport:
    clean = _cases(clean_outcomes)
    conditions = [Condition(NO_RETRIEVAL, None), Condition("clean", "clean")]
    conditions += [Condition(name, "only:" + name, *name.split("/")) for name in matrix]
    outcomes = {NO_RETRIEVAL: _cases(no_retrieval, retrieved=0), "clean": clean}
    outcomes.update({name: _cases(o) for name, o in matrix.items()})
    results = {c.name: compare_with_clean(c, outcomes[c.name], clean) for c in conditions}
    positions = {"end": PositionResult("end", Estimate(None, 0, 0))}
    return StressReport("hand", RetrievalSettings(), results, (), positions, 2)  # type: ignore[arg-type]


def test_hypotheses_by_hand() -> None:
    report = _report({
        "factual_corruption/subtle": "00001111",       # Δ 0.5
        "factual_corruption/moderate": "00000011",     # Δ 0.75
        "factual_corruption/obvious": "00111111",      # Δ 0.25  → Δ̄ 0.5, not monotonic
        "numeric_typo/subtle": "01111111",             # Δ 0.125
        "numeric_typo/moderate": "0011111-",           # Δ 2/7 on the 7 paired cases
        "contradiction_injection/moderate": "11111111",  # Δ 0
        "relevance_poisoning/moderate": "01111111",    # Δ 0.125
    })
    h = check_hypotheses(report)
    assert h.type_delta["factual_corruption"] == pytest.approx(0.5)
    assert h.type_delta["numeric_typo"] == pytest.approx((0.125 + 2 / 7) / 2)
    assert [(c.higher, c.lower, c.holds) for c in h.order] == [
        ("factual_corruption", "numeric_typo", True), ("contradiction_injection", "relevance_poisoning", False),
    ]
    assert h.observed_order == ["factual_corruption", "numeric_typo", "relevance_poisoning", "contradiction_injection"]
    assert h.severity == {"factual_corruption": "not monotonic", "numeric_typo": "increasing",
                          "contradiction_injection": "n/a", "relevance_poisoning": "n/a"}
    # no retrieval: 4/8 = 50%; below it: factual moderate 2/8 and obvious... 6/8 is not; subtle 4/8 is not (equal)
    assert h.no_retrieval_accuracy == 0.5
    assert [(b.condition, b.accuracy) for b in h.below_no_retrieval] == [("factual_corruption/moderate", 0.25)]
    assert not h.below_no_retrieval[0].disjoint  # Wilson(2, 8) upper 0.59 > Wilson(4, 8) lower 0.22
    ρ = report.conditions[NO_RETRIEVAL].rho
    assert (ρ.value, ρ.n) == (1.0, 8)
    markdown = stress_markdown(report)
    assert "Δ̄ contradiction_injection > Δ̄ relevance_poisoning: does NOT hold" in markdown
    # Δ = 6/8; φ = 0 (no case right under the condition only): lower = 0.75 − √((1 − 0.676)² + (0.591 − 0.25)²)
    assert "| factual_corruption/moderate | 25.0% [7.1%, 59.1%] (8/8) | +75.0 [+28.0, +92.9] pts |" in markdown
    data = stress_json(report)
    assert data["hypotheses"]["order"][0] == {"higher": "factual_corruption", "lower": "numeric_typo", "holds": True}  # type: ignore[index]


def test_case_gamma_splits_gamma_into_per_case_shares_by_hand() -> None:
    # case 0: (1−0) − (1−1) under both severities → 1; case 1: (1−1) − (0−0) → 0; case 2: a missing outcome → None
    shares = case_gamma([True, True, True], [[False, True, False], [False, True, True]],
                        [True, False, None], [[True, False, True], [True, False, True]])
    assert shares == [1.0, 0.0, None]
    with pytest.raises(ValueError, match="same cases"):
        case_gamma([True], [[True, False]], [True], [[True]])


def test_gamma_interval_bootstraps_the_cases_scored_everywhere() -> None:
    first = _report({"numeric_typo/subtle": "00001111", "numeric_typo/moderate": "00000011"})
    second = _report({"numeric_typo/subtle": "01111111", "numeric_typo/moderate": "0011111-"})
    comparison = StressComparison(first, second)
    diff = comparison.gamma_intervals()["numeric_typo"]
    assert diff.value == pytest.approx(comparison.gamma()["numeric_typo"])
    assert diff.value == pytest.approx((0.5 + 0.75) / 2 - (0.125 + 2 / 7) / 2)
    assert diff.n == 7  # case q7 is missing under numeric_typo/moderate of the second
    # clean is right everywhere, so g_i = ½ Σ_s (r₂ᵢₛ − r₁ᵢₛ): q0 0, q1 ½, q2 1, q3 1, q4 ½, q5 ½, q6 0 → mean 3.5/7 = 0.5,
    # which differs from Γ (0.42) only because q7 is left out of the interval
    assert diff.ci is not None and 0.0 <= diff.ci[0] < 0.5 < diff.ci[1] <= 1.0
    same = StressComparison(first, first).gamma_intervals()["numeric_typo"]
    assert (same.value, same.ci, same.n) == (0.0, (0.0, 0.0), 8)
    assert "| numeric_typo | +42.0 [" in stress_markdown(comparison)
    assert stress_json(comparison)["gamma_interval"]["numeric_typo"]["n"] == 7  # type: ignore[index]


def test_gamma_interval_refuses_reports_over_other_cases() -> None:
    first = _report({"numeric_typo/subtle": "00001111"})
    other = _report({"numeric_typo/subtle": "0000111"}, clean_outcomes="1111111", no_retrieval="1111000")
    with pytest.raises(ValueError, match="same cases"):
        StressComparison(first, other).gamma_intervals()
