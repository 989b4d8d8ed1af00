"""Robustness metrics on hand-built outcomes: every number below is computed by hand in the comments."""

from __future__ import annotations

import pytest

from tuner.chunking import Chunk
from tuner.dataset import GoldenCase
from tuner.evaluation.robustness import CaseOutcome, RobustnessReport, VariantOutcome, summarize
from tuner.generation import ABSTAIN, Answer
from tuner.judging import KeypointVerdict
from tuner.stats import wilson_interval
from tuner.variants import VariantContext

S, C, A = "supported", "contradicted", "absent"


def _verdicts(*labels: str) -> tuple[KeypointVerdict, ...]:
    return tuple(KeypointVerdict(label, "supported") for label in labels)


def _case(case_id: str, keypoints: int, category: str) -> GoldenCase:
    kps = tuple((f"{case_id}-fact{i}",) for i in range(keypoints))
    return GoldenCase(case_id, f"question {case_id}?", "answer", kps, ("doc",), category=category)


def _outcome(variant: str, answer: Answer, verdicts: tuple[KeypointVerdict, ...]) -> VariantOutcome:
    return VariantOutcome(variant, VariantContext(variant, ()), answer, verdicts)


def _ok(variant: str, *labels: str, text: str = "some answer") -> VariantOutcome:
    return _outcome(variant, Answer(text), _verdicts(*labels))


TIMEOUT = Answer.missing("timeout")

# faithful per case          v0    v1              v3               v4
#   c1 (pricing, 2 kps)      1     1               0.5 (misled)     0   "I don't know."
#   c2 (pricing)             1     1               0                0   a wrong answer
#   c3 (policy)              0     0               0                0   "not enough information"
#   c4 (policy)              1     parse failure   generator timeout generator timeout
OUTCOMES = [
    CaseOutcome(
        _case("c1", 2, "pricing"),
        {"v0": _ok("v0", S, S), "v1": _ok("v1", S, S), "v3": _ok("v3", S, C), "v4": _ok("v4", A, A, text=ABSTAIN)},
    ),
    CaseOutcome(
        _case("c2", 1, "pricing"),
        {"v0": _ok("v0", S), "v1": _ok("v1", S), "v3": _ok("v3", A), "v4": _ok("v4", A, text="It is 42.")},
    ),
    CaseOutcome(
        _case("c3", 1, "policy"),
        {"v0": _ok("v0", A), "v1": _ok("v1", A), "v3": _ok("v3", A), "v4": _ok("v4", A, text="Not enough information.")},
    ),
    CaseOutcome(
        _case("c4", 1, "policy"),
        {
            "v0": _ok("v0", S),
            "v1": _outcome("v1", Answer("an answer"), (KeypointVerdict(None, "supported", "", "parse_failure"),)),
            "v3": _outcome("v3", TIMEOUT, ()),
            "v4": _outcome("v4", TIMEOUT, ()),
        },
    ),
]
VARIANTS = ("v0", "v1", "v3", "v4")


@pytest.fixture(scope="module")
def report() -> RobustnessReport:
    return summarize(OUTCOMES, VARIANTS, {"generator": 13, "judge": 30, "total": 43})


def test_faithful_is_the_mean_over_scored_cases_with_n_of_n(report: RobustnessReport) -> None:
    v0, v3 = report.variants["v0"].faithful, report.variants["v3"].faithful
    assert (v0.value, v0.n, v0.n_total, v0.missing) == (0.75, 4, 4, {})
    # (0.5 + 0 + 0) / 3: the timed-out case is missing, not a zero
    assert v3.value == pytest.approx(1 / 6)
    assert (v3.n, v3.n_total, v3.missing) == (3, 4, {"timeout": 1})


def test_delta_is_a_ratio_of_means_over_cases_scored_on_both_sides(report: RobustnessReport) -> None:
    v3 = report.variants["v3"]
    # cases c1..c3: mean F0 = 2/3, mean F3 = 1/6, Δ = (2/3 − 1/6) / (2/3) = 0.75. Keeping c4's v0 score
    # would give (3/4 − 1/6) / (3/4) ≈ 0.778; scoring its timeout as 0 would give (3/4 − 1/8) / (3/4) ≈ 0.833.
    assert v3.delta_faithful == pytest.approx(0.75)
    assert v3.delta_n == 3
    assert v3.grade == "sensitive"
    assert v3.delta_ci is not None and v3.delta_ci[0] <= 0.75 <= v3.delta_ci[1]
    v1 = report.variants["v1"]
    # c4 is missing at v1 (parse failure): mean F0 = mean F1 = 2/3 over c1..c3
    assert v1.delta_faithful == pytest.approx(0.0) and v1.grade == "robust" and v1.delta_n == 3
    assert v1.faithful.missing == {"parse_failure": 1}


def test_correct_and_its_delta_sit_next_to_faithful(report: RobustnessReport) -> None:
    v0, v3 = report.variants["v0"], report.variants["v3"]
    # correct per case at v0: c1 1, c2 1, c3 1 (absent is not wrong), c4 1 → 1.0 over 4
    assert v0.correct.value == pytest.approx(1.0) and v0.correct.n == 4
    # at v3: c1 (S, C) 0.5, c2 absent 1, c3 absent 1, c4 timeout → 2.5 / 3
    assert v3.correct.value == pytest.approx(2.5 / 3)
    # Δcorrect over c1..c3: (1 − 2.5/3) / 1 = 1/6 — smaller than Δfaithful 0.75: c2 said less, only c1 said something wrong
    assert v3.delta_correct == pytest.approx(1 / 6)
    assert v3.delta_correct_ci is not None and v3.delta_correct_ci[0] <= 1 / 6 <= v3.delta_correct_ci[1]
    data = report.to_dict()["variants"]["v3"]
    assert data["correct"] == pytest.approx(2.5 / 3) and data["delta_correct"] == pytest.approx(1 / 6)
    assert report.variants["v0"].delta_correct is None


