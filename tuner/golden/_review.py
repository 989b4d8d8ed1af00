"""Golden set (golden drafts → **review** → dataset): the review state of a draft file: every change saved at once and
atomically under a per-row version check, an append-only review log, the export of accepted rows, and the
highlighting of question terms and keypoint aliases in pool chunks."""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tuner.dataset import (
    CONFLICTS, CORPUS, GOLDEN, MANIFEST, PROVENANCE, Dataset, DraftLabels, LabelProvenance, labels_line, load_knowledge_base, read_provenance,
)
from tuner.embedding import CachedEncoder
from tuner.errors import DatasetError, StaleVersion, UserError
from tuner.golden._draft import (
    CASES, FOUND_BY, REVIEWED, STATUSES, DraftCase, DraftRow, Status, conflict_row, golden_row, parse_row, validation_problem,
)
from tuner.golden._journal import Journal, now
from tuner.golden._pool import KnowledgeSearch
from tuner.io import atomic_write_text, jsonl_objects, jsonl_text
from tuner.text import bm25_tokens, normalize_text

ACTIONS: dict[str, Status] = {"accept": "accepted", "reject": "rejected", "skip": "skipped", "reopen": "pending", "no_answer": "no_answer"}
"""Review actions and the status each one sets."""
Action = Literal["accept", "reject", "skip", "reopen", "no_answer"]
COMPACT_EVERY = 200
"""Saves between two rewrites of the draft file (each save is already on disk in the review log)."""


