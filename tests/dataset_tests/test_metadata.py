"""Version metadata (issue 22 §2): ``family`` and ``date`` on corpus and conflict rows, validated with file:line,
Chinese dates normalized, free keys kept, counted by ``tuner validate``; the demo dates and groups every version."""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import DATE, FAMILY, load_dataset, resolve_dataset
from tuner.text import parse_date
from tests.dataset_tests.test_validation import CASES, DOCS, STALE, _problems, _write

DATED = [{**DOCS[0], "metadata": {FAMILY: "a14", DATE: "二〇二四年三月一日", "status": "current"}},
         {**DOCS[1], "metadata": {DATE: "2024-02-01T09:30:00+08:00"}}]
STALE_DATED = [{**STALE[0], "metadata": {FAMILY: "a14", DATE: "2023年5月1日", "version": 2}}]


def test_reserved_keys_are_normalized_and_free_keys_kept_on_documents_and_conflicts(tmp_path: Path) -> None:
    dataset = load_dataset(_write(tmp_path / "d", DATED, CASES, STALE_DATED))
    assert dataset.corpus[0].metadata == {FAMILY: "a14", DATE: "2024-03-01", "status": "current"}
    assert dataset.corpus[1].metadata == {DATE: "2024-02-01T09:30:00+08:00"}
    assert dataset.conflicts[0].metadata == {FAMILY: "a14", DATE: "2023-05-01", "version": 2}
    assert dataset.metadata_of("d1-old")[FAMILY] == "a14" and dataset.metadata_of("nowhere") == {}


@pytest.mark.parametrize(("where", "metadata", "message"), [
    ("corpus", {DATE: "yesterday"}, "corpus.jsonl:1: field 'metadata.date': 'yesterday' is not a date"),
    ("corpus", {DATE: "2024-02-30"}, "corpus.jsonl:1: field 'metadata.date': '2024-02-30' is not a date"),
    ("corpus", {DATE: 20240301}, "corpus.jsonl:1: field 'metadata.date': 20240301 is not a date"),
    ("conflicts", {FAMILY: ""}, "conflicts.jsonl:1: field 'metadata.family' must be a non-empty string, got ''"),
    ("conflicts", {FAMILY: ["a14"]}, "conflicts.jsonl:1: field 'metadata.family' must be a non-empty string"),
])
def test_a_bad_reserved_key_is_one_line_naming_file_line_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, metadata: dict[str, object], message: str
) -> None:
    corpus = [{**DOCS[0], "metadata": metadata}, DOCS[1]] if where == "corpus" else DOCS
    conflicts = [{**STALE[0], "metadata": metadata}] if where == "conflicts" else STALE
    (problem,) = _problems(_write(tmp_path / "d", corpus, CASES, conflicts), capsys)
    assert message in problem


def test_validate_counts_dated_documents_and_families_with_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _write(tmp_path / "d", DATED, CASES, STALE_DATED)
    assert main(["validate", str(folder)]) == 0
    assert ("version metadata: 2 of 3 documents (corpus and conflicting) have a family, 3 a date; "
            "1 families have more than one version") in capsys.readouterr().out


@pytest.mark.parametrize("name", ["demo", "demo-zh"])
def test_the_demo_dates_every_document_and_puts_each_stale_version_in_its_current_document_family(name: str) -> None:
    demo = load_dataset(resolve_dataset(name))
    for doc in demo.corpus:
        assert doc.metadata[FAMILY] == doc.doc_id and doc.metadata["status"] == "current"
        # the date the page states is the one its metadata carries
        stated = re.search(r"Effective (\w+ \d+, \d{4})|生效日期：(\d{4}年\d{1,2}月\d{1,2}日)", doc.text)
        assert stated is not None
        day = dt.datetime.strptime(stated.group(1), "%B %d, %Y").date() if stated.group(1) else parse_date(stated.group(2))
        assert day is not None and doc.metadata[DATE] == day.isoformat()
    versions: dict[str, list[str]] = defaultdict(list)
    for conflict in demo.conflicts:
        assert conflict.metadata[FAMILY] == conflict.conflicts_with and conflict.metadata["status"] == "superseded"
        # an edition's id ends with its ISO date: the metadata states the same day, older than the current one
        assert conflict.doc_id.endswith(conflict.metadata[DATE]) and conflict.metadata[DATE] < demo.metadata_of(conflict.conflicts_with)[DATE]
        versions[conflict.conflicts_with].append(conflict.doc_id)
    counts = demo.metadata_counts()
    assert counts.with_date == counts.with_family == counts.documents == len(demo.corpus) + len(demo.conflicts)
    assert counts.versioned_families == len(versions) > 0
