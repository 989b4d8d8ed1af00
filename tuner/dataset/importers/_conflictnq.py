"""Importers (outside data → **dataset**): convert ConflictNQ (real and fabricated passages per Natural Questions
question) into the dataset format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tuner.dataset.importers._importing import Collector, ImportResult, content_id, read_jsonl
from tuner.errors import UserError

_FIELDS = ("id", "question", "real_answer", "real_short_answer", "real_passages", "fake_short_answer", "fake_passages")


def _passages(where: str, record: dict[str, Any], key: str) -> list[tuple[str, str]]:
    items = record[key]
    if not isinstance(items, list) or not all(isinstance(p, dict) and isinstance(p.get("passage"), str) for p in items):
        raise UserError(f"{where}: '{key}' must be a list of objects with a 'passage' string")
    return [(p["passage"].strip(), str(p.get("summary") or "")) for p in items if p["passage"].strip()]


def _aliases(answer: str) -> list[str]:
    """The answer as written, plus the Natural Questions tokenization (``August 8 , 2014``) found in passages."""
    tokenized = answer.replace(",", " ,").replace("'s", " 's")
    return [answer] if tokenized == answer else [answer, tokenized]


def import_conflictnq(source: str | Path) -> ImportResult:
    """Real passages (deduplicated) form the corpus; each fake passage conflicts with its question's first real one."""
    collected = Collector()
    conflicts: dict[str, dict[str, Any]] = {}
    skipped = 0
    for where, record in read_jsonl(Path(source), _FIELDS):
        real = _passages(where, record, "real_passages")
        fake = _passages(where, record, "fake_passages")
        real_answer, fake_answer = str(record["real_short_answer"]).strip(), str(record["fake_short_answer"]).strip()
        if not real or not real_answer:
            skipped += 1
            continue
        relevant = list(dict.fromkeys(collected.text_document(where, "nq", text, title) for text, title in real))
        case: dict[str, Any] = {
            "id": str(record["id"]),
            "question": str(record.get("cleaned_question") or record["question"]),
            "ground_truth": str(record["real_answer"]).strip() or real_answer,
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
    notes = [f"{skipped} records without real passages or short answer were skipped"] if skipped else []
    result = collected.result(notes, list(conflicts.values()))
    texts = {doc["doc_id"]: doc["text"] for doc in result.corpus}
    verbatim = sum(any(a in texts[d] for a in case["keypoints"][0] for d in case["relevant_doc_ids"]) for case in result.golden)
    # ConflictNQ short answers are often paraphrases, so a lexical keypoint check is strict on them.
    result.notes.append(f"{verbatim} of {len(result.golden)} short answers occur verbatim in their real passages")
    return result
