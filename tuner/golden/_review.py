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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock

from tuner.dataset import (
    CONFLICTS, CORPUS, GOLDEN, MANIFEST, PROVENANCE, Dataset, DraftLabels, LabelProvenance, labels_line, load_knowledge_base, read_provenance,
)
from tuner.embedding import CachedEncoder
from tuner.errors import DatasetError, StaleVersion, UserError
from tuner.golden._draft import CASES, FOUND_BY, REVIEWED, STATUSES, conflict_row, draft_kind, golden_row, read_draft
from tuner.golden._pool import KnowledgeSearch
from tuner.io import atomic_write_text, jsonl_objects, jsonl_text
from tuner.text import bm25_tokens, normalize_text

ACTIONS = {"accept": "accepted", "reject": "rejected", "skip": "skipped", "reopen": "pending", "no_answer": "no_answer"}
"""Review actions and the status each one sets."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _keypoints(value: Any) -> list[list[str]]:
    """Keypoints as lists of non-empty aliases (stripped, duplicates dropped); a keypoint left without one is dropped."""
    if not isinstance(value, list) or not all(isinstance(k, list) and all(isinstance(a, str) for a in k) for k in value):
        raise ValueError("keypoints must be a list of lists of aliases")
    cleaned = [list(dict.fromkeys(a.strip() for a in k if a.strip())) for k in value]
    return [k for k in cleaned if k]


class ReviewStore:
    """The rows of one draft file and their review, shared by every request of the review app (and by other
    processes on the same file: each write happens under a file lock, on the file as it is on disk then).

    ``update`` applies a change only when the caller names the row's current ``version`` (else
    :class:`StaleVersion`), increments it, rewrites the file atomically (:func:`tuner.io.atomic_write_text`) and
    appends what changed, with the time, to the review log ``<draft>.log.jsonl``.
    """

    def __init__(self, path: Path, dataset: Path | None = None, encoder: CachedEncoder | None = None) -> None:
        self.path = path
        self.log_path = path.with_name(f"{path.stem}.log.jsonl")
        self._file_lock = FileLock(str(path) + ".lock")
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._rows: list[dict[str, Any]] = []
        with self._file_lock:  # temporaries of a write killed midway (kill -9); a live writer holds this lock
            for stale in path.parent.glob(f".{path.name}.*.tmp"):
                stale.unlink(missing_ok=True)
        self._reload()
        self.kind = draft_kind(self._rows, str(path))
        named = self._rows[0].get("dataset")
        self.dataset = dataset or (Path(named) if isinstance(named, str) else path.parent)
        self._kb: Dataset | None = None
        self._encoder = encoder
        self._search: KnowledgeSearch | None = None

    def _reload(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            raise UserError(f"{self.path}: draft file not found") from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._rows = read_draft(self.path)
            self._stamp = stamp

    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            self._reload()
            return list(self._rows)

    def row(self, case_id: str) -> dict[str, Any] | None:
        return next((row for row in self.rows() if self.key(row) == case_id), None)

    def key(self, row: dict[str, Any]) -> str:
        """A row's id: ``id`` of a draft case, ``doc_id`` of a conflict candidate."""
        return str(row["id"] if self.kind == CASES else row["doc_id"])

    def knowledge_base(self) -> Dataset:
        if self._kb is None:
            self._kb = load_knowledge_base(self.dataset)
        return self._kb

    def searcher(self) -> KnowledgeSearch:
        """The search over the whole knowledge base (:class:`tuner.golden.KnowledgeSearch`), built at its first use."""
        if self._search is None:
            self._search = KnowledgeSearch(self.knowledge_base(), self._encoder)
        return self._search

    def update(self, case_id: str, version: int, action: str | None = None, **fields: Any) -> dict[str, Any]:
        """Apply ``action`` (:data:`ACTIONS`) and edited ``fields`` (draft cases: ``relevant_chunk_ids``, ``ground_truth``,
        ``keypoints``, ``found_chunk_ids``: chunks found by the search, added to the pool marked :data:`FOUND_BY` search
        and checked) to row ``case_id``; the row as saved. A change that changes nothing writes nothing."""
        if action is not None and action not in ACTIONS:
            raise ValueError(f"unknown action {action!r} (actions: {', '.join(ACTIONS)})")
        if action == "no_answer" and self.kind != CASES:
            raise ValueError("no_answer applies to draft cases only")
        allowed = {"relevant_chunk_ids", "ground_truth", "keypoints", "found_chunk_ids"} if self.kind == CASES else set()
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"cannot edit {', '.join(sorted(unknown))} here")
        with self._lock, self._file_lock:
            self._stamp = None  # another process may have written: always compare with the file on disk
            self._reload()
            index = next((i for i, row in enumerate(self._rows) if self.key(row) == case_id), None)
            if index is None:
                raise KeyError(case_id)
            row: dict[str, Any] = json.loads(json.dumps(self._rows[index]))
            review = row["review"]
            if review["version"] != version:
                raise StaleVersion(case_id, review["version"], version)
            changes = self._apply(row, action, fields)
            if not changes:
                return row
            review["version"] += 1
            review["updated"] = _now()
            rows = [*self._rows[:index], row, *self._rows[index + 1:]]
            atomic_write_text(self.path, jsonl_text(rows))
            self._rows, self._stamp = rows, None
            with self.log_path.open("a", encoding="utf-8") as log:
                log.write(jsonl_text([{"time": review["updated"], "id": case_id, "version": review["version"], "action": action,
                                       "changes": changes}]))
            return row

    def _apply(self, row: dict[str, Any], action: str | None, fields: dict[str, Any]) -> dict[str, list[Any]]:
        """Change ``row`` in place; ``{field: [old, new]}`` for what changed."""
        changes: dict[str, list[Any]] = {}

        def put(name: str, value: Any, target: dict[str, Any] = row) -> None:
            if target.get(name) != value:
                changes[name] = [target.get(name), value]
                target[name] = value

        if "found_chunk_ids" in fields:
            fields = {**fields, "relevant_chunk_ids": [*fields.get("relevant_chunk_ids", row["relevant_chunk_ids"]),
                                                       *self._add_found(row, fields["found_chunk_ids"], changes)]}
        if "relevant_chunk_ids" in fields:
            if not isinstance(fields["relevant_chunk_ids"], list) or not all(isinstance(c, str) for c in fields["relevant_chunk_ids"]):
                raise ValueError("relevant_chunk_ids must be a list of chunk ids")
            wanted = set(fields["relevant_chunk_ids"])
            pool = row["pool"]
            unknown = wanted - {c["chunk_id"] for c in pool}
            if unknown:
                raise ValueError(f"chunks not in this case's pool: {', '.join(sorted(unknown))}")
            put("relevant_chunk_ids", [c["chunk_id"] for c in pool if c["chunk_id"] in wanted])
            put("relevant_doc_ids", list(dict.fromkeys(c["doc_id"] for c in pool if c["chunk_id"] in wanted)))
        if "ground_truth" in fields:
            if not isinstance(fields["ground_truth"], str):
                raise ValueError("ground_truth must be a string")
            put("ground_truth", fields["ground_truth"].strip())
        if "keypoints" in fields:
            put("keypoints", _keypoints(fields["keypoints"]))
            if "keypoints" in changes:
                put("keypoints_reviewed", True, row["review"])
        if action is not None:
            put("status", ACTIONS[action], row["review"])
            if action == "accept" and self.kind == CASES and row.get("keypoints"):
                put("keypoints_reviewed", True, row["review"])
        return changes

    def _add_found(self, row: dict[str, Any], chunk_ids: Any, changes: dict[str, list[Any]]) -> list[str]:
        """Append the chunks ``chunk_ids`` not yet in ``row``'s pool to it, marked found by search; their ids."""
        if not isinstance(chunk_ids, list) or not all(isinstance(c, str) for c in chunk_ids):
            raise ValueError("found_chunk_ids must be a list of chunk ids")
        present = {c["chunk_id"] for c in row["pool"]}
        added = []
        for chunk_id in dict.fromkeys(chunk_ids):
            if chunk_id not in present:
                chunk = self.searcher().chunk(chunk_id)
                if chunk is None:
                    raise ValueError(f"no chunk {chunk_id} in the knowledge base")
                added.append({**chunk, "ranks": {}, FOUND_BY: "search"})
        if added:
            changes["pool"] = [[], [c["chunk_id"] for c in added]]
            row["pool"] = [*row["pool"], *added]
        return list(chunk_ids)

    def progress(self) -> dict[str, Any]:
        """Reviewed (accepted, rejected or no answer) and total rows, per status and per stratum (draft cases) or kind (conflicts)."""
        rows = self.rows()
        group = "stratum" if self.kind == CASES else "kind"
        per: dict[str, dict[str, int]] = {}
        for row in rows:
            counts = per.setdefault(str(row.get(group) or "unspecified"), {"reviewed": 0, "total": 0})
            counts["total"] += 1
            counts["reviewed"] += row["review"]["status"] in REVIEWED
        return {
            "reviewed": sum(row["review"]["status"] in REVIEWED for row in rows),
            "total": len(rows),
            "by_status": {status: sum(row["review"]["status"] == status for row in rows) for status in STATUSES},
            "by_group": per,
        }

    def first_to_review(self) -> str | None:
        """The first pending row, else the first skipped one; ``None`` when every row is decided."""
        rows = self.rows()
        for status in ("pending", "skipped"):
            for row in rows:
                if row["review"]["status"] == status:
                    return self.key(row)
        return None

    def export(self) -> Export:
        """Write the accepted rows into the knowledge base: draft cases into ``golden.jsonl``, conflict candidates into
        ``conflicts.jsonl``, replacing the entries of this draft's rows already there and keeping the others;
        ``golden.provenance.json`` then describes every case kept and written (:func:`merged_provenance`). The
        result is validated as a dataset folder first (:func:`tuner.dataset.load_knowledge_base`, which is
        :func:`tuner.dataset.load_dataset` once a golden set exists); a problem writes nothing. The previous file
        is kept beside it as ``.bak``."""
        rows = self.rows()
        accepted = [row for row in rows if row["review"]["status"] == "accepted"]
        if not accepted:
            raise UserError(f"{self.path}: no accepted rows to export yet")
        name, convert, key = (GOLDEN, golden_row, "id") if self.kind == CASES else (CONFLICTS, conflict_row, "doc_id")
        target = self.dataset / name
        mine = {self.key(row) for row in rows}
        kept = [entry for entry in _jsonl(target) if entry.get(key) not in mine]
        entries = kept + [convert(row) for row in accepted]
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
            labels = merged_provenance(earlier, draft_labels(str(self.path.resolve()), rows), [entry[key] for entry in entries])
            files[PROVENANCE] = json.dumps(labels.to_dict(), indent=2, ensure_ascii=False) + "\n"
        dataset = _validated(self.dataset, files)
        for written in sorted(files, key=lambda n: n == CORPUS):  # conflicts first: an interrupted export re-runs
            path = self.dataset / written
            if path.is_file():
                shutil.copyfile(path, path.with_name(path.name + ".bak"))
            atomic_write_text(path, files[written])
        return Export(target, len(accepted), len(kept), dataset.summary(), labels_line(dataset.provenance))


