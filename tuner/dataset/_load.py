"""Dataset (**dataset** → text analysis): read and validate a dataset folder; every problem becomes one ``file:line:
what is wrong`` line."""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tuner.dataset._provenance import PROVENANCE, read_provenance
from tuner.dataset._model import DATE, FAMILY, Conflict, Dataset, Document, GoldenCase, hash_files
from tuner.errors import DatasetError, UserError
from tuner.io import MalformedLine, jsonl_lines, parse_jsonl_line, read_yaml_mapping
from tuner.text import DeclaredLanguage, Language, detect_language, is_blank, parse_date

CORPUS = "corpus.jsonl"
GOLDEN = "golden.jsonl"
CONFLICTS = "conflicts.jsonl"
MANIFEST = "dataset.yaml"
_DECLARED_LANGUAGES: tuple[DeclaredLanguage, ...] = ("en", "zh", "auto")
MODEL_KEYS = ("embedding_model", "reranker", "query_prompt", "document_prompt")
"""Retrieval settings a manifest may declare as the dataset's defaults; study and command-line settings override them."""
_MODEL_NAMES = ("embedding_model", "reranker")
MANIFEST_KEYS = ("language", *MODEL_KEYS)
LANGUAGE_MODELS: dict[Language, dict[str, str]] = {"zh": {"embedding_model": "multilingual-e5-small"}}
"""The model settings a dataset gets from its language where its manifest does not name them: a Chinese or mixed
dataset gets the multilingual E5 of the default install (``all-MiniLM-L6-v2``, the default otherwise, reads English
only: dense recall@5 0.23 on CMRC 2018 against E5's 0.98; docs/retrieval.md has the measurements)."""

_CORPUS_FIELDS: dict[str, type] = {"doc_id": str, "text": str, "title": str, "metadata": dict}
_GOLDEN_FIELDS: dict[str, type] = {
    "id": str,
    "question": str,
    "ground_truth": str,
    "keypoints": list,
    "relevant_doc_ids": list,
    "category": str,
    "difficulty": str,
    "wrong_answers": list,
    "keypoints_reviewed": bool,
    "stratum": str,
}
_CONFLICT_FIELDS: dict[str, type] = {
    "doc_id": str,
    "text": str,
    "conflicts_with": str,
    "kind": str,
    "severity": str,
    "wrong_values": list,
    "title": str,
    "metadata": dict,
}
_TYPE_NAMES: dict[type, str] = {str: "a string", dict: "an object", list: "a list", bool: "true or false"}


class _Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, where: str, what: str) -> None:
        self.lines.append(f"{where}: {what}")


def _records(path: Path, problems: _Problems) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(file:line, record)`` for each well-formed JSON object line; blank lines are skipped."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.add(str(path), f"cannot read: {exc.strerror}")
        return
    for number, line in jsonl_lines(raw):
        where = f"{path}:{number}"
        try:
            record = parse_jsonl_line(line, first=number == 1)
        except MalformedLine as exc:
            problems.add(where, str(exc))
            continue
        if not isinstance(record, dict):
            problems.add(where, "expected a JSON object")
            continue
        yield where, record


def _check_fields(
    where: str, record: dict[str, Any], fields: dict[str, type], required: tuple[str, ...], problems: _Problems
) -> bool:
    ok = True
    for key in record:
        if key not in fields and not key.startswith("_"):
            problems.add(where, f"unknown field '{key}'")
            ok = False
    for key, expected in fields.items():
        if key not in record:
            if key in required:
                problems.add(where, f"missing field '{key}'")
                ok = False
            continue
        value = record[key]
        if not isinstance(value, expected):
            problems.add(where, f"field '{key}' must be {_TYPE_NAMES[expected]}, got {type(value).__name__}")
            ok = False
        elif key in required and isinstance(value, str) and is_blank(value):
            problems.add(where, f"field '{key}' is empty")
            ok = False
    return ok


