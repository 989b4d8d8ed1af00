"""Golden set (dataset → **golden drafts** → dataset): the draft file a person reviews (``review.jsonl``): one draft case
(question, candidate pool, reference answer, keypoints, review state) or one conflict candidate per line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from tuner.dataset.importers import NO_REFERENCE
from tuner.errors import UserError
from tuner.io import atomic_write_text, jsonl_text, numbered_objects

DRAFT = "review.jsonl"
Status = Literal["pending", "accepted", "rejected", "skipped", "no_answer"]
STATUSES: tuple[Status, ...] = get_args(Status)
REVIEWED = ("accepted", "rejected", "no_answer")
"""Statuses a person decided; ``pending`` and ``skipped`` cases are still to review. ``no_answer``: the question is fine
but nothing in the knowledge base answers it (searched beyond the pool): left out of the golden set, and counted."""
FOUND_BY = "found_by"
"""Key of a pool chunk a reviewer added from the search over the whole knowledge base (value ``"search"``)."""
CASES = "cases"
CONFLICTS = "conflicts"


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
        "review": ReviewState().model_dump(mode="json"),
    }


def draft_kind(rows: Sequence[dict[str, Any]], where: str) -> str:
    """:data:`CASES` for draft cases (``question`` and ``pool``), :data:`CONFLICTS` for conflict candidates
    (``doc_id``, ``text``, ``conflicts_with``); a file mixing them, or holding neither, is one line."""
    kinds = {CASES if {"question", "pool"} <= row.keys() else CONFLICTS if {"doc_id", "text", "conflicts_with"} <= row.keys()
             else "" for row in rows}
    if len(kinds) != 1 or "" in kinds:
        raise UserError(f"{where}: expected draft cases (question, pool) or conflict candidates (doc_id, text, conflicts_with), one kind per file")
    return kinds.pop()


_NonEmpty = Annotated[str, StringConstraints(min_length=1)]


class ReviewState(BaseModel):
    """A row's review: ``status``, ``version`` (saved changes so far: a write naming an older one is refused),
    ``updated`` (the time of the last one) and whether a person edited or accepted its keypoints. Strict: a hand-edited
    ``"Accepted"`` or ``"7"`` is refused rather than reset."""

    model_config = ConfigDict(extra="forbid", strict=True)
    status: Status = "pending"
    version: int = Field(default=0, ge=0)
    updated: str | None = None
    keypoints_reviewed: bool = False


class PoolChunk(BaseModel):
    """A candidate chunk of a draft case: its ids and text, its rank in each pool run (1 = best, ``None`` = not in that
    run's top depth; ``{}`` for a chunk found by search, ``found_by: "search"``)."""

    model_config = ConfigDict(extra="allow", strict=True)
    doc_id: str
    chunk_id: str
    title: str = ""
    text: str
    ranks: dict[str, int | None] = Field(default_factory=dict)
    found_by: Literal["search"] | None = None


class PoolSpec(BaseModel):
    """How a draft's pool was built: its retrievers and depth (``None`` where unknown)."""

    model_config = ConfigDict(extra="allow", strict=True)
    retrievers: list[str] = Field(default_factory=list)
    depth: int | None = None


class _Row(BaseModel):
    review: ReviewState = Field(default_factory=ReviewState)

    @property
    def key(self) -> str:
        raise NotImplementedError

    def record(self) -> dict[str, Any]:
        """The row as its draft line holds it: the keys it was read or made with (extras kept), and its review state."""
        return {**self.model_dump(mode="json", exclude_unset=True), "review": self.review.model_dump(mode="json")}


class DraftCase(_Row):
    """A draft case (:func:`draft_case`); keys the model does not name (``variants``, ``source_chunks``, ...) are kept."""

    model_config = ConfigDict(extra="allow", strict=True)
    id: _NonEmpty
    question: _NonEmpty
    source: str = ""
    stratum: str | None = None
    count: int | None = None
    dataset: str | None = None
    pool: list[PoolChunk]
    relevant_chunk_ids: list[str] = Field(default_factory=list)
    relevant_doc_ids: list[str] = Field(default_factory=list)
    ground_truth: str = ""
    keypoints: list[list[str]] = Field(default_factory=list)
    category: str = "uncategorized"
    difficulty: str = "unspecified"
    pool_spec: PoolSpec | None = None

    @property
    def key(self) -> str:
        return self.id


class DraftConflict(_Row):
    """A conflict candidate (a ``conflicts.jsonl`` row as ``tuner golden conflicts`` writes it) under review."""

    model_config = ConfigDict(extra="allow", strict=True)
    doc_id: _NonEmpty
    text: _NonEmpty
    conflicts_with: _NonEmpty
    kind: str | None = None
    severity: str | None = None
    wrong_values: list[str | int | float] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return self.doc_id


DraftRow = DraftCase | DraftConflict
_MODELS: dict[str, type[DraftCase] | type[DraftConflict]] = {CASES: DraftCase, CONFLICTS: DraftConflict}


def validation_problem(error: ValidationError) -> str:
    """The first problem of a pydantic ``error`` as one line: where (dotted, list items numbered from 1), what, and the
    value given.

    >>> try:
    ...     ReviewState.model_validate({"status": "Accepted"})
    ... except ValidationError as exc:
    ...     print(validation_problem(exc))
    review.status: Input should be 'pending', 'accepted', 'rejected', 'skipped' or 'no_answer' (got 'Accepted')
    """
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part + 1) if isinstance(part, int) else str(part) for part in first["loc"])
    if error.title == ReviewState.__name__:
        where = f"review.{where}"
    if first["type"] == "extra_forbidden":
        return f"{where}: unknown key"
    if first["type"] == "missing":
        return f"{where}: missing"
    return f"{where}: {first['msg']} (got {first['input']!r})"


