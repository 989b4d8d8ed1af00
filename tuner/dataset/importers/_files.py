"""Importers (documents → **dataset**): ``tuner import files``: a folder of documents becomes a knowledge base
(``corpus.jsonl``), re-imported incrementally.

Each file's ``doc_id`` is its path relative to the source folder (with ``/``), so ids are stable across re-imports.
``metadata`` holds ``path``, ``mtime``, ``size``, any YAML front matter and the version family and date found by
:func:`infer_version` (or given by a mapping file), with how each was found under ``metadata.inferred``. A state file
in the destination remembers each file's sha256: a re-import converts only new and changed files and reports added,
changed and removed ones. The output is written through a staging folder and validated before it replaces the old one.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tuner.dataset._kb import load_knowledge_base
from tuner.dataset._load import CORPUS
from tuner.dataset.importers._converters import CONVERTER_VERSION, CONVERTERS, convert_file
from tuner.errors import ConversionError, DatasetError, UserError
from tuner.io import atomic_directory, atomic_write_json, load_yaml, write_jsonl
from tuner.progress import Reporter, SilentReporter
from tuner.text import find_dates, normalize_text

STATE = ".tuner-import-state.json"

_VERSION_MARKS = (
    ("version", re.compile(r"(?:^|[\s_\-.])(?P<v>v\d+(?:\.\d+)*)(?=$|[\s_\-.（(])", re.IGNORECASE)),
    ("revision", re.compile(r"[（(](?P<v>\d{4}\s*年?\s*(?:修订|修正|版|修订版)?)[)）]")),
    ("revision", re.compile(r"(?P<v>第[一二三四五六七八九十\d]+版|修订版|修订稿|修正版|最新版|终版|定稿|征求意见稿|草案)")),
    ("revision", re.compile(r"(?:^|[\s_\-.])(?P<v>rev\d+|final|draft)(?=$|[\s_\-.])", re.IGNORECASE)),
)
_YEAR_IN_MARK = re.compile(r"(?P<y>(?:19|20)\d\d)")
_SEPARATORS = re.compile(r"[\s_\-.·,，、（）()\[\]【】]+")


@dataclass(frozen=True)
class Version:
    """A document's version family, date (ISO ``YYYY-MM-DD``) and version label, and the rule that found each."""

    family: str
    family_rule: str
    date: str | None = None
    date_rule: str | None = None
    label: str | None = None


def _day(iso: str) -> str:
    """A month (``2023-05``) is dated on its first day: the reserved ``date`` key holds full dates."""
    return iso if len(iso) == 10 else f"{iso}-01"


def infer_version(doc_id: str, title: str) -> Version:
    """The family and date of ``doc_id`` from its file name and ``title``.

    Version marks (``_v2``, ``v1.3``, ``（2024年修订）``, ``修订版``, ``final``) and dates (``2023-05``, ``2023年5月``)
    are cut out of the file name; what is left, normalized and under the same folder, names the family, so
    ``policy_v1.md`` and ``policy_v2.md`` are one family. The date comes from the file name, else the title, else a
    year in a revision mark.

    >>> v = infer_version("hr/休假制度（2024年修订）.docx", "休假制度")
    >>> (v.family, v.family_rule, v.date, v.date_rule)
    ('hr/休假制度', 'name-without-version', '2024-01-01', 'name:revision-year')
    >>> infer_version("docs/Policy_2023-05.md", "Policy").date
    '2023-05-01'
    """
    folder, _, name = doc_id.rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    rest, label, date, date_rule = stem, None, None, None
    for mention in reversed(find_dates(stem)):
        date, date_rule = date or _day(mention.iso), "name"
        rest = rest[: mention.start] + " " + rest[mention.end:]
    for _, pattern in _VERSION_MARKS:
        match = pattern.search(rest)
        if match:
            label = label or match["v"]
            year = _YEAR_IN_MARK.search(match["v"])
            if date is None and year:
                date, date_rule = f"{year['y']}-01-01", "name:revision-year"
            rest = rest[: match.start("v")] + " " + rest[match.end("v"):]
    if date is None:
        mentions = find_dates(title)
        if mentions:
            date, date_rule = _day(mentions[0].iso), "title"
    core = _SEPARATORS.sub(" ", normalize_text(rest)).strip()
    if not core:
        core = _SEPARATORS.sub(" ", normalize_text(stem)).strip()
    rule = "name-without-version" if (label or date_rule == "name") else "name"
    family = f"{folder}/{core}" if folder else core
    return Version(family, rule, date, date_rule, label)


