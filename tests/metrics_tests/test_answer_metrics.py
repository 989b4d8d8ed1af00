from __future__ import annotations

from dataclasses import dataclass

import pytest

from tuner.metrics import ABSTENTION_PHRASES, contradicted_share, correct, faithful, misled, missing_reason, rejected
from tuner.verdicts import KeypointVerdict


@dataclass(frozen=True)
class Verdict:
    answer: str | None
    missing_reason: str | None = None
    context: str | None = "supported"


S, C, A = Verdict("supported"), Verdict("contradicted"), Verdict("absent")
TIMEOUT = Verdict(None, "timeout")


def test_faithful_is_the_share_of_supported_keypoints() -> None:
    assert faithful([S, S, C, A]) == 0.5  # 2 supported / 4 keypoints
    assert faithful([S]) == 1.0
    assert faithful([A, C]) == 0.0  # a real zero, not a missing case


def test_a_keypoint_the_context_does_not_support_is_not_faithful() -> None:
    from_elsewhere = Verdict("supported", context="absent")  # stated, but no passage holds it
    assert faithful([S, from_elsewhere]) == 0.5
    assert correct([S, from_elsewhere]) == 1.0  # not wrong either
    context_missing = Verdict("supported", "timeout", context=None)
    assert faithful([S, context_missing]) is None and missing_reason([S, context_missing]) == "timeout"


def test_contradicted_share() -> None:
    assert contradicted_share([S, C, C, A]) == 0.5  # 2 contradicted / 4
    assert contradicted_share([S, A, A]) == 0.0


def test_any_missing_keypoint_makes_the_case_missing_with_its_reason() -> None:
    verdicts = [S, TIMEOUT, Verdict(None, "parse failure")]
    assert faithful(verdicts) is None
    assert contradicted_share(verdicts) is None
    assert missing_reason(verdicts) == "timeout"  # the first missing verdict names the reason
    assert missing_reason([S, Verdict(None)]) == "missing"
    assert missing_reason([S, C]) is None


def test_answer_metrics_reject_unknown_labels_and_empty_verdicts() -> None:
    with pytest.raises(ValueError, match="unknown answer verdict"):
        faithful([S, Verdict("yes")])
    with pytest.raises(ValueError, match="at least one keypoint"):
        faithful([])


@pytest.mark.parametrize(
    ("v0", "v", "expected"),
    [
        ([S, S], [S, C], True),  # keypoint 2: supported → contradicted
        ([S, S], [A, A], False),  # lost, not contradicted: a faithfulness drop but not "misled"
        ([C, S], [C, S], False),  # already wrong when clean: the noise did not mislead
        ([A, S], [C, S], False),  # absent → contradicted: not right at v0
        ([S, A], [A, C], False),  # keypoints are paired by position
        ([S, S], [S, TIMEOUT], None),  # missing on the variant side
        ([TIMEOUT, S], [S, C], None),  # missing on the clean side
    ],
)
def test_misled_per_keypoint(v0: list[Verdict], v: list[Verdict], expected: bool | None) -> None:
    assert misled(v0, v) is expected


def test_misled_needs_the_same_keypoints_on_both_sides() -> None:
    with pytest.raises(ValueError, match="keypoint counts differ"):
        misled([S, S], [S])


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "I DON’T KNOW",  # curly apostrophe and capitals
        "Sorry, I dont know the answer.",  # apostrophe dropped
        "The answer cannot be determined from the context provided.",
        "There is not enough\ninformation to say.",  # line break inside the phrase
    ],
)
def test_rejected_matches_normalized_abstentions(answer: str) -> None:
    assert rejected(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "The warranty lasts 24 months.",
        "",  # empty answers are missing, not abstentions
        "We know the fee is 5 EUR.",
        "It is not enough informationally dense",  # phrases match whole words only
    ],
)
def test_rejected_leaves_real_answers_alone(answer: str) -> None:
    assert not rejected(answer)


def test_rejected_uses_the_configured_phrases() -> None:
    assert rejected("Keine Angabe.", phrases=["keine angabe"])
    assert not rejected("I don't know.", phrases=["keine angabe"])
    assert "i don't know" in ABSTENTION_PHRASES


def test_rejected_refuses_a_phrase_that_would_match_everything() -> None:
    with pytest.raises(ValueError, match="empty after normalization"):
        rejected("anything", phrases=["..."])


def test_correct_is_lenient_about_leaving_a_keypoint_out() -> None:
    # supported, absent, contradicted: faithful 1/3 (only the stated one), correct 2/3 (all but the wrong one)
    verdicts = [KeypointVerdict("supported", "supported"), KeypointVerdict("absent", "absent"),
                KeypointVerdict("contradicted", "supported")]
    assert faithful(verdicts) == pytest.approx(1 / 3)
    assert correct(verdicts) == pytest.approx(2 / 3)
    # an abstention leaves every keypoint absent: correct, never faithful
    assert correct([KeypointVerdict("absent", "supported")]) == 1.0
    assert correct([KeypointVerdict(None, "supported", "", "timeout")]) is None