def parse_row(data: dict[str, Any], kind: str) -> DraftRow:
    """``data`` as a row of a draft of ``kind`` (:data:`CASES` or :data:`CONFLICTS`); ``ValueError`` naming the first
    problem (:func:`validation_problem`)."""
    try:
        return _MODELS[kind].model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_problem(exc)) from None


def draft_rows(text: str, where: str) -> tuple[str, list[DraftRow]]:
    """The kind (:data:`CASES` or :data:`CONFLICTS`) and typed rows of a draft file's ``text`` (``where`` names it in
    problems): a malformed line, a file mixing kinds, a row the review app could not show or save, or two rows with
    one id is one line naming ``where:line``."""
    numbered = list(numbered_objects(text.split("\n"), where))  # JSONL lines end at \n only (U+2028 is text)
    if not numbered:
        raise UserError(f"{where}: empty draft file")
    kind = draft_kind([row for _, row in numbered], where)
    rows: list[DraftRow] = []
    first_line: dict[str, int] = {}
    for number, data in numbered:
        try:
            row = parse_row(data, kind)
        except ValueError as exc:
            raise UserError(f"{where}:{number}: {exc}") from None
        if row.key in first_line:
            raise UserError(f"{where}:{number}: {'id' if kind == CASES else 'doc_id'} {row.key!r} is also on line "
                            f"{first_line[row.key]}: every row needs its own (two drafts concatenated?)")
        first_line[row.key] = number
        rows.append(row)
    return kind, rows


def draft_text(rows: Sequence[DraftRow | dict[str, Any]]) -> str:
    """Draft file text of ``rows`` (typed, or dicts validated here: a row the review app could not read is a bug)."""
    typed = [row if isinstance(row, _Row) else _MODELS[draft_kind([row], "a draft row")].model_validate(row) for row in rows]
    return jsonl_text(row.record() for row in typed)


def write_draft(path: Path, rows: Sequence[DraftRow | dict[str, Any]]) -> None:
    """Replace the draft file at once (temporary file and rename: a killed process leaves the old or the new file)."""
    atomic_write_text(path, draft_text(rows))


def golden_row(row: DraftCase) -> dict[str, Any]:
    """The ``golden.jsonl`` case of an accepted draft case: the reviewed fields only (no pool, no review state);
    ``keypoints_reviewed`` is true when a person edited or accepted its keypoints; ``stratum`` is the draw the draft
    came from (the confirmation split stratifies on it). A case without a reference answer is a retrieval-only case."""
    case: dict[str, Any] = {
        "id": row.id,
        "question": row.question,
        "ground_truth": row.ground_truth.strip() or NO_REFERENCE,
        "keypoints": [list(k) for k in row.keypoints if k],
        "relevant_doc_ids": list(row.relevant_doc_ids),
        "category": row.category or "uncategorized",
        "difficulty": row.difficulty or "unspecified",
    }
    if row.review.keypoints_reviewed and case["keypoints"]:
        case["keypoints_reviewed"] = True
    if row.stratum is not None and row.stratum.strip():
        case["stratum"] = row.stratum
    return case


def conflict_row(row: DraftConflict) -> dict[str, Any]:
    """The ``conflicts.jsonl`` entry of an accepted conflict candidate: the candidate as written, without its review state."""
    return {name: value for name, value in row.record().items() if name != "review"}
