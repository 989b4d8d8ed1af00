"""Importers (outside data → **dataset**): convert ConflictNQ (real and fabricated passages per Natural Questions
question) into the dataset format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tuner.dataset.importers._importing import Collector, ImportResult, content_id, field_text, read_jsonl, skipped_line
from tuner.errors import UserError


def _passages(where: str, record: dict[str, Any], key: str) -> list[tuple[str, str]]:
    """The non-empty passages of list ``key`` with their summaries (none when the key is absent or null)."""
    items = record.get(key)
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(p, dict) and isinstance(p.get("passage"), str) for p in items):
        raise UserError(f"{where}: '{key}' must be a list of objects with a 'passage' string")
    return [(p["passage"].strip(), field_text(where, p, "summary")) for p in items if p["passage"].strip()]


def _aliases(answer: str) -> list[str]:
    """The answer as written, plus the Natural Questions tokenization (``August 8 , 2014``) found in passages."""
    tokenized = answer.replace(",", " ,").replace("'s", " 's")
    return [answer] if tokenized == answer else [answer, tokenized]


def import_conflictnq(source: str | Path) -> ImportResult:
    """Real passages (deduplicated) form the corpus; each fake passage conflicts with its question's first real one.

    A record without an id, a question (``cleaned_question`` or ``question``), a real short answer or a real
    passage is skipped with a note naming its line; a null ``real_answer`` falls back to the short answer, and
    a null fake answer or fake passage list leaves the case without wrong answers or conflicts."""
    collected = Collector()
    conflicts: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for where, record in read_jsonl(Path(source)):
        real = _passages(where, record, "real_passages")
        fake = _passages(where, record, "fake_passages")
        fields = {key: field_text(where, record, key) for key in
                ("id", "question", "cleaned_question", "real_answer", "real_short_answer", "fake_short_answer")}
        question = fields["cleaned_question"] or fields["question"]
        real_answer, fake_answer = fields["real_short_answer"], fields["fake_short_answer"]
        missing = next((key for key, value in (("id", fields["id"]), ("question", question), ("real_short_answer", real_answer),
                                               ("real_passages", real)) if not value), None)
        if missing is not None:
            notes.append(skipped_line(where, missing))
            continue
        relevant = list(dict.fromkeys(collected.text_document(where, "nq", text, title) for text, title in real))
        case: dict[str, Any] = {
            "id": fields["id"],
            "question": question,
            "ground_truth": fields["real_answer"] or real_answer,
            "keypoints": [_aliases(real_answer)],
            "relevant_doc_ids": relevant,
            "category": "conflictnq",
        }
        if fake_answer and fake_answer != real_answer:
            case["wrong_answers"] = [fake_answer]
        collected.case(where, case)
        for text, title in fake:
            doc_id = content_id("nq-fake", text)
            conflicts.setdefault(doc_id, {
                "doc_id": doc_id, "title": title, "text": text, "conflicts_with": relevant[0],
                "kind": "fabricated", "wrong_values": [fake_answer] if fake_answer else [],
            })
    result = collected.result(notes, list(conflicts.values()))
    texts = {doc["doc_id"]: doc["text"] for doc in result.corpus}
    verbatim = sum(any(a in texts[d] for a in case["keypoints"][0] for d in case["relevant_doc_ids"]) for case in result.golden)
    # ConflictNQ short answers are often paraphrases, so a lexical keypoint check is strict on them.
    result.notes.append(f"{verbatim} of {len(result.golden)} short answers occur verbatim in their real passages")
    return result
