"""Importers (outside data → **dataset**): convert a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) into
the dataset format (retrieval-only)."""

from __future__ import annotations

from pathlib import Path

from tuner.dataset.importers._importing import NO_REFERENCE, Collector, ImportResult, field_text, read_jsonl, skipped_line
from tuner.errors import UserError


def _qrels(path: Path) -> dict[str, list[str]]:
    """Relevant corpus ids per query id, in file order; rows with score <= 0 are not relevant."""
    if not path.is_file():
        raise UserError(f"{path}: not found (pick the split with --split)")
    relevant: dict[str, list[str]] = {}
    lines = path.read_text("utf-8-sig").splitlines()
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
    """Corpus from ``corpus.jsonl``; one golden question per query with at least one relevant document. A
    document or query whose ``_id`` is null or empty is skipped with a note naming its line (null text or
    title is empty, never the text "None")."""
    root = Path(source)
    if not root.is_dir():
        raise UserError(f"{root}: BEIR folder not found")
    collected = Collector()
    empty = 0
    notes: list[str] = []
    for where, record in read_jsonl(root / "corpus.jsonl", ("_id", "text")):
        doc_id, title = field_text(where, record, "_id"), field_text(where, record, "title")
        text = field_text(where, record, "text") or title
        if not doc_id:
            notes.append(skipped_line(where, "_id"))
            continue
        if not text:
            empty += 1
            continue
        collected.document(where, doc_id, text, title)
    relevant = _qrels(root / "qrels" / f"{split}.tsv")
    skipped = 0
    for where, record in read_jsonl(root / "queries.jsonl", ("_id", "text")):
        query_id, question = field_text(where, record, "_id"), field_text(where, record, "text")
        if not query_id or not question:
            notes.append(skipped_line(where, "text" if query_id else "_id"))
            continue
        docs = [d for d in relevant.get(query_id, []) if collected.has_document(d)]
        if not docs:
            skipped += 1
            continue
        collected.case(where, {"id": query_id, "question": question, "ground_truth": NO_REFERENCE, "keypoints": [], "relevant_doc_ids": docs})
    if skipped:
        notes.append(f"{skipped} queries without relevant documents in qrels/{split}.tsv were skipped")
    if empty:
        notes.append(f"{empty} documents with empty text and title were skipped")
    notes.append("no keypoints: the dataset supports retrieval-only studies (no faithfulness objective)")
    return collected.result(notes)
