from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from tuner.chunking import char_units, chunk_dataset, chunk_spans, token_units, unit_ranges, word_units
from tuner.dataset import load_dataset
from tuner.errors import UserError
from tuner.settings import Chunking, RetrievalSettings

TEXT = "one two three four five six seven eight nine ten"


def _words(text: str, size: int, overlap: float) -> list[str]:
    return [text[s:e] for s, e in chunk_spans(text, word_units, size, overlap, snap=False)]


def test_word_spans_without_overlap_cover_every_word_once() -> None:
    assert _words(TEXT, 4, 0.0) == ["one two three four", "five six seven eight", "nine ten"]


def test_overlap_is_a_fraction_of_the_chunk() -> None:
    # size 4, overlap 0.5 -> stride round(4 * 0.5) = 2 words
    assert _words(TEXT, 4, 0.5) == [
        "one two three four",
        "three four five six",
        "five six seven eight",
        "seven eight nine ten",
    ]


def test_legacy_word_stride_rounds_like_before() -> None:
    # size 5, overlap 0.5 -> stride max(1, round(2.5)) = 2 (banker's rounding), as tuner always chunked
    assert unit_ranges(10, [], 5, 0.5) == [(0, 5), (2, 7), (4, 9), (6, 10)]


def test_short_text_is_one_chunk_whatever_the_overlap() -> None:
    assert chunk_spans("a b c", word_units, 10, 0.0, False) == chunk_spans("a b c", word_units, 10, 0.3, False) == [(0, 5)]
    assert (
        chunk_spans("短文。两句。", char_units, 10, 0.0, True)
        == chunk_spans("短文。两句。", char_units, 10, 0.3, True)
        == [(0, 6)]
    )


def test_spans_keep_original_whitespace() -> None:
    text = "alpha  beta\n\ngamma delta"
    assert _words(text, 2, 0.0) == ["alpha  beta", "gamma delta"]


@pytest.mark.parametrize("size,overlap", [(0, 0.0), (5, 1.0), (5, -0.1)])
def test_bad_chunking_is_rejected(size: int, overlap: float) -> None:
    with pytest.raises(ValueError):
        unit_ranges(10, [], size, overlap)


def test_snapping_ends_chunks_at_the_last_sentence_end_that_fits() -> None:
    # 12 units, sentences open at 4 and 9, size 10: 9 > 0 + 0.5*10, so the first chunk is [0, 9)
    assert unit_ranges(12, [4, 9], 10, 0.0) == [(0, 9), (9, 12)]
    # only the sentence start 4 fits, and a 4-unit chunk is under half of 10: cut at 10 instead
    assert unit_ranges(12, [4, 11], 10, 0.0) == [(0, 10), (10, 12)]


def test_overlap_starts_the_next_chunk_at_a_sentence_when_one_is_inside() -> None:
    # size 10, overlap 0.3: the first chunk [0, 9) asks for the next start at round(9*0.7) = 6; the first
    # sentence start at or after it and before 9 is 7
    assert unit_ranges(14, [3, 7, 9], 10, 0.3)[:2] == [(0, 9), (7, 14)]
    # 3 is too short to end on, so [0, 10); the next start round(10*0.7) = 7 has no sentence start in [7, 10]
    assert unit_ranges(14, [3, 12], 10, 0.3)[:2] == [(0, 10), (7, 14)]


def test_chars_snap_to_chinese_sentence_ends() -> None:
    text = "第一句话。第二句话！「第三句。」第四句"
    chunks = [text[s:e] for s, e in chunk_spans(text, char_units, 12, 0.0, True)]
    assert chunks == ["第一句话。第二句话！", "「第三句。」第四句"]


def test_chars_count_spaces_but_chunks_never_start_or_end_with_one() -> None:
    text = "One short line. Another short line. A third one here."
    chunks = [text[s:e] for s, e in chunk_spans(text, char_units, 36, 0.0, True)]
    assert chunks == ["One short line. Another short line.", "A third one here."]


ZH_SENTENCES = [
    "本店的退货期限是收到商品后的三十天内。",
    "会员购买Aurora X200笔记本电脑可以享受两年保修！",
    "快递通常在三到五个工作日内送达，偏远地区可能需要更久。",
    "如果商品在运输途中损坏，请在四十八小时内联系客服；",
    "客服热线的工作时间是每天早上九点到晚上九点。",
    "“价格以下单当天的页面显示为准。”",
    "使用优惠券时，订单金额必须达到２００元以上？",
    "发票会在订单完成后的七天内通过电子邮件发送给您。",
]


def _zh_document(length: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < length:
        parts.append(ZH_SENTENCES[len(parts) * 5 % len(ZH_SENTENCES)])
    return "".join(parts)


@pytest.mark.parametrize("size", [200, 400])
def test_median_chinese_chunk_is_within_ten_percent_of_chunk_size(size: int) -> None:
    text = _zh_document(5000)
    spans = chunk_spans(text, char_units, size, 0.0, True)
    lengths = [e - s for s, e in spans]
    assert max(lengths) <= size
    assert abs(statistics.median(lengths) - size) <= 0.1 * size
    assert all(text[e - 1] in "。！？；”" for _, e in spans[:-1])  # every chunk but the last ends a sentence


def test_tokens_are_the_embedding_models_tokens() -> None:
    units = token_units("all-MiniLM-L6-v2")
    text = "Tokenization splits unfamiliar words."
    spans = units(text)
    # bert-base-uncased WordPiece: Token, ##ization, splits, unfamiliar, words, .
    assert [text[s:e] for s, e in spans][:2] == ["Token", "ization"]
    assert spans[-1] == (len(text) - 1, len(text))
    chunks = chunk_spans(text + " " + text, units, len(spans), 0.0, True)
    assert [c[1] - c[0] for c in chunks] == [len(text), len(text)]


def test_chinese_median_in_tokens_is_within_ten_percent() -> None:
    text = _zh_document(5000)
    units = token_units("all-MiniLM-L6-v2")
    spans = chunk_spans(text, units, 256, 0.0, True)
    counts = [len(units(text[s:e])) for s, e in spans]
    assert max(counts) <= 256 and abs(statistics.median(counts) - 256) <= 25.6


def test_chunks_map_back_to_document_spans(tiny_dataset_dir: Path) -> None:
    dataset = load_dataset(tiny_dataset_dir)
    texts = {d.doc_id: d.text for d in dataset.corpus} | {c.doc_id: c.text for c in dataset.conflicts}
    for unit in ("tokens", "chars", "words"):
        chunking = RetrievalSettings(chunk_size=12, chunk_overlap=0.25, chunk_unit=unit).chunking  # type: ignore[arg-type]
        chunks = chunk_dataset(dataset, chunking)
        assert chunks == chunk_dataset(dataset, chunking)
        for chunk in chunks:
            assert texts[chunk.doc_id][chunk.start : chunk.end] == chunk.text
            assert chunk.chunk_id == f"{chunk.doc_id}#{chunk.start}-{chunk.end}"
        assert {c.source for c in chunks if c.doc_id.endswith("-2023")} == {"conflict"}
        assert len([c for c in chunks if c.doc_id == "security"]) > 1


def test_words_are_refused_for_chinese(tiny_dataset_dir: Path) -> None:
    dataset = replace(load_dataset(tiny_dataset_dir), language="zh")
    with pytest.raises(UserError, match="chunk_unit 'words'"):
        chunk_dataset(dataset, Chunking(120, "words", 0.0))
