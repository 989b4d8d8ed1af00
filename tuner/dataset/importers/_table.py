"""Importers (outside data → **dataset**): convert a table of golden questions — CSV/TSV, JSON Lines, Parquet or a
Hugging Face dataset saved with ``save_to_disk`` — into the dataset format, with a mapping from tuner fields to source
columns.

A mapping is data (:class:`TableMapping`): given as ``--map question=q,answer=a,...``, as a small YAML
file, as a named preset (``ragas``: a ragas testset; ``squad``: the Hugging Face SQuAD/CMRC shape) or
as a combination, later ones overriding earlier ones column by column. Rows are located as
``file:line`` (CSV, JSON Lines) or ``file: row N`` (Parquet, saved datasets) in every error.
"""

from __future__ import annotations

import ast
import csv
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError, model_validator

from tuner.dataset.importers._importing import NO_REFERENCE, Collector, ImportResult, read_jsonl, unique_texts
from tuner.dataset.importers._importing import cell_text as _text
from tuner.dataset._model import DATE
from tuner.errors import UserError, describe_validation_error
from tuner.extras import import_extra
from tuner.io import read_yaml_mapping
from tuner.text import parse_date
from tuner.strict import StrictModel

Rows = Iterator[tuple[str, dict[str, Any]]]
METADATA_COLUMNS = ("date", "family", "status")
"""Columns of a ``--corpus`` table that become the document's ``metadata`` under their own name."""


class Columns(StrictModel):
    """The source column of each tuner field; a dotted name (``answers.text``) reaches into a nested value.

    question: the question text (required). id: the case id (default ``row-N``). answer: the reference
    answer (without one: the keypoints' first aliases joined by "; ", or a retrieval-only placeholder).
    keypoints: the checkable facts. contexts: relevant passage text(s), each becoming a corpus
    document. relevant_doc_ids: ids of relevant documents (of ``--corpus`` or of other rows' contexts).
    doc_id / title: the id and title of the row's context document; date / family / status: its ``metadata``
    (the date read by :func:`tuner.text.parse_date`, ISO or Chinese). category, difficulty, wrong_answers:
    as in ``golden.jsonl``.
    """

    question: str
    id: str | None = None
    answer: str | None = None
    keypoints: str | None = None
    contexts: str | None = None
    relevant_doc_ids: str | None = None
    doc_id: str | None = None
    title: str | None = None
    category: str | None = None
    difficulty: str | None = None
    wrong_answers: str | None = None
    date: str | None = None
    family: str | None = None
    status: str | None = None

    @model_validator(mode="after")
    def _needs_relevant_documents(self) -> Columns:
        if self.contexts is None and self.relevant_doc_ids is None:
            raise ValueError("map 'contexts' or 'relevant_doc_ids': every question needs its relevant documents")
        if any(column is not None for column in (self.doc_id, self.title, *self.metadata.values())) and self.contexts is None:
            raise ValueError("'doc_id', 'title', 'date', 'family' and 'status' describe the context document: map 'contexts' too")
        return self

    @property
    def metadata(self) -> dict[str, str | None]:
        """The columns that become the context document's ``metadata`` (``date``, ``family``, ``status``), by key."""
        return {"date": self.date, "family": self.family, "status": self.status}


class TableMapping(StrictModel):
    """How a table's rows become golden cases.

    In a text cell, a list (keypoints, relevant doc ids, wrong answers) is a JSON or Python list literal
    (``["a", "b"]``) or text split at ``separator``; one keypoint's aliases are split at
    ``alias_separator``. A contexts cell is a list literal or one passage (never split). With
    ``answer_keypoint`` and no ``keypoints`` column, the answer's aliases form the case's one keypoint
    and the first alias is the reference answer; otherwise the answer is the reference answer as written.
    """

    columns: Columns
    separator: str = ";"
    alias_separator: str = "|"
    answer_keypoint: bool = True


