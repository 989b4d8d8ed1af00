from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN

from tuner.text import STOPWORDS_ZH, bm25_tokens, normalize_text, segment, word_count


def _old_english_rule(text: str) -> list[str]:
    """tuner's BM25 tokens before the text layer, kept here as the reference English must still match."""
    stop = frozenset(STOPWORDS_EN)
    return [t for t in re.findall(r"[a-z0-9]+(?:[.,][0-9]+)*", text.lower()) if t not in stop]


ENGLISH = [
    "The Aurora X200 laptop costs $1,299 and has 16 GB of memory.",
    "Customers may return any product within 30 days (v2.5, e.g. refunds) — see §4!",
    "Mercury Logistics delivers parcels to 28 countries in Europe.\nWi-Fi 6 covers 200 m2.",
]


def test_english_tokens_are_unchanged() -> None:
    for text in ENGLISH:
        assert bm25_tokens(text) == _old_english_rule(text)
    assert bm25_tokens(ENGLISH[0]) == ["aurora", "x200", "laptop", "costs", "1,299", "has", "16", "gb", "memory"]


def test_chinese_is_segmented_into_words_without_stopwords_or_punctuation() -> None:
    assert bm25_tokens("退货的运费由买家承担。") == ["退货", "运费", "买家", "承担"]
    assert "的" in STOPWORDS_ZH and "由" in STOPWORDS_ZH


def test_mixed_text_keeps_product_names_and_numbers() -> None:
    assert bm25_tokens("Aurora X210的售价是8999元，比X200贵1,500元") == [
        "aurora", "x210", "售价", "8999", "元", "比", "x200", "贵", "1,500", "元",
    ]  # fmt: skip


def test_full_width_digits_and_letters_fold_to_ascii() -> None:
    assert normalize_text("ＡＵＲＯＲＡ　Ｘ２００，１５元") == "aurora x200,15元"
    assert bm25_tokens("顺丰需要另付１５元") == bm25_tokens("顺丰需要另付15元")
    assert bm25_tokens("ＡＵＲＯＲＡ") == ["aurora"]


def test_english_stopwords_inside_chinese_text_are_dropped() -> None:
    assert bm25_tokens("the Mercury路由器") == ["mercury", "路由器"]


def test_word_count_is_whitespace_words_in_english_and_segmented_words_in_chinese() -> None:
    assert word_count("Customers may return any product within 30 days.") == 8
    assert word_count("退货期为三十天") == len(segment("退货期为三十天"))
    assert word_count("Nimbus X2的保修期是两年。") == 2 + len(segment("的保修期是两年"))