def draft_labels(draft: str, rows: Sequence[dict[str, Any]]) -> DraftLabels:
    """How the draft cases ``rows`` of the draft file ``draft`` were labelled: the pool (retrievers and depth from each
    row's ``pool_spec``, else the retrievers its ranks name, depth unknown), the accepted cases and their labels found
    by search outside the pool, the cases marked no answer and the rejected ones."""
    retrievers: dict[str, None] = {}
    depths: set[int | None] = set()
    for row in rows:
        spec = row.get("pool_spec") or {}
        names = spec.get("retrievers") or [name for chunk in row["pool"] for name in chunk.get("ranks", {})]
        retrievers.update(dict.fromkeys(names))
        depths.add(spec.get("depth"))
    accepted = [row for row in rows if row["review"]["status"] == "accepted"]
    found = {row["id"]: sum(c.get(FOUND_BY) == "search" and c["chunk_id"] in row["relevant_chunk_ids"] for c in row["pool"])
             for row in accepted}
    status = [row["review"]["status"] for row in rows]
    return DraftLabels(
        draft=draft,
        pool_retrievers=tuple(retrievers) or ("unknown",),
        pool_depth=max(d for d in depths if d is not None) if depths and None not in depths else None,
        case_ids=tuple(row["id"] for row in accepted),
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