class Edit(BaseModel):
    """One save of the review app (``POST /api/cases/{id}``): the ``version`` it was made on, an ``action`` and/or edited
    fields (draft cases only): ``relevant_chunk_ids``, ``ground_truth``, ``keypoints`` (lists of aliases) and
    ``found_chunk_ids`` (chunks found by the search: added to the pool marked :data:`FOUND_BY` search, and checked).
    Strict: an unknown key or a wrong type is refused, naming it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    version: int = Field(ge=0)
    action: Action | None = None
    relevant_chunk_ids: list[str] | None = None
    ground_truth: str | None = None
    keypoints: list[list[str]] | None = None
    found_chunk_ids: list[str] | None = None

    def fields(self) -> set[str]:
        """The edited fields this save names."""
        return self.model_fields_set - {"version", "action"}


def _keypoints(value: list[list[str]]) -> list[list[str]]:
    """Keypoints as lists of non-empty aliases (stripped, duplicates dropped); a keypoint left without one is dropped."""
    cleaned = [list(dict.fromkeys(a.strip() for a in k if a.strip())) for k in value]
    return [k for k in cleaned if k]


class ReviewStore:
    """The rows of one draft file and their review, shared by every request of the review app (and by other
    processes on the same file: each write happens under a file lock, on the file as it is on disk then).

    ``update`` applies a change only when the caller names the row's current ``version`` (else
    :class:`StaleVersion`), increments it and appends what changed, with the time, to the review log
    ``<draft>.log.jsonl``, flushed to disk before it returns; the draft file is rewritten every :data:`COMPACT_EVERY`
    saves and by :meth:`flush` (:mod:`tuner.golden._journal`: reading the draft replays the log).
    """

    def __init__(self, path: Path, dataset: Path | None = None, encoder: CachedEncoder | None = None) -> None:
        self.path = path
        self._journal = Journal(path)
        self.log_path = self._journal.log
        self._file_lock = FileLock(str(path) + ".lock")
        self._lock = threading.Lock()
        self._stamp: tuple[tuple[int, int, int], ...] | None = None
        with self._file_lock:  # temporaries of a write killed midway (kill -9); a live writer holds this lock
            for stale in path.parent.glob(f".{path.name}.*.tmp"):
                stale.unlink(missing_ok=True)
            self._reload()
            self._ensure_marked()
        named = self._rows[0].dataset if isinstance(self._rows[0], DraftCase) else None
        self.dataset = dataset or (Path(named) if named else path.parent)
        self._kb: Dataset | None = None
        self._encoder = encoder
        self._search: KnowledgeSearch | None = None

    def _reload(self) -> None:
        stamp = self._journal.stamp()
        if stamp != self._stamp:
            loaded = self._journal.load()
            self._rows, self.kind, self._digest, self._marked, self._pending = (
                loaded.rows, loaded.kind, loaded.digest, loaded.marked, loaded.pending)
            self._stamp = stamp

    def _ensure_marked(self) -> None:
        """Before the first save onto a draft file the log does not name yet (new, or edited by hand): name it."""
        if not self._marked:
            self._journal.mark(self._digest)
            self._marked = True
            self._stamp = self._journal.stamp()

    def rows(self) -> list[DraftRow]:
        with self._lock:
            self._reload()
            return list(self._rows)

    def row(self, case_id: str) -> DraftRow | None:
        return next((row for row in self.rows() if row.key == case_id), None)

    def knowledge_base(self) -> Dataset:
        if self._kb is None:
            self._kb = load_knowledge_base(self.dataset)
        return self._kb

    def searcher(self) -> KnowledgeSearch:
        """The search over the whole knowledge base (:class:`tuner.golden.KnowledgeSearch`), built at its first use."""
        if self._search is None:
            self._search = KnowledgeSearch(self.knowledge_base(), self._encoder)
        return self._search

    def update(self, case_id: str, version: int, action: str | None = None, **fields: Any) -> DraftRow:
        """Apply the save ``version``, ``action``, ``fields`` (:class:`Edit`; a bad one is ``ValueError`` naming the key)
        to row ``case_id``; the row as saved. A change that changes nothing writes nothing."""
        try:
            edit = Edit.model_validate({"version": version, **({"action": action} if action is not None else {}), **fields})
        except ValidationError as exc:
            raise ValueError(validation_problem(exc)) from None
        return self.save(case_id, edit)

    def save(self, case_id: str, edit: Edit) -> DraftRow:
        """:meth:`update` with a validated :class:`Edit`."""
        if self.kind != CASES and (edit.action == "no_answer" or edit.fields()):
            raise ValueError("a conflict candidate is accepted, rejected, skipped or reopened; nothing else is edited here")
        with self._lock, self._file_lock:
            self._reload()  # another process may have written: always compare with the files on disk
            index = next((i for i, row in enumerate(self._rows) if row.key == case_id), None)
            if index is None:
                raise KeyError(case_id)
            current = self._rows[index]
            if current.review.version != edit.version:
                raise StaleVersion(case_id, current.review.version, edit.version)
            record = current.record()
            changes = self._apply(record, edit)
            if not changes:
                return current
            record["review"].update(version=edit.version + 1, updated=now())
            row = parse_row(record, self.kind)
            self._ensure_marked()
            self._journal.append({"time": row.review.updated, "id": case_id, "version": row.review.version,
                                  "action": edit.action, "changes": changes})
            self._rows = [*self._rows[:index], row, *self._rows[index + 1:]]
            self._pending += 1
            if self._pending >= COMPACT_EVERY:
                self._compact()
            self._stamp = self._journal.stamp()
            return row

    def flush(self) -> None:
        """Rewrite the draft file with every save the log holds beyond it (the app does this when it stops)."""
        with self._lock, self._file_lock:
            self._reload()
            if self._pending:
                self._compact()
                self._stamp = self._journal.stamp()

    def _compact(self) -> None:
        self._digest = self._journal.compact(self._rows)
        self._marked, self._pending = True, 0

    def _apply(self, row: dict[str, Any], edit: Edit) -> dict[str, list[Any]]:
        """Change the draft line ``row`` in place; ``{field: [old, new]}`` for what changed."""
        changes: dict[str, list[Any]] = {}

        def put(name: str, value: Any, target: dict[str, Any] = row) -> None:
            if target.get(name) != value:
                changes[name] = [target.get(name), value]
                target[name] = value

        relevant = edit.relevant_chunk_ids
        if edit.found_chunk_ids is not None:
            put("pool", [*row["pool"], *self._found(row, edit.found_chunk_ids)])
            relevant = [*(relevant if relevant is not None else row["relevant_chunk_ids"]), *edit.found_chunk_ids]
        if relevant is not None:
            wanted = set(relevant)
            pool = row["pool"]
            unknown = wanted - {c["chunk_id"] for c in pool}
            if unknown:
                raise ValueError(f"chunks not in this case's pool: {', '.join(sorted(unknown))}")
            put("relevant_chunk_ids", [c["chunk_id"] for c in pool if c["chunk_id"] in wanted])
            put("relevant_doc_ids", list(dict.fromkeys(c["doc_id"] for c in pool if c["chunk_id"] in wanted)))
        if edit.ground_truth is not None:
            put("ground_truth", edit.ground_truth.strip())
        if edit.keypoints is not None:
            put("keypoints", _keypoints(edit.keypoints))
            if "keypoints" in changes:
                put("keypoints_reviewed", True, row["review"])
        if edit.action is not None:
            put("status", ACTIONS[edit.action], row["review"])
            if edit.action == "accept" and self.kind == CASES and row.get("keypoints"):
                put("keypoints_reviewed", True, row["review"])
        return changes

    def _found(self, row: dict[str, Any], chunk_ids: list[str]) -> list[dict[str, Any]]:
        """The chunks ``chunk_ids`` not yet in ``row``'s pool, marked found by search."""
        present = {c["chunk_id"] for c in row["pool"]}
        added = []
        for chunk_id in dict.fromkeys(chunk_ids):
            if chunk_id not in present:
                chunk = self.searcher().chunk(chunk_id)
                if chunk is None:
                    raise ValueError(f"no chunk {chunk_id} in the knowledge base")
                added.append({**chunk, "ranks": {}, FOUND_BY: "search"})
        return added

    def progress(self) -> dict[str, Any]:
        """Reviewed (accepted, rejected or no answer) and total rows, per status and per stratum (draft cases) or kind (conflicts)."""
        rows = self.rows()
        group = "stratum" if self.kind == CASES else "kind"
        per: dict[str, dict[str, int]] = {}
        for row in rows:
            counts = per.setdefault(str(getattr(row, group) or "unspecified"), {"reviewed": 0, "total": 0})
            counts["total"] += 1
            counts["reviewed"] += row.review.status in REVIEWED
        return {
            "reviewed": sum(row.review.status in REVIEWED for row in rows),
            "total": len(rows),
            "by_status": {status: sum(row.review.status == status for row in rows) for status in STATUSES},
            "by_group": per,
        }

    def first_to_review(self) -> str | None:
        """The first pending row, else the first skipped one; ``None`` when every row is decided."""
        rows = self.rows()
        for status in ("pending", "skipped"):
            for row in rows:
                if row.review.status == status:
                    return row.key
        return None

    def export(self) -> Export:
        """Write the accepted rows into the knowledge base: draft cases into ``golden.jsonl``, conflict candidates into
        ``conflicts.jsonl``, replacing the entries of this draft's rows already there and keeping the others;
        ``golden.provenance.json`` then describes every case kept and written (:func:`merged_provenance`). The
        result is validated as a dataset folder first (:func:`tuner.dataset.load_knowledge_base`, which is
        :func:`tuner.dataset.load_dataset` once a golden set exists); a problem writes nothing. The previous file
        is kept beside it as ``.bak``."""
        rows = self.rows()
        accepted = [row for row in rows if row.review.status == "accepted"]
        if not accepted:
            raise UserError(f"{self.path}: no accepted rows to export yet")
        name, key = (GOLDEN, "id") if self.kind == CASES else (CONFLICTS, "doc_id")
        target = self.dataset / name
        mine = {row.key for row in rows}
        kept = [entry for entry in _jsonl(target) if entry.get(key) not in mine]
        unlabelled = [row.key for row in accepted if isinstance(row, DraftCase) and not row.relevant_doc_ids]
        if unlabelled:
            raise UserError(f"{self.path}: accepted case {unlabelled[0]} has no checked chunk; check the chunks that answer it, "
                            f"or reopen it, or mark it no answer ({len(unlabelled)} such case{'s' if len(unlabelled) > 1 else ''}: "
                            f"{', '.join(unlabelled[:5])}{', …' if len(unlabelled) > 5 else ''})")
        entries = kept + [golden_row(row) if isinstance(row, DraftCase) else conflict_row(row) for row in accepted]
        files = {name: jsonl_text(entries)}
        if self.kind != CASES:
            # a stale version found in the corpus becomes a conflict: it leaves corpus.jsonl (it stays in the index,
            # as conflicts do under hard_mode: in_index, but is no longer a document a case may count as relevant)
            moved = {entry["doc_id"] for entry in entries}
            corpus = _jsonl(self.dataset / CORPUS)
            if any(doc.get("doc_id") in moved for doc in corpus):
                files[CORPUS] = jsonl_text([doc for doc in corpus if doc.get("doc_id") not in moved])
        if self.kind == CASES:
            try:
                earlier = read_provenance(self.dataset / PROVENANCE)
            except ValueError as exc:
                raise UserError(f"{exc}; fix or remove it to export") from None
            cases = [row for row in rows if isinstance(row, DraftCase)]
            labels = merged_provenance(earlier, draft_labels(str(self.path.resolve()), cases), [entry[key] for entry in entries])
            files[PROVENANCE] = json.dumps(labels.to_dict(), indent=2, ensure_ascii=False) + "\n"
        dataset = _validated(self.dataset, files)
        for written in sorted(files, key=lambda n: n == CORPUS):  # conflicts first: an interrupted export re-runs
            path = self.dataset / written
            if path.is_file():
                shutil.copyfile(path, path.with_name(path.name + ".bak"))
            atomic_write_text(path, files[written])
        return Export(target, len(accepted), len(kept), dataset.summary(), labels_line(dataset.provenance), dataset.provenance)


