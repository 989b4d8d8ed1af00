"""Golden set (dataset → **golden drafts** → dataset): the first mile: questions sampled from query logs or synthesized
from the corpus, each with a candidate pool to label, and their review in a local web app; accepted cases become
``golden.jsonl`` (accepted conflict candidates ``conflicts.jsonl``)."""

from tuner.golden._dedupe import NEAR_DUPLICATE, near_duplicate_groups, normalize_question, shingles
from tuner.golden._draft import DRAFT, STATUSES, draft_case, golden_row, read_draft, write_draft
from tuner.golden._log import (
    KNOWN_BAD, STRATA, LogDrafts, LoggedQuestion, Sampling, drafts_from_log, merge_questions, parse_columns, read_log,
    sample_questions, sampling_from,
)
from tuner.golden._pool import DEFAULT_DEPTH, POOL_RETRIEVERS, build_pools

__all__ = [
    "DEFAULT_DEPTH",
    "DRAFT",
    "KNOWN_BAD",
    "NEAR_DUPLICATE",
    "POOL_RETRIEVERS",
    "STATUSES",
    "STRATA",
    "LogDrafts",
    "LoggedQuestion",
    "Sampling",
    "build_pools",
    "draft_case",
    "drafts_from_log",
    "golden_row",
    "merge_questions",
    "near_duplicate_groups",
    "normalize_question",
    "parse_columns",
    "read_draft",
    "read_log",
    "sample_questions",
    "sampling_from",
    "shingles",
    "write_draft",
]