def _string_list(where: str, key: str, value: list[Any], problems: _Problems) -> tuple[str, ...] | None:
    if not all(isinstance(item, str) and not is_blank(item) for item in value):
        problems.add(where, f"field '{key}' must be a list of non-empty strings")
        return None
    return tuple(value)


def _keypoints(where: str, value: list[Any], problems: _Problems) -> tuple[tuple[str, ...], ...] | None:
    keypoints: list[tuple[str, ...]] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and not is_blank(item):
            keypoints.append((item,))
        elif isinstance(item, list) and item and all(isinstance(a, str) and not is_blank(a) for a in item):
            keypoints.append(tuple(item))
        else:
            problems.add(where, f"keypoints[{index}] must be a non-empty string or a non-empty list of aliases")
            return None
    return tuple(keypoints)


def document_metadata(value: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A document's ``metadata`` with its reserved keys checked, and a problem line per bad one: ``family`` a
    non-empty string, ``date`` an ISO 8601 date or datetime or a Chinese date, normalized to ISO; other keys are kept
    as they are. The one rule of ``tuner validate`` and of ``tuner serve``'s ``POST /documents``.

    >>> document_metadata({"date": "2024年3月1日", "team": "hr"})
    ({'date': '2024-03-01', 'team': 'hr'}, [])
    >>> document_metadata({"date": "not-a-date"})[1]
    ["field 'metadata.date': 'not-a-date' is not a date (ISO 8601 such as 2024-03-01 or 2024-03-01T09:00:00, or Chinese such as 2024年3月1日)"]
    """
    metadata, problems = dict(value), []
    family = metadata.get(FAMILY)
    if FAMILY in metadata and not (isinstance(family, str) and family.strip()):
        problems.append(f"field 'metadata.{FAMILY}' must be a non-empty string, got {family!r}")
    if DATE in metadata:
        date = parse_date(metadata[DATE]) if isinstance(metadata[DATE], str) else None
        if date is None:
            problems.append(f"field 'metadata.{DATE}': {metadata[DATE]!r} is not a date (ISO 8601 such as 2024-03-01 "
                            "or 2024-03-01T09:00:00, or Chinese such as 2024年3月1日)")
        else:
            metadata[DATE] = date.isoformat()
    return metadata, problems


def _metadata(where: str, value: dict[str, Any], problems: _Problems) -> dict[str, Any]:
    metadata, found = document_metadata(value)
    for problem in found:
        problems.add(where, problem)
    return metadata


def _is_repeat(seen: dict[str, str], field: str, key: str, where: str, problems: _Problems) -> bool:
    """True, with one problem naming the first occurrence, when ``key`` was seen before; else remember it."""
    if key in seen:
        problems.add(where, f"duplicate {field} '{key}' (first at {seen[key]})")
        return True
    seen[key] = where
    return False


def _load_corpus(path: Path, problems: _Problems) -> list[Document]:
    documents: list[Document] = []
    seen: dict[str, str] = {}
    for where, record in _records(path, problems):
        if not _check_fields(where, record, _CORPUS_FIELDS, ("doc_id", "text"), problems):
            continue
        doc_id = record["doc_id"]
        if _is_repeat(seen, "doc_id", doc_id, where, problems):
            continue
        documents.append(Document(doc_id, record["text"], record.get("title", ""), _metadata(where, record.get("metadata", {}), problems)))
    if not documents and not problems.lines:
        problems.add(str(path), "no documents")
    return documents


def _load_golden(path: Path, doc_ids: set[str], problems: _Problems) -> list[GoldenCase]:
    cases: list[GoldenCase] = []
    seen: dict[str, str] = {}
    required = ("id", "question", "ground_truth", "keypoints", "relevant_doc_ids")
    for where, record in _records(path, problems):
        if not _check_fields(where, record, _GOLDEN_FIELDS, required, problems):
            continue
        case_id = record["id"]
        if _is_repeat(seen, "id", case_id, where, problems):
            continue
        keypoints = _keypoints(where, record["keypoints"], problems)
        relevant = _string_list(where, "relevant_doc_ids", record["relevant_doc_ids"], problems)
        wrong = _string_list(where, "wrong_answers", record.get("wrong_answers", []), problems)
        if keypoints is None or relevant is None or wrong is None:
            continue
        if not relevant:
            problems.add(where, "field 'relevant_doc_ids' is empty")
            continue
        if "stratum" in record and is_blank(record["stratum"]):
            problems.add(where, "field 'stratum' is empty (leave it out for a case not drafted)")
            continue
        unknown = [doc_id for doc_id in relevant if doc_id not in doc_ids]
        if unknown:
            problems.add(where, f"relevant_doc_ids name unknown documents: {', '.join(unknown)}")
            continue
        cases.append(
            GoldenCase(
                id=case_id,
                question=record["question"],
                ground_truth=record["ground_truth"],
                keypoints=keypoints,
                relevant_doc_ids=relevant,
                category=record.get("category") or "uncategorized",
                difficulty=record.get("difficulty") or "unspecified",
                wrong_answers=wrong,
                stratum=record.get("stratum"),
            )
        )
    if not cases and not problems.lines:
        problems.add(str(path), "no golden questions")
    return cases


def _load_conflicts(path: Path, doc_ids: set[str], problems: _Problems) -> list[Conflict]:
    conflicts: list[Conflict] = []
    seen: dict[str, str] = {}
    for where, record in _records(path, problems):
        if not _check_fields(where, record, _CONFLICT_FIELDS, ("doc_id", "text", "conflicts_with"), problems):
            continue
        doc_id = record["doc_id"]
        if doc_id in doc_ids:
            problems.add(where, f"doc_id '{doc_id}' is also a corpus document")
            continue
        if _is_repeat(seen, "doc_id", doc_id, where, problems):
            continue
        if record["conflicts_with"] not in doc_ids:
            problems.add(where, f"conflicts_with names unknown document '{record['conflicts_with']}'")
            continue
        wrong = _string_list(where, "wrong_values", record.get("wrong_values", []), problems)
        if wrong is None:
            continue
        conflicts.append(
            Conflict(
                doc_id=doc_id,
                text=record["text"],
                conflicts_with=record["conflicts_with"],
                kind=record.get("kind") or "unspecified",
                severity=record.get("severity") or "unspecified",
                wrong_values=wrong,
                title=record.get("title", ""),
                metadata=_metadata(where, record.get("metadata", {}), problems),
            )
        )
    return conflicts


def _read_manifest(path: Path, problems: _Problems) -> tuple[DeclaredLanguage, dict[str, str]]:
    """``language`` (``auto`` when the file or the key is absent) and the model defaults of the optional
    manifest ``dataset.yaml``."""
    if not path.is_file():
        return "auto", {}
    try:
        manifest = read_yaml_mapping(path, "a dataset manifest, e.g. 'language: zh'")
    except UserError as exc:
        problems.lines.append(str(exc))
        return "auto", {}
    for key in manifest:
        if key not in MANIFEST_KEYS:
            problems.add(str(path), f"unknown key '{key}' (known: {', '.join(MANIFEST_KEYS)})")
    models: dict[str, str] = {}
    for key in MODEL_KEYS:
        value = manifest.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or (key in _MODEL_NAMES and not value.strip()):
            problems.add(str(path), f"{key}: must be {'a model name' if key in _MODEL_NAMES else 'a string'}, got {value!r}")
            continue
        models[key] = value
    language = manifest.get("language", "auto")
    if language not in _DECLARED_LANGUAGES:
        problems.add(str(path), f"language: must be one of {', '.join(_DECLARED_LANGUAGES)}, got {language!r}")
        return "auto", models
    return language, models


def language_model_defaults(language: Language, declared: dict[str, str]) -> dict[str, str]:
    """The model defaults of a dataset in ``language`` whose manifest declares ``declared``: the declared ones over
    :data:`LANGUAGE_MODELS`.

    >>> language_model_defaults("zh", {}), language_model_defaults("zh", {"embedding_model": "m"})
    ({'embedding_model': 'multilingual-e5-small'}, {'embedding_model': 'm'})
    """
    return {**LANGUAGE_MODELS.get(language, {}), **declared}


def manifest_model_defaults(root: str | Path) -> dict[str, str]:
    """The model settings of dataset folder ``root``, for callers that need them before loading the whole dataset:
    those its manifest declares over those of its language (:func:`language_model_defaults`; declared, or detected
    from ``corpus.jsonl`` as :func:`load_dataset` does); a bad manifest raises :class:`DatasetError`."""
    problems = _Problems()
    declared, models = _read_manifest(Path(root) / MANIFEST, problems)
    if problems.lines:
        raise DatasetError(problems.lines)
    if declared == "auto":
        corpus = Path(root) / CORPUS
        # a corpus with problems gets them listed when the dataset is loaded; its readable documents decide here
        documents = _load_corpus(corpus, _Problems()) if corpus.is_file() else []
        declared = detect_language(text for doc in documents for text in (doc.title, doc.text))
    return language_model_defaults(declared, models)


def load_dataset(path: str | Path) -> Dataset:
    """Load and validate a dataset folder.

    The optional manifest ``dataset.yaml`` declares ``language: en | zh | auto`` (default ``auto``: detected
    from the corpus, see :func:`tuner.text.detect_language`) and may name the dataset's default models
    (:data:`MODEL_KEYS`: ``embedding_model``, ``reranker``, ``query_prompt``, ``document_prompt``).

    Raises :class:`DatasetError` listing every problem found (``file:line: what is wrong``), so
    nothing downstream ever sees, or writes anything from, a partly valid dataset.

    >>> ds = load_dataset("data/demo")  # doctest: +SKIP
    >>> ds.summary()  # doctest: +SKIP
    """
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: dataset folder not found")
    problems = _Problems()
    for required in (CORPUS, GOLDEN):
        if not (root / required).is_file():
            problems.add(str(root / required), "missing (a dataset folder needs corpus.jsonl and golden.jsonl)")
    if problems.lines:
        raise DatasetError(problems.lines)
    corpus = _load_corpus(root / CORPUS, problems)
    doc_ids = {doc.doc_id for doc in corpus}
    golden = _load_golden(root / GOLDEN, doc_ids, problems)
    conflicts_path = root / CONFLICTS
    conflicts = _load_conflicts(conflicts_path, doc_ids, problems) if conflicts_path.is_file() else []
    declared, models = _read_manifest(root / MANIFEST, problems)
    try:
        recorded = read_provenance(root / PROVENANCE)
        provenance = None if recorded is None else recorded.describing([case.id for case in golden])
    except ValueError as exc:
        problems.lines.append(str(exc))
        provenance = None
    if problems.lines:
        raise DatasetError(problems.lines)
    optional = [p for p in (conflicts_path, root / MANIFEST) if p.is_file()]
    content_hash = hash_files([root / CORPUS, root / GOLDEN, *optional])  # provenance describes the labels, not part of them
    dataset = Dataset(root, tuple(corpus), tuple(golden), tuple(conflicts), content_hash, provenance=provenance)
    return with_language(dataset, declared, models)


def with_language(dataset: Dataset, declared: DeclaredLanguage, models: dict[str, str]) -> Dataset:
    """``dataset`` with its language (``declared``, or detected from the corpus for ``auto``) and the model defaults
    of that language under the ``models`` its manifest declares."""
    if declared == "auto":
        language = detect_language(dataset.corpus_texts())
        return replace(dataset, language=language, language_source="detected", model_defaults=language_model_defaults(language, models))
    return replace(dataset, language=declared, model_defaults=language_model_defaults(declared, models))
