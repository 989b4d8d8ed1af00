"""Golden set (dataset → **golden drafts** → dataset): the first mile: keypoints filled from reference answers
(:func:`fill_keypoints`) and stale versions found in a knowledge base (:func:`find_conflicts`)."""

from tuner.golden._conflicts import (
    CONFLICT_NEAR_DUPLICATE, SENTENCE_MATCH, ConflictCandidate, disagreements, family_summary, find_conflicts, near_duplicate_pairs,
)
from tuner.golden._keypoints import BACKUP_SUFFIX, SHORT_ANSWER, KeypointsReport, fill_keypoints, rule_keypoints

__all__ = [
    "BACKUP_SUFFIX",
    "CONFLICT_NEAR_DUPLICATE",
    "SENTENCE_MATCH",
    "SHORT_ANSWER",
    "ConflictCandidate",
    "KeypointsReport",
    "disagreements",
    "family_summary",
    "fill_keypoints",
    "find_conflicts",
    "near_duplicate_pairs",
    "rule_keypoints",
]