PRESETS: dict[str, dict[str, Any]] = {
    # ragas testset columns; its reference is a generated sentence, which a lexical keypoint check would never find verbatim
    "ragas": {"columns": {"question": "user_input", "answer": "reference", "contexts": "reference_contexts"}, "answer_keypoint": False},
    # the Hugging Face SQuAD / CMRC 2018 row: one question with its paragraph and answer spans
    "squad": {"columns": {"id": "id", "question": "question", "answer": "answers.text", "contexts": "context", "title": "title"}},
}


def _map_option(text: str) -> dict[str, str]:
    """``question=q,answer=a`` as a dict; every entry needs a field and a column."""
    pairs: dict[str, str] = {}
    for entry in text.split(","):
        field, _, column = entry.partition("=")
        if not field.strip() or not column.strip():
            raise UserError(f"--map: expected FIELD=COLUMN entries separated by commas, got '{entry}'")
        pairs[field.strip()] = column.strip()
    return pairs


def table_mapping(preset: str | None = None, mapping_file: str | Path | None = None, columns: str | None = None) -> TableMapping:
    """The mapping from a preset, a YAML file (which may name a ``preset`` itself) and ``--map`` entries, in that order."""
    data: dict[str, Any] = read_yaml_mapping(mapping_file, "a table mapping") if mapping_file is not None else {}
    where = str(mapping_file) if mapping_file is not None else "--map"
    name = preset or data.get("preset")
    data = {key: value for key, value in data.items() if key != "preset"}
    if name is not None and name not in PRESETS:
        raise UserError(f"{where}: unknown preset '{name}' (known: {', '.join(PRESETS)})")
    merged: dict[str, Any] = dict(PRESETS[name]) if name else {}
    for key, value in data.items():
        merged[key] = {**merged.get(key, {}), **value} if key == "columns" and isinstance(value, dict) else value
    if columns:
        given = _map_option(columns)
        unknown = [field for field in given if field not in Columns.model_fields]
        if unknown:
            raise UserError(f"--map: unknown field '{unknown[0]}' (fields: {', '.join(Columns.model_fields)})")
        merged["columns"] = {**merged.get("columns", {}), **given}
        where = "--map" if mapping_file is None else f"{mapping_file} with --map"
    if "columns" not in merged:
        raise UserError("table import: give a mapping with --map, --mapping or --preset")
    try:
        return TableMapping.model_validate(merged)
    except ValidationError as exc:
        raise UserError(f"{where}: {describe_validation_error(exc)}") from None