def draft_labels(draft: str, rows: Sequence[DraftCase]) -> DraftLabels:
    """How the draft cases ``rows`` of the draft file ``draft`` were labelled: the pool (retrievers and depth from each
    row's ``pool_spec``, else the retrievers its ranks name, depth unknown), the accepted cases and their labels found
    by search outside the pool, the cases marked no answer and the rejected ones."""
    retrievers: dict[str, None] = {}
    depths: set[int | None] = set()
    for row in rows:
        spec = row.pool_spec
        names = (spec.retrievers if spec is not None else []) or [name for chunk in row.pool for name in chunk.ranks]
        retrievers.update(dict.fromkeys(names))
        depths.add(spec.depth if spec is not None else None)
    accepted = [row for row in rows if row.review.status == "accepted"]
    found = {row.id: sum(c.found_by == "search" and c.chunk_id in row.relevant_chunk_ids for c in row.pool) for row in accepted}
    status = [row.review.status for row in rows]
    return DraftLabels(
        draft=draft,
        pool_retrievers=tuple(retrievers) or ("unknown",),
        pool_depth=max(d for d in depths if d is not None) if depths and None not in depths else None,
        case_ids=tuple(row.id for row in accepted),
        found_by_search={case_id: n for case_id, n in found.items() if n},
        no_answer=status.count("no_answer"),
        rejected=status.count("rejected"),
    )


