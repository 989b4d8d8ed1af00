"""Golden set (dataset → **golden drafts** → dataset): the draft file a person reviews (``review.jsonl``): one draft case
(question, candidate pool, reference answer, keypoints, review state) or one conflict candidate per line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tuner.dataset.importers import NO_REFERENCE
from tuner.errors import UserError
from tuner.io import atomic_write_text, jsonl_objects, jsonl_text

DRAFT = "review.jsonl"
STATUSES = ("pending", "accepted", "rejected", "skipped", "no_answer")
REVIEWED = ("accepted", "rejected", "no_answer")
"""Statuses a person decided; ``pending`` and ``skipped`` cases are still to review. ``no_answer``: the question is fine
but nothing in the knowledge base answers it (searched beyond the pool): left out of the golden set, and counted."""
FOUND_BY = "found_by"
"""Key of a pool chunk a reviewer added from the search over the whole knowledge base (value ``"search"``)."""
CASES = "cases"
CONFLICTS = "conflicts"


def new_review() -> dict[str, Any]:
    """The review state of a fresh draft row: ``version`` counts saved changes (a write naming an older version is
    refused), ``updated`` is the time of the last one."""
    return {"status": "pending", "version": 0, "updated": None, "keypoints_reviewed": False}


def draft_case(
    case_id: str,
    question: str,
    pool: list[dict[str, Any]],
    dataset: Path,
    *,
    source: str,
    stratum: str,
    count: int | None = None,
    ground_truth: str = "",
    keypoints: Sequence[Sequence[str]] = (),
    relevant_doc_ids: Sequence[str] = (),
    category: str = "uncategorized",
    difficulty: str = "unspecified",
    extra: dict[str, Any] | None = None,
    pool_spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One draft case: what :func:`golden_row` turns into a ``golden.jsonl`` case once accepted. A chunk of the pool is
    pre-checked (``relevant_chunk_ids``) when its document is in ``relevant_doc_ids``; ``dataset`` is the knowledge
    base the pool came from, where an export writes its golden set; ``pool_spec`` (``{retrievers, depth}``) how the
    pool was built, which the export records as the labels' provenance."""
    relevant = list(dict.fromkeys(relevant_doc_ids))
    return {
        "id": case_id,
        "question": question,
        "source": source,
        "stratum": stratum,
        "count": count,
        "dataset": str(dataset.resolve()),
        "pool": pool,
        "relevant_chunk_ids": [c["chunk_id"] for c in pool if c["doc_id"] in relevant],
        "relevant_doc_ids": relevant,
        "ground_truth": ground_truth,
        "keypoints": [list(k) for k in keypoints],
        "category": category,
        "difficulty": difficulty,
        **(extra or {}),
        **({"pool_spec": pool_spec} if pool_spec is not None else {}),
        "review": new_review(),
    }