def _csv_rows(path: Path, delimiter: str) -> Rows:
    if not path.is_file():
        raise UserError(f"{path}: not found")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(f"{path}:{line}: invalid UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
        if header is None:
            raise UserError(f"{path}: empty file (expected a header row)")
        start = reader.line_num + 1
        for cells in reader:
            where, start = f"{path}:{start}", reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(header):
                # a short row would read as empty cells and be misreported ("no relevant documents")
                raise UserError(f"{where}: {len(cells)} cells but the header has {len(header)} columns")
            yield where, dict(zip(header, cells))
    except csv.Error as exc:
        raise UserError(f"{path}:{reader.line_num}: malformed CSV: {exc}") from None


def _parquet_rows(path: Path) -> Rows:
    parquet = import_extra("pyarrow.parquet", "reading Parquet", "tables")
    if not path.is_file():
        raise UserError(f"{path}: not found")
    try:
        table = parquet.read_table(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read Parquet: {exc}") from None
    for number, row in enumerate(table.to_pylist(), start=1):
        yield f"{path}: row {number}", row


def _saved_dataset_rows(path: Path, split: str | None) -> Rows:
    """Rows of a Hugging Face ``Dataset`` (or one split of a ``DatasetDict``) written by ``save_to_disk``."""
    datasets = import_extra("datasets", "reading a saved Hugging Face dataset", "hf")
    try:
        loaded = datasets.load_from_disk(str(path))
    except FileNotFoundError:
        raise UserError(f"{path}: not a folder written by datasets' save_to_disk") from None
    if isinstance(loaded, datasets.DatasetDict):
        names = list(loaded)
        chosen = split if split is not None else (names[0] if len(names) == 1 else None)
        if chosen not in loaded:
            raise UserError(f"{path}: pick one of the splits {', '.join(names)} with --split")
        loaded = loaded[chosen]
    for number, row in enumerate(loaded, start=1):
        yield f"{path}: row {number}", row


_READERS: dict[str, Callable[[Path], Rows]] = {
    ".csv": lambda path: _csv_rows(path, ","),
    ".tsv": lambda path: _csv_rows(path, "\t"),
    ".jsonl": read_jsonl,
    ".parquet": _parquet_rows,
}


def table_rows(path: Path, split: str | None = None) -> Rows:
    """``(location, row)`` for each row of a CSV/TSV, JSON Lines or Parquet file, or of a saved dataset folder."""
    if path.is_dir():
        return _saved_dataset_rows(path, split)
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise UserError(f"{path}: unknown table format (expected {', '.join(_READERS)} or a save_to_disk folder)")
    return reader(path)


def _cell(where: str, row: dict[str, Any], column: str) -> Any:
    value: Any = row
    for part in [column] if column in row else column.split("."):
        if not isinstance(value, dict) or part not in value:
            raise UserError(f"{where}: no column '{column}' (columns: {', '.join(map(str, row))})")
        value = value[part]
    return value


def _items(where: str, column: str, value: Any, separator: str | None) -> list[Any]:
    """A list cell: a list as it is; text holding a list literal, parsed; other text split at ``separator``
    (one item when ``separator`` is None); nothing for an empty cell."""
    if isinstance(value, (list, tuple)):
        return list(value)
    text = _text(where, column, value)
    if text.startswith("["):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list):
            return parsed
    if not text:
        return []
    return text.split(separator) if separator is not None else [text]


def _texts(where: str, column: str, value: Any, separator: str | None) -> list[str]:
    return unique_texts(_text(where, column, item) for item in _items(where, column, value, separator))


def _keypoints(where: str, column: str, value: Any, mapping: TableMapping) -> list[list[str]]:
    keypoints = []
    for item in _items(where, column, value, mapping.separator):
        items = item if isinstance(item, (list, tuple)) else _text(where, column, item).split(mapping.alias_separator)
        aliases = unique_texts(_text(where, column, alias) for alias in items)
        if aliases:
            keypoints.append(aliases)
    return keypoints


def _row_metadata(where: str, row: dict[str, Any], columns: dict[str, str | None]) -> dict[str, str]:
    """The metadata keys of ``columns`` (key → column) whose cells are not empty; a date is normalized to ISO 8601 and
    a cell that is no date stops the import with one line naming the row and column."""
    metadata: dict[str, str] = {}
    for key, column in columns.items():
        if column is None or not (value := _text(where, column, _cell(where, row, column))):
            continue
        if key == DATE:
            date = parse_date(value)
            if date is None:
                raise UserError(f"{where}: column '{column}' (date): {value!r} is not a date "
                                "(ISO 8601 such as 2024-03-01, or 2024年3月1日)")
            value = date.isoformat()
        metadata[key] = value
    return metadata


def _row_case(where: str, number: int, row: dict[str, Any], mapping: TableMapping, collected: Collector) -> dict[str, Any] | None:
    """The golden case of one row (its context documents added to ``collected``); None for a row without an answer."""
    columns = mapping.columns

    def cell(column: str) -> Any:
        return _cell(where, row, column)

    question = _text(where, columns.question, cell(columns.question))
    if not question:
        raise UserError(f"{where}: column '{columns.question}' (question) is empty")
    case_id = _text(where, columns.id, cell(columns.id)) if columns.id else f"row-{number}"
    if not case_id:
        raise UserError(f"{where}: column '{columns.id}' (id) is empty")
    ground_truth, keypoints = NO_REFERENCE, []
    if columns.answer:
        split = mapping.answer_keypoint and not columns.keypoints
        answers = _texts(where, columns.answer, cell(columns.answer), mapping.alias_separator if split else None)
        if not answers:
            return None
        ground_truth, keypoints = answers[0], [answers] if split else []
    if columns.keypoints:
        keypoints = _keypoints(where, columns.keypoints, cell(columns.keypoints), mapping)
        if not columns.answer and keypoints:
            ground_truth = "; ".join(aliases[0] for aliases in keypoints)
    relevant = _texts(where, columns.relevant_doc_ids, cell(columns.relevant_doc_ids), mapping.separator) if columns.relevant_doc_ids else []
    if columns.contexts:
        contexts = _texts(where, columns.contexts, cell(columns.contexts), None)
        title = _text(where, columns.title, cell(columns.title)) if columns.title else ""
        metadata = _row_metadata(where, row, columns.metadata)
        if columns.doc_id and contexts:
            doc_id = _text(where, columns.doc_id, cell(columns.doc_id))
            if len(contexts) > 1 or not doc_id:
                raise UserError(f"{where}: with a 'doc_id' column, a row's context is one passage with a non-empty id")
            relevant.append(collected.document(where, doc_id, contexts[0], title, metadata))
        else:
            relevant.extend(collected.text_document(where, "ctx", text, title, metadata) for text in contexts)
    if not relevant:
        raise UserError(f"{where}: no relevant documents (empty '{columns.contexts or columns.relevant_doc_ids}')")
    case: dict[str, Any] = {"id": case_id, "question": question, "ground_truth": ground_truth, "keypoints": keypoints,
                            "relevant_doc_ids": list(dict.fromkeys(relevant))}
    for field, column in (("category", columns.category), ("difficulty", columns.difficulty)):
        if column and (label := _text(where, column, cell(column))):
            case[field] = label
    if columns.wrong_answers and (wrong := _texts(where, columns.wrong_answers, cell(columns.wrong_answers), mapping.separator)):
        case["wrong_answers"] = wrong
    return case


def import_table(source: str | Path, mapping: TableMapping, corpus: str | Path | None = None, split: str | None = None) -> ImportResult:
    """One golden case per row of ``source`` under ``mapping``; contexts given as text become corpus documents
    (identified by content hash unless a ``doc_id`` column names them), ``corpus`` (a table with columns
    ``doc_id``, ``text`` and optionally ``title``, ``date``, ``family``, ``status``) supplies the documents that ``relevant_doc_ids`` name.
    Rows with an empty answer are skipped and counted; any other bad row stops the import at its location."""
    collected = Collector()
    if corpus is not None:
        for where, row in table_rows(Path(corpus)):
            doc_id, text = _text(where, "doc_id", _cell(where, row, "doc_id")), _text(where, "text", _cell(where, row, "text"))
            if not doc_id or not text:
                raise UserError(f"{where}: empty '{'text' if doc_id else 'doc_id'}'")
            metadata = _row_metadata(where, row, {key: key for key in METADATA_COLUMNS if key in row})
            collected.document(where, doc_id, text, _text(where, "title", row.get("title")), metadata)
    unanswered = 0
    for number, (where, row) in enumerate(table_rows(Path(source), split), start=1):
        case = _row_case(where, number, row, mapping, collected)
        if case is None:
            unanswered += 1
        else:
            collected.case(where, case)
    notes = [f"{unanswered} rows with an empty '{mapping.columns.answer}' were skipped"] if unanswered else []
    result = collected.result(notes)
    if not any(case["keypoints"] for case in result.golden):
        result.notes.append("no keypoints: the dataset supports retrieval-only studies (map 'keypoints', or 'answer' with answer_keypoint, for faithfulness)")
    return result