def merged_provenance(earlier: LabelProvenance | None, exported: DraftLabels, golden_ids: Sequence[str]) -> LabelProvenance:
    """The provenance of a golden set (case ids ``golden_ids``) after the export of one draft's part ``exported``: its
    cases are the exported draft's, whatever earlier draft had the same ids; otherwise the ``earlier`` provenance
    describing the set (:meth:`LabelProvenance.describing`: a re-export of the same draft replaces its part whole; cases
    no draft names are ``unreviewed``)."""
    present = set(golden_ids) - set(exported.case_ids)
    parts = [part.keeping(present) for part in (earlier.drafts if earlier is not None else ())]
    merged = LabelProvenance.of_drafts([*parts, exported]).describing(golden_ids)
    assert merged is not None, "the exported cases are in the golden set"
    return merged


@dataclass(frozen=True)
class Export:
    path: Path
    written: int
    kept: int
    summary: str
    labels: str = ""
    """Where the labels came from (:func:`tuner.dataset.labels_line` of the provenance the export wrote)."""
    provenance: LabelProvenance | None = None
    """The provenance the export wrote."""


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [record for _, record in jsonl_objects(path)] if path.is_file() else []


def _validated(root: Path, files: dict[str, str]) -> Dataset:
    """The knowledge base ``root`` loaded with each file of ``files`` (name → text) replaced, in a staging copy
    (nothing in ``root`` changes); problems name the real paths."""
    with tempfile.TemporaryDirectory(prefix="tuner-review-") as stage:
        for other in (CORPUS, GOLDEN, CONFLICTS, MANIFEST, PROVENANCE):
            if other not in files and (root / other).is_file():
                shutil.copyfile(root / other, Path(stage) / other)
        for name, text in files.items():
            (Path(stage) / name).write_text(text, "utf-8")
        try:
            return load_knowledge_base(Path(stage))
        except DatasetError as exc:
            raise DatasetError([line.replace(stage, str(root), 1) for line in exc.problems]) from None


Segment = tuple[str, str]
"""A piece of text and its marks: ``""``, ``"q"`` (a question term), ``"k"`` (a keypoint alias) or ``"qk"``."""


def highlight(text: str, question: str, aliases: Sequence[str] = ()) -> list[Segment]:
    """``text`` cut into segments marking the question's terms and the keypoint ``aliases``.

    Terms are the question's BM25 terms (:func:`tuner.text.bm25_tokens`: segmented words in Chinese, stopwords of
    both languages dropped); matching is on :func:`tuner.text.normalize_text` of each character, so full-width
    letters and digits and case do not matter. A Latin or digit term matches only at the start of a word (``cost``
    marks ``costs``, not ``accost``); aliases match anywhere.

    >>> highlight("Ｘ200 costs $1,299.", "What does the X200 cost?", ["$1,299"])
    [('Ｘ200', 'q'), (' ', ''), ('cost', 'q'), ('s ', ''), ('$1,299', 'k'), ('.', '')]
    """
    normal: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for folded in normalize_text(char):
            normal.append(folded)
            origin.append(index)
    flat = "".join(normal)
    marks = [set[str]() for _ in text]

    def mark(needle: str, flag: str, word_start: bool) -> None:
        start = flat.find(needle)
        while needle and start >= 0:
            if not (word_start and start > 0 and flat[start - 1].isalnum() and flat[start - 1].isascii()):
                for position in range(start, start + len(needle)):
                    marks[origin[position]].add(flag)
            start = flat.find(needle, start + 1)

    for term in set(bm25_tokens(question)):
        mark(term, "q", term[0].isascii())
    for alias in aliases:
        mark(normalize_text(alias.strip()), "k", False)
    segments: list[Segment] = []
    for char, flags in zip(text, marks):
        flag = "".join(sorted(flags, key="qk".index))
        if segments and segments[-1][1] == flag:
            segments[-1] = (segments[-1][0] + char, flag)
        else:
            segments.append((char, flag))
    return segments