def draft_kind(rows: Sequence[dict[str, Any]], where: str) -> str:
    """:data:`CASES` for draft cases (``question`` and ``pool``), :data:`CONFLICTS` for conflict candidates
    (``doc_id``, ``text``, ``conflicts_with``); a file mixing them, or holding neither, is one line."""
    kinds = {CASES if {"question", "pool"} <= row.keys() else CONFLICTS if {"doc_id", "text", "conflicts_with"} <= row.keys()
             else "" for row in rows}
    if len(kinds) != 1 or "" in kinds:
        raise UserError(f"{where}: expected draft cases (question, pool) or conflict candidates (doc_id, text, conflicts_with), one kind per file")
    return kinds.pop()


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _row_problem(row: dict[str, Any]) -> str | None:
    """What makes a row (with its review state filled in) unusable, as the line's message; ``None`` when it is fine.
    A hand-edited review state is refused rather than reset: ``"Accepted"`` is not a status, ``"7"`` not a version."""
    review = row["review"]
    if not isinstance(review, dict):
        return "review must be an object"
    if review["status"] not in STATUSES:
        return f"review.status {review['status']!r} is not one of {', '.join(STATUSES)}"
    if not isinstance(review["version"], int) or isinstance(review["version"], bool) or review["version"] < 0:
        return f"review.version {review['version']!r} is not a whole number ≥ 0"
    if not isinstance(review.get("keypoints_reviewed", False), bool):
        return "review.keypoints_reviewed must be true or false"
    if {"question", "pool"} <= row.keys():
        for name in ("id", "question"):
            if not isinstance(row[name] if name in row else None, str) or not row[name]:
                return f"'{name}' must be non-empty text"
        if not isinstance(row["pool"], list):
            return "'pool' must be a list of chunks"
        for number, chunk in enumerate(row["pool"], start=1):
            if not isinstance(chunk, dict) or not all(isinstance(chunk.get(k), str) for k in ("chunk_id", "doc_id", "text")):
                return f"pool chunk {number} needs chunk_id, doc_id and text (text values)"
        if not _strings(row.get("relevant_chunk_ids", [])):
            return "'relevant_chunk_ids' must be a list of chunk ids"
        if not isinstance(row.get("ground_truth", ""), str):
            return "'ground_truth' must be text"
        if not isinstance(row.get("keypoints", []), list) or not all(_strings(k) for k in row.get("keypoints", [])):
            return "'keypoints' must be a list of lists of aliases"
    elif {"doc_id", "text", "conflicts_with"} <= row.keys() and not all(
            isinstance(row[k], str) and row[k] for k in ("doc_id", "text", "conflicts_with")):
        return "'doc_id', 'text' and 'conflicts_with' must be non-empty text"
    return None


def read_draft(path: Path) -> list[dict[str, Any]]:
    """The rows of a draft file, each with a review state (:func:`new_review` where a row has none yet, as in the
    candidates ``tuner golden conflicts`` writes); a malformed line, or a row the review app could not show or save
    (:func:`_row_problem`), is one line naming it."""
    if not path.is_file():
        raise UserError(f"{path}: draft file not found")
    numbered = []
    for number, row in jsonl_objects(path):
        review = row.get("review") or {}
        row["review"] = {**new_review(), **review} if isinstance(review, dict) else review
        numbered.append((number, row))
    if not numbered:
        raise UserError(f"{path}: empty draft file")
    draft_kind([row for _, row in numbered], str(path))
    for number, row in numbered:
        problem = _row_problem(row)
        if problem is not None:
            raise UserError(f"{path}:{number}: {problem}")
    return [row for _, row in numbered]


def write_draft(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Replace the draft file at once (temporary file and rename: a killed process leaves the old or the new file)."""
    atomic_write_text(path, jsonl_text(rows))


def golden_row(row: dict[str, Any]) -> dict[str, Any]:
    """The ``golden.jsonl`` case of an accepted draft case: the reviewed fields only (no pool, no review state);
    ``keypoints_reviewed`` is true when a person edited or accepted its keypoints; ``stratum`` is the draw the draft
    came from (the confirmation split stratifies on it). A case without a reference answer is a retrieval-only case."""
    case: dict[str, Any] = {
        "id": row["id"],
        "question": row["question"],
        "ground_truth": row.get("ground_truth", "").strip() or NO_REFERENCE,
        "keypoints": [list(k) for k in row.get("keypoints", []) if k],
        "relevant_doc_ids": list(row.get("relevant_doc_ids", [])),
        "category": row.get("category") or "uncategorized",
        "difficulty": row.get("difficulty") or "unspecified",
    }
    if row["review"].get("keypoints_reviewed") and case["keypoints"]:
        case["keypoints_reviewed"] = True
    if isinstance(row.get("stratum"), str) and row["stratum"].strip():
        case["stratum"] = row["stratum"]
    return case


def conflict_row(row: dict[str, Any]) -> dict[str, Any]:
    """The ``conflicts.jsonl`` entry of an accepted conflict candidate: the candidate as written, without its review state."""
    return {name: value for name, value in row.items() if name != "review"}