def test_misled_counts_supported_turned_contradicted(report: RobustnessReport) -> None:
    misled = report.variants["v3"].misled_rate
    assert misled is not None
    # c1 misled (supported → contradicted); c2 lost its keypoint (supported → absent): not misled; c3 not; c4 missing
    assert (misled.value, misled.n, misled.n_total) == (pytest.approx(1 / 3), 3, 4)
    assert report.variants["v0"].misled_rate is None


def test_rejection_is_measured_at_v4_only(report: RobustnessReport) -> None:
    rejection = report.variants["v4"].rejection_rate
    assert rejection is not None
    # c1 abstains, c2 answers, c3 abstains, c4 timed out
    assert (rejection.value, rejection.n, rejection.n_total, rejection.missing) == (
        pytest.approx(2 / 3),
        3,
        4,
        {"timeout": 1},
    )
    assert report.variants["v3"].rejection_rate is None
    # v4's Δ (1.0 here) is reported but not graded: with no relevant context it is ~1 by construction
    assert report.variants["v4"].delta_faithful == pytest.approx(1.0)
    assert report.variants["v4"].grade is None


def test_buckets_and_undefined_delta(report: RobustnessReport) -> None:
    pricing = report.by_category["pricing"]["v3"]
    # c1, c2: F0 = (1, 1), F3 = (0.5, 0) → Δ = 0.75
    assert pricing.delta_faithful == pytest.approx(0.75) and pricing.delta_ci is None
    policy = report.by_category["policy"]["v3"]
    # only c3 is scored on both sides and its F0 is 0: Δ is undefined, reported as None, never 0
    assert policy.delta_faithful is None and policy.grade is None and policy.delta_n == 1


def test_json_shape_and_missing_by_reason(report: RobustnessReport) -> None:
    data = report.to_dict()
    assert set(data) == {"variants", "by_category", "by_difficulty", "missing", "calls", "warnings"}
    assert data["warnings"] == [] and data["variants"]["v3"]["shortfall_warning"] is None
    v3 = data["variants"]["v3"]
    assert {"faithful", "delta_faithful", "ci", "misled_rate", "n", "n_total"} <= set(v3)
    assert (v3["n"], v3["n_total"], v3["n_paired"]) == (3, 4, 3)
    assert data["missing"] == {"v1": {"parse_failure": 1}, "v3": {"timeout": 1}, "v4": {"timeout": 1}}
    assert data["calls"]["total"] == 43


def _context(variant: str, *sources: str) -> VariantContext:
    return VariantContext(variant, tuple(Chunk(f"{variant}-{i}", f"d{i}", 0, 1, "x", source=s) for i, s in enumerate(sources)))


def test_v3_delta_is_split_into_exposure_and_susceptibility() -> None:
    # case  f0  f3   v3 context                  exposed
    #  e1   1   0    corpus + conflict           yes
    #  e2   1   1    conflict                    yes
    #  u1   1   1    v0's context                no
    #  u2   1   1    corpus, but not v0's        no (changed: its context moved without a conflict)
    #  m    1   timeout, conflict                yes (exposure is a retrieval fact: counted; not paired for Δ)
    # exposure 3/5; over the 4 paired: Σ f0 = 4, exposed Σ f0 = 2 → at risk 0.5; exposed loss 1 → susceptibility 0.5;
    # Δ = (4 − 3) / 4 = 0.25 = 0.5 · 0.5 + 0
    v0 = _context("v0", "corpus")
    outcomes = [
        CaseOutcome(_case(name, 1, "pricing"), {
            "v0": VariantOutcome("v0", v0, Answer("a"), _verdicts(S)),
            "v3": VariantOutcome("v3", context, answer, verdicts),
        })
        for name, context, answer, verdicts in [
            ("e1", _context("v3", "corpus", "conflict"), Answer("b"), _verdicts(A)),
            ("e2", _context("v3", "conflict"), Answer("a"), _verdicts(S)),
            ("u1", v0, Answer("a"), _verdicts(S)),
            ("u2", _context("u2", "corpus"), Answer("a"), _verdicts(S)),
            ("m", _context("v3", "conflict"), TIMEOUT, ()),
        ]
    ]
    v3 = summarize(outcomes, ("v3",)).variants["v3"]
    assert v3.exposure is not None and (v3.exposure.successes, v3.exposure.n_total) == (3, 5)
    assert (v3.at_risk, v3.susceptibility, v3.delta_faithful) == (0.5, 0.5, 0.25)
    assert v3.unexposed_changed == 1
    data = v3.to_dict()
    assert data["exposure"] == {"value": 0.6, "n": 3, "n_total": 5, "ci": list(wilson_interval(3, 5))}
    assert (data["at_risk"], data["susceptibility"], data["unexposed_loss"], data["exposed_paired"]) == (0.5, 0.5, 0.0, 2)
    # no case exposed: susceptibility is null, not 0
    quiet = summarize(outcomes[2:4], ("v3",)).variants["v3"].to_dict()
    assert quiet["exposure"]["n"] == 0 and quiet["susceptibility"] is None and quiet["at_risk"] == 0.0
    # only v3 carries conflicts: no other variant reports an exposure
    assert "exposure" not in summarize(OUTCOMES, VARIANTS).to_dict()["variants"]["v1"]
