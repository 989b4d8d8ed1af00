from __future__ import annotations

import random
import re
import unicodedata

from bm25s.stopwords import STOPWORDS_EN

from tuner.text import STOPWORDS_LATIN, STOPWORDS_ZH, bm25_tokens, normalize_text, segment, word_count


def _old_english_rule(text: str) -> list[str]:
    """tuner's BM25 tokens before the text layer, kept here as the reference English must still match."""
    stop = frozenset(STOPWORDS_EN)
    return [t for t in re.findall(r"[a-z0-9]+(?:[.,][0-9]+)*", text.lower()) if t not in stop]


ENGLISH = [
    "The Aurora X200 laptop costs $1,299 and has 16 GB of memory.",
    "Customers may return any product within 30 days (v2.5, e.g. refunds) — see §4!",
    "Mercury Logistics delivers parcels to 28 countries in Europe.\nWi-Fi 6 covers 200 m2.",
]


def test_the_english_stopwords_are_bm25s_list() -> None:
    assert STOPWORDS_LATIN == frozenset(STOPWORDS_EN)


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
    assert normalize_text("\u3131\u314f") == "\uac00"  # compatibility jamo fold, then compose


# characters whose NFKC is one other character beside ones it composes or reorders with: half-width katakana and
# their voiced marks, compatibility and conjoining jamo, combining marks of several classes, compatibility ideographs
NFKC_PIECES = [
    "中文", "，", "。", "（", "）", "：", "１２３", "ＡＢｃ", "\u3000", "ｶ", "ﾞ", "ﾟ", "ｱ", "\u3131", "\u314f", "\u1100",
    "\u1161", "\u11a8", "\uffa1", "\uffc2", "e", "\u0301", "\u0323", "\u0308", "\u0345", "\u3099", "\u309a", "か",
    "\uf900", "\uf91f", "\u2f00", "ﬁ", "Å", "\u212b", "Ω", "\u2126", "½", "²", "①", "\u1e9b", "\u0387", "Σ", "ΑΣ",
    "İ", "\U0001d400", "\U0002f800", "\ud800", " ", "\n", "a",
]


def test_normalize_text_is_nfkc_then_lower_case_for_every_mix() -> None:
    rng = random.Random(39)
    texts = ["".join(rng.choices(NFKC_PIECES, k=rng.randint(1, 12))) for _ in range(20_000)]
    texts += [f"a{chr(code)}\u0301{chr(code)}ﾞ" for code in range(0x10000) if not 0xD800 <= code < 0xE000]
    assert [normalize_text(text) for text in texts] == [unicodedata.normalize("NFKC", text).lower() for text in texts]
    assert bm25_tokens("顺丰需要另付１５元") == bm25_tokens("顺丰需要另付15元")
    assert bm25_tokens("ＡＵＲＯＲＡ") == ["aurora"]


def test_english_stopwords_inside_chinese_text_are_dropped() -> None:
    assert bm25_tokens("the Mercury路由器") == ["mercury", "路由器"]


def test_word_count_is_whitespace_words_in_english_and_segmented_words_in_chinese() -> None:
    assert word_count("Customers may return any product within 30 days.") == 8
    assert word_count("退货期为三十天") == len(segment("退货期为三十天"))
    assert word_count("Nimbus X2的保修期是两年。") == 2 + len(segment("的保修期是两年"))
