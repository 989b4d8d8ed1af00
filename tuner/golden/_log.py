"""Golden set (dataset → **golden drafts**): questions from a query log: read, normalize, merge duplicates with their
counts, and a seeded sample stratified by frequency plus the known bad cases."""

from __future__ import annotations

import math
import numbers
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from tuner.dataset import Dataset
from tuner.dataset.importers import table_rows
from tuner.embedding import CachedEncoder
from tuner.errors import UserError, describe_validation_error
from tuner.golden._dedupe import NEAR_DUPLICATE, near_duplicate_groups, normalize_question
from tuner.golden._draft import draft_case
from tuner.golden._pool import DEFAULT_DEPTH, POOL_RETRIEVERS, build_pools
from tuner.progress import Reporter
from tuner.text import is_blank
from tuner.strict import StrictModel

QUERY_COLUMNS = ("query", "question")
"""Columns tried, in order, when the mapping names no query column."""
LOG_FIELDS = ("query", "count", "timestamp", "feedback")
STRATA = ("head", "torso", "tail")
KNOWN_BAD = "known_bad"
"""The stratum of the always-included questions."""


@dataclass
class LoggedQuestion:
    """One question after merging: the most frequent wording, the summed count, every wording seen, the
    timestamps' range (compared as text, which orders ISO 8601 times correctly) and the feedback values given (in
    log order)."""

    question: str
    count: int
    variants: list[str] = field(default_factory=list)
    first_seen: str | None = None
    last_seen: str | None = None
    feedback: list[str] = field(default_factory=list)


class Sampling(StrictModel):
    """How many questions to draw and where the strata's borders are.

    Questions are ranked by merged count (ties in log order); ``head`` holds the most frequent questions that
    together make the first ``head_traffic`` of all logged traffic, ``torso`` the next ``torso_traffic``, ``tail``
    the rest. ``sizes`` gives the questions drawn per stratum; without it ``n`` is split by ``shares``. A stratum
    with fewer questions than asked gives all of them and its shortfall goes to the next ones
    (head → torso → tail → head). Known bad cases come on top.
    """

    n: int = Field(100, ge=1)
    head_traffic: float = Field(0.5, gt=0.0, lt=1.0)
    torso_traffic: float = Field(0.3, gt=0.0, lt=1.0)
    shares: dict[str, float] = Field(default_factory=lambda: {"head": 0.4, "torso": 0.35, "tail": 0.25})
    sizes: dict[str, int] | None = None
    seed: int = 0

    @model_validator(mode="after")
    def _check(self) -> Sampling:
        if self.head_traffic + self.torso_traffic >= 1.0:
            raise ValueError("head_traffic + torso_traffic must be below 1 (the tail takes the rest)")
        for name, values in (("shares", self.shares), ("sizes", self.sizes or {})):
            unknown = set(values) - set(STRATA)
            if unknown:
                raise ValueError(f"{name}: unknown stratum {', '.join(sorted(unknown))} (strata: {', '.join(STRATA)})")
            if any(v < 0 for v in values.values()):
                raise ValueError(f"{name}: must not be negative")
        return self

    def wanted(self) -> dict[str, int]:
        """Questions asked per stratum: ``sizes``, else ``n`` split by ``shares`` (largest remainders)."""
        if self.sizes is not None:
            return {name: self.sizes.get(name, 0) for name in STRATA}
        total = sum(self.shares.get(name, 0.0) for name in STRATA) or 1.0
        exact = {name: self.n * self.shares.get(name, 0.0) / total for name in STRATA}
        counts = {name: int(value) for name, value in exact.items()}
        for name in sorted(STRATA, key=lambda s: counts[s] - exact[s])[: self.n - sum(counts.values())]:
            counts[name] += 1
        return counts


def sampling_from(values: Mapping[str, Any], source: str) -> Sampling:
    try:
        return Sampling(**values)
    except ValidationError as exc:
        raise UserError(f"{source}: {describe_validation_error(exc)}") from None


def parse_columns(text: str | None) -> dict[str, str]:
    """``--map query=q,count=n`` → ``{"query": "q", "count": "n"}``; an unknown field is one line naming it."""
    columns: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, column = part.partition("=")
        if not sep or not column.strip():
            raise UserError(f"--map: expected FIELD=COLUMN, got {part.strip()!r}")
        if name.strip() not in LOG_FIELDS:
            raise UserError(f"--map: unknown field {name.strip()!r} (fields: {', '.join(LOG_FIELDS)})")
        columns[name.strip()] = column.strip()
    return columns


MAX_COUNT = 2**53 - 1
"""Largest count: above it a JSON number is no longer exact in every reader (the review page's JavaScript)."""
_DIGITS = re.compile(r"[+-]?\d+")


