"""Golden set (dataset → **golden drafts** → dataset): the first mile: questions sampled from query logs or synthesized
from the corpus, each with a candidate pool to label; keypoints filled from reference answers (:func:`fill_keypoints`);
stale versions found in a knowledge base (:func:`find_conflicts`); and their review in a local web app, where accepted
cases become ``golden.jsonl`` (accepted conflict candidates ``conflicts.jsonl``).

The web app is :mod:`tuner.golden.review_app`, imported only by ``tuner golden review`` (it needs the ``serve`` extra)."""

from tuner.errors import StaleVersion
from tuner.golden._conflicts import (
    CONFLICT_NEAR_DUPLICATE, DENSE_NEIGHBOURS, SENTENCE_MATCH, ConflictCandidate, answer_value, dense_pairs, disagreements, family_summary, find_conflicts, near_duplicate_pairs,
    question_conflicts,
)
from tuner.golden._ask import Spend
from tuner.golden._keypoints import (
    BACKUP_SUFFIX, SHORT_ANSWER, KeypointsReport, PendingCase, aliases_found, fill_keypoints, keypoint_prompt, parse_keypoints, pending_cases,
    rule_keypoints,
)
from tuner.golden._dedupe import NEAR_DUPLICATE, near_duplicate_groups, normalize_question, question_groups, shingles
from tuner.golden._draft import (
    DRAFT, FOUND_BY, STATUSES, DraftCase, DraftConflict, DraftRow, PoolChunk, ReviewState, draft_case, golden_row,
    write_draft,
)
from tuner.golden._journal import load_draft, read_draft
from tuner.golden._log import (
    KNOWN_BAD, STRATA, LogDrafts, LoggedQuestion, LogRows, Sampling, drafts_from_log, merge_questions, parse_columns, read_log,
    sample_questions, sampling_from,
)
from tuner.golden._pool import (
    DEFAULT_DEPTH, POOL_RETRIEVERS, SEARCH_DEPTH, KnowledgeSearch, build_pools, choose_pool, default_pool, embedding_covers, embedding_model, parse_pool,
)
from tuner.golden._synth import CATEGORIES, PROGRESS, SynthPlan, SynthRun, Synthesizer, estimate_tokens, plan_sources, synth_drafts, synth_prompt
from tuner.golden._synth import FILTERS as SYNTH_FILTERS
from tuner.golden._review import ACTIONS, COMPACT_EVERY, Edit, Export, ReviewStore, draft_labels, highlight, merged_provenance

__all__ = [
    "ACTIONS",
    "BACKUP_SUFFIX",
    "CATEGORIES",
    "COMPACT_EVERY",
    "CONFLICT_NEAR_DUPLICATE",
    "DEFAULT_DEPTH",
    "DENSE_NEIGHBOURS",
    "DRAFT",
    "FOUND_BY",
    "KNOWN_BAD",
    "NEAR_DUPLICATE",
    "POOL_RETRIEVERS",
    "PROGRESS",
    "SEARCH_DEPTH",
    "SENTENCE_MATCH",
    "SHORT_ANSWER",
    "STATUSES",
    "STRATA",
    "SYNTH_FILTERS",
    "ConflictCandidate",
    "DraftCase",
    "DraftConflict",
    "DraftRow",
    "Edit",
    "Export",
    "KeypointsReport",
    "KnowledgeSearch",
    "LogDrafts",
    "LogRows",
    "LoggedQuestion",
    "ReviewStore",
    "Sampling",
    "StaleVersion",
    "PendingCase",
    "PoolChunk",
    "ReviewState",
    "Spend",
    "SynthPlan",
    "SynthRun",
    "Synthesizer",
    "aliases_found",
    "build_pools",
    "choose_pool",
    "default_pool",
    "dense_pairs",
    "disagreements",
    "draft_case",
    "draft_labels",
    "drafts_from_log",
    "embedding_covers",
    "embedding_model",
    "estimate_tokens",
    "family_summary",
    "fill_keypoints",
    "find_conflicts",
    "answer_value",
    "question_conflicts",
    "golden_row",
    "highlight",
    "keypoint_prompt",
    "load_draft",
    "merge_questions",
    "merged_provenance",
    "near_duplicate_groups",
    "near_duplicate_pairs",
    "normalize_question",
    "question_groups",
    "parse_columns",
    "parse_keypoints",
    "parse_pool",
    "pending_cases",
    "plan_sources",
    "read_draft",
    "read_log",
    "rule_keypoints",
    "sample_questions",
    "sampling_from",
    "shingles",
    "synth_drafts",
    "synth_prompt",
    "write_draft",
]
