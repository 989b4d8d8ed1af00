"""Convert a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) into the dataset format (retrieval-only)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuner.errors import UserError

NO_REFERENCE = "(retrieval-only: no reference answer)"


@dataclass
class ImportResult:
    """Records ready for :func:`write_dataset` plus one human-readable note per thing that was skipped."""

    corpus: list[dict[str, Any]]
    golden: list[dict[str, Any]]
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _jsonl(path: Path, required: tuple[str, ...]) -> Iterator[tuple[str, dict[str, Any]]]:
    if not path.is_file():
        raise UserError(f"{path}: not found")
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path}:{number}"
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise UserError(f"{where}: invalid UTF-8") from None
            except json.JSONDecodeError as exc:
                raise UserError(f"{where}: malformed JSON: {exc.msg}") from None
            if not isinstance(record, dict):
                raise UserError(f"{where}: expected a JSON object")
            missing = [key for key in required if key not in record]
            if missing:
                raise UserError(f"{where}: missing field '{missing[0]}'")
            yield where, record


def _qrels(path: Path) -> dict[str, list[str]]:
    """Relevant corpus ids per query id, in file order; rows with score <= 0 are not relevant."""
    if not path.is_file():
        raise UserError(f"{path}: not found (pick the split with --split)")
    relevant: dict[str, list[str]] = {}
    lines = path.read_text("utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        columns = line.split("\t")
        if number == 1 and columns[0] == "query-id":
            continue
        if not line.strip():
            continue
        if len(columns) != 3:
            raise UserError(f"{path}:{number}: expected 3 tab-separated columns (query-id, corpus-id, score)")
        query_id, doc_id, score = columns
        try:
            value = float(score)
        except ValueError:
            raise UserError(f"{path}:{number}: score '{score}' is not a number") from None
        if value > 0 and doc_id not in relevant.setdefault(query_id, []):
            relevant[query_id].append(doc_id)
    return relevant


def import_beir(source: str | Path, split: str = "test") -> ImportResult:
    """Corpus from ``corpus.jsonl``; one golden question per query with at least one relevant document."""
    root = Path(source)
    if not root.is_dir():
        raise UserError(f"{root}: BEIR folder not found")
    corpus: list[dict[str, Any]] = []
    empty = 0
    for _where, record in _jsonl(root / "corpus.jsonl", ("_id", "text")):
        text = str(record["text"]).strip() or str(record.get("title") or "").strip()
        if not text:
            empty += 1
            continue
        corpus.append({"doc_id": str(record["_id"]), "title": str(record.get("title") or ""), "text": text})
    doc_ids = {d["doc_id"] for d in corpus}
    relevant = _qrels(root / "qrels" / f"{split}.tsv")
    golden: list[dict[str, Any]] = []
    skipped = 0
    for _where, record in _jsonl(root / "queries.jsonl", ("_id", "text")):
        query_id = str(record["_id"])
        docs = [d for d in relevant.get(query_id, []) if d in doc_ids]
        if not docs or not str(record["text"]).strip():
            skipped += 1
            continue
        golden.append({"id": query_id, "question": str(record["text"]), "ground_truth": NO_REFERENCE, "keypoints": [], "relevant_doc_ids": docs})
    notes = []
    if skipped:
        notes.append(f"{skipped} queries without relevant documents in qrels/{split}.tsv were skipped")
    if empty:
        notes.append(f"{empty} documents with empty text and title were skipped")
    notes.append("no keypoints: the dataset supports retrieval-only studies (no faithfulness objective)")
    return ImportResult(corpus, golden, [], notes)