def _whole(value: Any) -> int | None:
    """``value`` as a whole number when it is one (``3``, ``"3"``, ``3.0``, ``"3.0"``); ``None`` for anything else
    (``true``, ``1.5``, ``inf``, ``"10**400"``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _DIGITS.fullmatch(text):
            return int(text) if len(text) <= 40 else MAX_COUNT + 1
        try:
            value = float(text)
        except ValueError:
            return None
    number = float(value) if isinstance(value, numbers.Real) else math.nan
    return int(number) if math.isfinite(number) and number.is_integer() else None


def _count(where: str, value: Any) -> int:
    """A row's count: empty is 1, else a whole number from 1 to :data:`MAX_COUNT`."""
    if value is None or value == "":
        return 1
    count = _whole(value)
    if count is None:
        raise UserError(f"{where}: count must be a whole number, got {str(value)[:40]!r}")
    if not 1 <= count <= MAX_COUNT:
        raise UserError(f"{where}: count must be from 1 to {MAX_COUNT}, got {str(value)[:40]}")
    return count


def _question(where: str, value: Any) -> str | None:
    """A row's query as text, ``None`` when it is blank (empty, whitespace of any script, invisible characters)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UserError(f"{where}: the query must be text, got {type(value).__name__} {str(value)[:40]}")
    surrogate = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
    if surrogate is not None:
        raise UserError(f"{where}: the query holds a lone surrogate (U+{ord(surrogate):04X}), not text")
    return None if is_blank(value) else value.strip()


@dataclass(frozen=True)
class LogRows:
    """A query log as read: ``(question, count, timestamp, feedback)`` per row, the column used for each field
    (``None``: not in the log), and how many rows were skipped for a blank query."""

    rows: list[tuple[str, int, str | None, str | None]]
    columns: dict[str, str | None]
    blank: int


def _log_columns(where: str, first: Mapping[str, Any], mapping: Mapping[str, str]) -> dict[str, str | None]:
    """The column of each field: the one ``mapping`` names (it must be there), else the field's own name when the
    first row has it (the query: ``query`` or ``question``)."""
    columns: dict[str, str | None] = {}
    for name in LOG_FIELDS:
        if name in mapping:
            if mapping[name] not in first:
                raise UserError(f"{where}: no column {mapping[name]!r} (the {name} column)")
            columns[name] = mapping[name]
        else:
            columns[name] = next((c for c in (QUERY_COLUMNS if name == "query" else (name,)) if c in first), None)
    if columns["query"] is None:
        raise UserError(f"{where}: no query column ({' or '.join(QUERY_COLUMNS)}); name it with --map query=COLUMN")
    return columns


def read_log(path: Path, mapping: Mapping[str, str]) -> LogRows:
    """The rows of a CSV/TSV, JSONL or Parquet query log.

    Each field's column is the one ``mapping`` names, else the column named like the field (the query: ``query``,
    else ``question``); count (default 1), timestamp and feedback are optional. A query that is not text, a count
    that is not a whole number from 1 to :data:`MAX_COUNT` or a missing column is one line naming the file and
    row; a blank query skips its row."""
    rows: list[tuple[str, int, str | None, str | None]] = []
    columns: dict[str, str | None] | None = None
    blank = 0
    for where, row in table_rows(path):
        if columns is None:
            columns = _log_columns(where, row, mapping)
        used = {name: column for name, column in columns.items() if column is not None}
        missing = next((name for name, column in used.items() if column not in row), None)
        if missing is not None:
            raise UserError(f"{where}: no column {used[missing]!r} (the {missing} column)")
        text = _question(where, row[used["query"]])
        if text is None:
            blank += 1
            continue
        stamp, feedback = (row.get(used[name]) if name in used else None for name in ("timestamp", "feedback"))
        rows.append((text, _count(where, row.get(used["count"]) if "count" in used else None),
                     None if stamp in (None, "") else str(stamp), None if feedback in (None, "") else str(feedback)))
    if not rows:
        raise UserError(f"{path}: no questions")
    return LogRows(rows, columns or {}, blank)


def merge_questions(
    rows: Sequence[tuple[str, int, str | None, str | None]], threshold: float = NEAR_DUPLICATE
) -> list[LoggedQuestion]:
    """Exact duplicates (after :func:`normalize_question`) and near duplicates
    (:func:`tuner.golden._dedupe.near_duplicate_groups`) become one question whose count is the sum of theirs;
    its wording is the group's most frequent one (the first seen on a tie). In order of first appearance."""
    normalized = [normalize_question(text) for text, *_ in rows]
    groups = near_duplicate_groups(normalized, threshold)
    members: dict[int, list[int]] = {}
    for index, group in enumerate(groups):
        members.setdefault(group, []).append(index)
    merged = []
    for indices in members.values():
        wording: dict[str, int] = {}
        for i in indices:
            wording[rows[i][0]] = wording.get(rows[i][0], 0) + rows[i][1]
        stamps = sorted(stamp for i in indices if (stamp := rows[i][2]) is not None)
        merged.append(LoggedQuestion(
            question=max(wording, key=lambda text: wording[text]),
            count=sum(wording.values()),
            variants=list(wording),
            first_seen=stamps[0] if stamps else None,
            last_seen=stamps[-1] if stamps else None,
            feedback=[value for i in indices if (value := rows[i][3]) is not None],
        ))
    return merged


