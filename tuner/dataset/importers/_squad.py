"""Importers (outside data → **dataset**): convert a SQuAD v1/v2 JSON file into the dataset format; CMRC 2018 and other
SQuAD-shaped sets read the same way.

Shape: ``{"data": [{"title", "paragraphs": [{"context", "id"?, "qas": [{"id", "question", "answers":
[{"text", "answer_start"}], "is_impossible"?}]}]}]}``. A SQuAD file is one JSON document, so a
problem inside it is located by its JSON path (``file: data[3].paragraphs[0].qas[2]: ...``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tuner.dataset.importers._importing import Collector, ImportResult, unique_texts
from tuner.errors import UserError

DEFAULT_CATEGORY = "squad"


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise UserError(f"{path}: not found")
    try:
        return json.loads(path.read_text("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: invalid UTF-8 at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None


def _objects(where: str, item: dict[str, Any], key: str, *, required: bool = True) -> list[dict[str, Any]]:
    """``item[key]`` checked to be a list of JSON objects (an absent optional key is an empty list)."""
    if key not in item and not required:
        return []
    value = item.get(key)
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise UserError(f"{where}: '{key}' must be a list of objects")
    return value


def _text(where: str, item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise UserError(f"{where}: '{key}' must be a string")
    return value.strip()


def _id(where: str, item: dict[str, Any]) -> str:
    """``item["id"]``: a string, or a number as some SQuAD-shaped sets write it."""
    value = item.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text(where, item, "id")


def import_squad(source: str | Path, category: str = DEFAULT_CATEGORY) -> ImportResult:
    """Each paragraph becomes a document, each answerable question a golden case with that paragraph as
    its only relevant document and its answer texts (deduplicated) as the aliases of one keypoint.

    Document ids are the paragraph's ``id`` when the file gives one (CMRC does), else a hash of the
    context, so the same file always yields the same ids; the article title is the document title.
    ``ground_truth`` is the first answer text. Every case gets ``category`` — a fixed label rather than
    the article title, because CMRC has one paragraph per article and per-title groups of ~4 questions
    would be noise in per-category metrics. Unanswerable questions (SQuAD v2 ``is_impossible``, or no
    answer text) and questions with empty text (CMRC's trial split has two) are skipped and counted
    in a note.
    """
    path = Path(source)
    root = _read_json(path)
    if not isinstance(root, dict):
        raise UserError(f"{path}: expected a SQuAD object with a 'data' list")
    collected = Collector()
    unanswerable = blank = 0
    for a, article in enumerate(_objects(str(path), root, "data")):
        at_article = f"{path}: data[{a}]"
        title = _text(at_article, article, "title") if "title" in article else ""
        for p, paragraph in enumerate(_objects(at_article, article, "paragraphs")):
            at_paragraph = f"{at_article}.paragraphs[{p}]"
            context = _text(at_paragraph, paragraph, "context")
            if not context:
                raise UserError(f"{at_paragraph}: 'context' is empty")
            if paragraph.get("id"):
                doc_id = collected.document(at_paragraph, _id(at_paragraph, paragraph), context, title)
            else:
                doc_id = collected.text_document(at_paragraph, "squad", context, title)
            for q, qa in enumerate(_objects(at_paragraph, paragraph, "qas")):
                at_question = f"{at_paragraph}.qas[{q}]"
                question, case_id = _text(at_question, qa, "question"), _id(at_question, qa)
                if not case_id:
                    raise UserError(f"{at_question}: 'id' is empty")
                answers = _objects(at_question, qa, "answers", required=False)
                aliases = unique_texts(_text(f"{at_question}.answers[{n}]", answer, "text") for n, answer in enumerate(answers))
                if qa.get("is_impossible") or not aliases:
                    unanswerable += 1
                    continue
                if not question:
                    blank += 1
                    continue
                collected.case(at_question, {
                    "id": case_id, "question": question, "ground_truth": aliases[0], "keypoints": [aliases],
                    "relevant_doc_ids": [doc_id], "category": category,
                })
    notes = [f"{unanswerable} unanswerable questions (is_impossible, or no answer text) were skipped"] if unanswerable else []
    if blank:
        notes.append(f"{blank} questions with empty text were skipped")
    return collected.result(notes)