def _iso_date(value: Any, where: str) -> str:
    text = value.isoformat() if isinstance(value, dt.date) else str(value).strip()
    try:
        (dt.datetime if "T" in text or " " in text else dt.date).fromisoformat(text)
    except ValueError:
        raise UserError(f"{where}: date '{text}' is not ISO 8601 (YYYY-MM-DD or a datetime)") from None
    return text


def read_family_mapping(path: Path) -> dict[str, dict[str, str]]:
    """``doc_id`` → ``{"family": ..., "date": ...}`` (either may be absent) from a CSV (header ``doc_id,family,date``)
    or a YAML mapping ``doc_id: {family, date}``; a bad row is one :class:`UserError` naming its line or key."""
    if not path.is_file():
        raise UserError(f"{path}: mapping file not found")
    entries: dict[str, dict[str, str]] = {}
    if path.suffix.lower() in {".yaml", ".yml"}:
        try:
            loaded = load_yaml(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: not valid YAML ({getattr(exc, 'problem', None) or type(exc).__name__})") from None
        if not isinstance(loaded, dict):
            raise UserError(f"{path}: expected a mapping of doc_id to {{family, date}}")
        rows = [(f"{path}: {doc_id}", str(doc_id), value) for doc_id, value in loaded.items()]
    else:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            if reader.fieldnames is None or "doc_id" not in reader.fieldnames:
                raise UserError(f"{path}:1: the header must name a doc_id column (and family and/or date)")
            rows = [(f"{path}:{n}", (r.get("doc_id") or "").strip(), r) for n, r in enumerate(reader, start=2)]
    for where, doc_id, value in rows:
        if not isinstance(value, dict) or not doc_id:
            raise UserError(f"{where}: expected a doc_id with family and/or date")
        unknown = set(value) - {"doc_id", "family", "date"}
        if unknown:
            raise UserError(f"{where}: unknown key '{sorted(unknown)[0]}' (expected family, date)")
        entry: dict[str, str] = {}
        if value.get("family"):
            entry["family"] = str(value["family"]).strip()
        if value.get("date"):
            entry["date"] = _iso_date(value["date"], where)
        entries[doc_id] = entry
    return entries


@dataclass
class FilesImport:
    """What one run did: doc ids added / changed / removed / unchanged, and ``(path, reason)`` per file not imported
    (unreadable, empty, a bad name or front matter, a link out of the source folder)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0
    unmapped: list[str] = field(default_factory=list)

    @property
    def documents(self) -> int:
        return len(self.added) + len(self.changed) + len(self.unchanged)


def _read_state(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        files = state["files"] if state.get("converter") == CONVERTER_VERSION else {}
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, AttributeError):
        raise UserError(f"{path}: unreadable import state; delete it to re-import everything") from None
    return dict(files)


def _metadata(path: Path, doc_id: str, converted_front: dict[str, Any], version: Version,
              mapped: dict[str, str] | None) -> dict[str, Any]:
    stat = path.stat()
    metadata: dict[str, Any] = {**converted_front, "path": doc_id, "size": stat.st_size,
                                "mtime": dt.datetime.fromtimestamp(stat.st_mtime, dt.UTC).isoformat(timespec="seconds")}
    inferred = {"family": version.family_rule}
    metadata["family"] = version.family
    if version.date is not None and version.date_rule is not None:
        metadata["date"], inferred["date"] = version.date, version.date_rule
    if version.label is not None:
        metadata["version"] = version.label
    for key in ("family", "date"):
        if converted_front.get(key):
            where = f"{doc_id}: front matter"
            metadata[key] = _iso_date(converted_front[key], where) if key == "date" else str(converted_front[key])
            inferred[key] = "front-matter"
    for key, value in (mapped or {}).items():
        metadata[key], inferred[key] = value, "mapping"
    metadata["inferred"] = inferred
    return metadata


def shown_path(path: Path) -> str:
    """``path`` as it can be printed: bytes of a name that are not UTF-8 as ``\\xff`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _sources(source: Path, follow_links: bool) -> tuple[list[tuple[str, Path]], int, list[tuple[str, str]]]:
    """``(doc_id, path)`` of every file with a converter under ``source`` (hidden ones left out), how many others,
    and ``(path, reason)`` of those refused: a name that is not UTF-8, a link to a file outside ``source`` (unless
    ``follow_links``), a link whose target does not exist."""
    files, skipped, refused = [], 0, []
    inside = source.resolve()
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_symlink() and not path.exists():
            refused.append((shown_path(path), "a link to nothing (its target does not exist): skipped"))
            continue
        if not path.is_file():
            continue
        if path.suffix.lower() not in CONVERTERS:
            skipped += 1
        elif shown_path(relative) != str(relative):
            refused.append((shown_path(path), "the file name is not valid UTF-8: rename the file"))
        elif not follow_links and path.is_symlink() and not path.resolve().is_relative_to(inside):
            refused.append((str(path), "a link to a file outside the source folder: not followed (--follow-links imports it)"))
        else:
            files.append((relative.as_posix(), path))
    return files, skipped, refused


def import_files(source: Path, destination: Path, *, families: Path | None = None, strict: bool = False,
                 force: bool = False, follow_links: bool = False, reporter: Reporter | None = None) -> FilesImport:
    """Convert every supported file under ``source`` into ``destination/corpus.jsonl`` (see the module doc).

    Files that cannot be imported are listed in the result and left out; with ``strict`` any of them is a
    :class:`UserError` and nothing is written. Links to files outside ``source`` are such files unless
    ``follow_links``. A destination holding a dataset this command did not write is replaced only with ``force``.
    """
    reporter = reporter or SilentReporter()
    if not source.is_dir():
        raise UserError(f"{source}: source folder not found")
    if destination.exists() and not destination.is_dir():
        raise UserError(f"{destination}: exists and is not a folder")
    if (destination / CORPUS).is_file() and not (destination / STATE).is_file() and not force:
        raise UserError(f"{destination}: holds a dataset not written by 'tuner import files'; pass --force to replace it")
    mapping = read_family_mapping(families) if families is not None else {}
    previous = _read_state(destination / STATE)
    files, skipped, refused = _sources(source, follow_links)
    result = FilesImport(skipped=skipped, failed=refused)
    state: dict[str, dict[str, Any]] = {}
    records: list[dict[str, Any]] = []
    with reporter.task(f"importing {len(files)} files", len(files)) as task:
        for doc_id, path in files:
            task.advance()
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            known = previous.get(doc_id)
            if known is not None and known.get("sha256") == digest:
                entry = known
                result.unchanged.append(doc_id)
            else:
                try:
                    converted = convert_file(path, data)
                except ConversionError as exc:
                    result.failed.append((str(path), str(exc)))
                    continue
                entry = {"sha256": digest, "title": converted.title, "text": converted.text, "front_matter": converted.front_matter}
                (result.added if known is None else result.changed).append(doc_id)
            state[doc_id] = entry
            version = infer_version(doc_id, entry["title"])
            try:
                metadata = _metadata(path, doc_id, entry["front_matter"], version, mapping.get(doc_id))
            except UserError as exc:  # a bad date in the file's own front matter fails that file only
                result.failed.append((str(path), str(exc).removeprefix(f"{doc_id}: ")))
                continue
            records.append({"doc_id": doc_id, "title": entry["title"], "text": entry["text"], "metadata": metadata})
    failed_ids = {Path(path).relative_to(source).as_posix() for path, _ in result.failed if Path(path).is_relative_to(source)}
    # a file that was imported before and fails now is reported as failed, not as removed
    result.removed = sorted(set(previous) - set(state) - failed_ids)
    result.unmapped = sorted(set(mapping) - set(state))
    if strict and result.failed:
        raise UserError(f"{source}: {len(result.failed)} file(s) could not be imported (--strict); nothing written")
    if not records:
        first = f"; {len(result.failed)} could not be imported, the first: {': '.join(result.failed[0])}" if result.failed else ""
        raise UserError(f"{source}: no importable files ({', '.join(sorted(CONVERTERS))}){first}")
    with atomic_directory(destination) as staging:
        write_jsonl(staging / CORPUS, records)
        atomic_write_json(staging / STATE, {"converter": CONVERTER_VERSION, "files": state})
        try:
            load_knowledge_base(staging)
        except DatasetError as exc:  # said of the destination: the staging folder is gone when the user reads it
            raise DatasetError([problem.replace(str(staging), str(destination)) for problem in exc.problems]) from None
    return result