def strata(questions: Sequence[LoggedQuestion], sampling: Sampling) -> dict[str, list[LoggedQuestion]]:
    """The questions of each frequency stratum, most frequent first (see :class:`Sampling`): a question is in
    ``head`` while the traffic of the questions ranked before it is below ``head_traffic`` of the total, so the
    most frequent question is always head."""
    ranked = sorted(questions, key=lambda q: -q.count)
    total = sum(q.count for q in ranked)
    result: dict[str, list[LoggedQuestion]] = {name: [] for name in STRATA}
    before = 0
    for question in ranked:
        share = before / total
        name = "head" if share < sampling.head_traffic else "torso" if share < sampling.head_traffic + sampling.torso_traffic else "tail"
        result[name].append(question)
        before += question.count
    return result


def sample_questions(
    questions: Sequence[LoggedQuestion], sampling: Sampling, known_bad: Iterable[str] = ()
) -> list[tuple[str, LoggedQuestion]]:
    """``(stratum, question)`` for the known bad cases (stratum :data:`KNOWN_BAD`, always in; a logged
    question with the same normalized text brings its count), then a seeded random draw per stratum."""
    by_text = {normalize_question(variant): q for q in questions for variant in q.variants}
    chosen: list[tuple[str, LoggedQuestion]] = []
    taken: set[int] = set()
    for text in dict.fromkeys(known_bad):
        logged = by_text.get(normalize_question(text))
        if logged is not None and id(logged) in taken:
            continue
        question = logged or LoggedQuestion(text, 0, [text])
        chosen.append((KNOWN_BAD, question))
        taken.add(id(question))
    rng = random.Random(sampling.seed)
    pools = {name: [q for q in members if id(q) not in taken] for name, members in strata(questions, sampling).items()}
    wanted = sampling.wanted()
    shortfall = 0
    order = [*STRATA, *STRATA]  # a shortfall carries over to the following strata, wrapping once
    drawn: dict[str, list[LoggedQuestion]] = {name: [] for name in STRATA}
    for step, name in enumerate(order):
        want = (wanted[name] if step < len(STRATA) else 0) + shortfall
        available = [q for q in pools[name] if id(q) not in taken]
        picked = rng.sample(available, min(want, len(available)))
        drawn[name].extend(picked)
        taken.update(id(q) for q in picked)
        shortfall = want - len(picked)
    for name in STRATA:
        chosen.extend((name, q) for q in drawn[name])
    return chosen


@dataclass(frozen=True)
class LogDrafts:
    """What ``tuner golden from-log`` writes (``rows``) and reports: rows read, the column of each field, rows skipped
    as blank, questions after exact and after near-duplicate merging, questions per stratum, drawn per stratum, and
    the pool sizes."""

    rows: list[dict[str, Any]]
    read: int
    columns: dict[str, str | None]
    blank: int
    exact: int
    merged: int
    strata: dict[str, int]
    drawn: dict[str, int]
    pool_sizes: list[int]


def drafts_from_log(
    log: Path,
    kb: Dataset,
    sampling: Sampling,
    *,
    columns: Mapping[str, str] | None = None,
    known_bad: Sequence[str] = (),
    depth: int = DEFAULT_DEPTH,
    threshold: float = NEAR_DUPLICATE,
    encoder: CachedEncoder | None = None,
    reporter: Reporter | None = None,
    retrievers: Sequence[str] = POOL_RETRIEVERS,
) -> LogDrafts:
    """Read ``log``, merge duplicates, draw the sample and pool each drawn question over ``kb``: one draft case per
    question (``id`` ``log-0001``, ...; stratum, merged count, wordings, timestamps and feedback kept)."""
    log_rows = read_log(log, columns or {})
    rows = log_rows.rows
    questions = merge_questions(rows, threshold)
    chosen = sample_questions(questions, sampling, known_bad)
    pools = build_pools(kb, [q.question for _, q in chosen], depth, encoder=encoder, reporter=reporter, retrievers=retrievers)
    drafts = [
        draft_case(f"log-{i:04d}", q.question, pool, kb.path, source="log", stratum=stratum, count=q.count,
                   extra={"variants": q.variants, "first_seen": q.first_seen, "last_seen": q.last_seen, "feedback": q.feedback},
                   pool_spec={"retrievers": list(retrievers), "depth": depth})
        for i, ((stratum, q), pool) in enumerate(zip(chosen, pools), start=1)
    ]
    drawn = {name: sum(1 for stratum, _ in chosen if stratum == name) for name in (KNOWN_BAD, *STRATA)}
    return LogDrafts(
        rows=drafts,
        read=len(rows),
        columns=log_rows.columns,
        blank=log_rows.blank,
        exact=len({normalize_question(text) for text, *_ in rows}),
        merged=len(questions),
        strata={name: len(members) for name, members in strata(questions, sampling).items()},
        drawn=drawn,
        pool_sizes=[len(pool) for pool in pools],
    )
