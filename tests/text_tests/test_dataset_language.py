"""A dataset's language: declared in dataset.yaml, or detected from the corpus; part of its content hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.text_tests.zh_fixture import DOCS, QUERIES
from tuner.cli import main
from tuner.dataset import load_dataset
from tuner.errors import DatasetError


def _write(folder: Path, manifest: str | None = None) -> Path:
    folder.mkdir()
    corpus = [{"doc_id": doc_id, "text": text} for doc_id, text in DOCS]
    golden = [
        {"id": "q1", "question": QUERIES[0][0], "ground_truth": "买家", "keypoints": ["买家"], "relevant_doc_ids": ["return"]}
    ]
    for name, records in (("corpus.jsonl", corpus), ("golden.jsonl", golden)):
        (folder / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    if manifest is not None:
        (folder / "dataset.yaml").write_text(manifest, "utf-8")
    return folder


def test_language_is_detected_without_a_manifest(tmp_path: Path) -> None:
    dataset = load_dataset(_write(tmp_path / "d"))
    assert (dataset.language, dataset.language_source) == ("zh", "detected")


def test_declared_language_wins_and_changes_the_content_hash(tmp_path: Path) -> None:
    detected = load_dataset(_write(tmp_path / "auto"))
    declared = load_dataset(_write(tmp_path / "en", "language: en\n"))
    assert (declared.language, declared.language_source) == ("en", "declared")
    assert declared.content_hash != detected.content_hash
    assert load_dataset(_write(tmp_path / "a2", "language: auto\n")).language_source == "detected"


@pytest.mark.parametrize(
    "manifest,problem",
    [
        ("language: fr\n", "language: must be one of en, zh, auto, got 'fr'"),
        ("lang: zh\n", "unknown key 'lang' (known: language, embedding_model, reranker, query_prompt, document_prompt)"),
        ("- zh\n", "expected a mapping"),
    ],
)
def test_bad_manifest_is_one_line(tmp_path: Path, manifest: str, problem: str) -> None:
    with pytest.raises(DatasetError) as error:
        load_dataset(_write(tmp_path / "d", manifest))
    assert len(error.value.problems) == 1 and problem in error.value.problems[0]
    assert "dataset.yaml" in error.value.problems[0]


def test_validate_reports_how_the_language_was_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(_write(tmp_path / "d"))]) == 0
    # the fixture's titles are empty; its texts hold 93% CJK ideographs among letters (Aurora, X200, Wi-Fi, ...)
    # the first line is the summary; the second counts version metadata
    assert (
        capsys.readouterr()
        .out.splitlines()[0]
        .endswith("; language zh (detected: 93% of letters are CJK, zh from 20%; dataset.yaml can declare it)")
    )
    assert main(["validate", str(_write(tmp_path / "z", "language: zh\n"))]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("; language zh (declared in dataset.yaml)")
