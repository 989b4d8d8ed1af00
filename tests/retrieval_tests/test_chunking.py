from __future__ import annotations

from pathlib import Path

import pytest

from tuner.chunking import chunk_dataset, split_sentences, word_spans
from tuner.dataset import load_dataset

TEXT = "one two three four five six seven eight nine ten"


def test_spans_without_overlap_cover_every_word_once() -> None:
    spans = word_spans(TEXT, 4, 0.0)
    assert [TEXT[s:e] for s, e in spans] == ["one two three four", "five six seven eight", "nine ten"]


def test_overlap_is_a_fraction_of_the_chunk() -> None:
    # size 4, overlap 0.5 -> stride round(4 * 0.5) = 2 words
    spans = word_spans(TEXT, 4, 0.5)
    assert [TEXT[s:e] for s, e in spans] == [
        "one two three four",
        "three four five six",
        "five six seven eight",
        "seven eight nine ten",
    ]


def test_short_text_is_one_chunk_whatever_the_overlap() -> None:
    assert word_spans("a b c", 10, 0.0) == word_spans("a b c", 10, 0.3) == [(0, 5)]


def test_spans_keep_original_whitespace() -> None:
    text = "alpha  beta\n\ngamma delta"
    (start, end), (start2, end2) = word_spans(text, 2, 0.0)
    assert text[start:end] == "alpha  beta" and text[start2:end2] == "gamma delta"


@pytest.mark.parametrize("size,overlap", [(0, 0.0), (5, 1.0), (5, -0.1)])
def test_bad_chunking_is_rejected(size: int, overlap: float) -> None:
    with pytest.raises(ValueError):
        word_spans(TEXT, size, overlap)


def test_chunks_map_back_to_document_spans(tiny_dataset_dir: Path) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    texts = {d.doc_id: d.text for d in dataset.corpus} | {c.doc_id: c.text for c in dataset.conflicts}
    chunks = chunk_dataset(dataset, 12, 0.25)
    assert chunks == chunk_dataset(dataset, 12, 0.25)
    for chunk in chunks:
        assert texts[chunk.doc_id][chunk.start : chunk.end] == chunk.text
        assert chunk.chunk_id == f"{chunk.doc_id}#{chunk.start}-{chunk.end}"
    assert {c.source for c in chunks if c.doc_id.endswith("-2023")} == {"conflict"}
    long_doc = [c for c in chunks if c.doc_id == "security"]
    assert len(long_doc) > 1


def test_sentence_split() -> None:
    assert split_sentences("First one. Second? Third!\nFourth") == ["First one.", "Second?", "Third!", "Fourth"]
    text = "Released on August 8 , 2014 . On August 20 it hit Steam! Why? 3 sequels followed.\nNew line"
    assert split_sentences(text) == [
        "Released on August 8 , 2014 .",
        "On August 20 it hit Steam!",
        "Why?",
        "3 sequels followed.",
        "New line",
    ]
    assert split_sentences("version 2.5 is out. ... ") == ["version 2.5 is out. ..."]
    assert split_sentences("It costs $5. $10 buys two.") == ["It costs $5.", "$10 buys two."]
