"""BM25's word rule outside CJK (issue 54 §3): a word of letters of any script stays whole (``yucatán`` was cut into
``yucat`` and ``n``), while ASCII and Chinese text get exactly the tokens of the rule before, and the token rule's
version in the cache keys changed with it."""

from __future__ import annotations

import re
import unicodedata

import pytest

from tuner.dataset.demo import demo_records
from tuner.retrieval._keys import bm25_key
from tuner.text import CJK_CHARS, STOPWORDS_LATIN, STOPWORDS_ZH, TEXT_LAYER_ID, bm25_token_lists, bm25_tokens, normalize_text, segment

_BEFORE = re.compile(f"(?P<cjk>[{CJK_CHARS}]+)|(?P<latin>[a-z0-9]+(?:[.,][0-9]+)*)")


def _tokens_before(text: str) -> list[str]:
    """The rule of ``text-v1`` (9fe7f21): ASCII letter and digit runs, CJK runs segmented, everything else between."""
    tokens: list[str] = []
    for match in _BEFORE.finditer(normalize_text(text)):
        if match.lastgroup == "cjk":
            tokens += [word for word in segment(match.group()) if word not in STOPWORDS_ZH]
        elif match.group() not in STOPWORDS_LATIN:
            tokens.append(match.group())
    return tokens


@pytest.mark.parametrize(("text", "tokens"), [
    ("Mérida, Yucatán", ["mérida", "yucatán"]),
    ("Merida, Yucata\u0301n", ["merida", "yucatán"]),  # a decomposed accent: NFKC composes it
    ("Hà Nội và Thành phố Hồ Chí Minh", ["hà", "nội", "và", "thành", "phố", "hồ", "chí", "minh"]),
    ("Noël à l'hôpital Saint-Étienne", ["noël", "à", "l", "hôpital", "saint", "étienne"]),
    ("Straße in Göttingen, 1,299 €", ["straße", "göttingen", "1,299"]),
    ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # vowel signs and viramas are marks, inside the word
    ("尤卡坦州（Yucatán）的首府是梅里达", ["尤卡坦", "州", "yucatán", "首府", "梅里达"]),
])
def test_a_word_of_any_script_stays_whole(text: str, tokens: list[str]) -> None:
    assert bm25_tokens(text) == tokens


def test_ascii_and_chinese_text_get_the_tokens_of_the_rule_before() -> None:
    texts = [record["text"] for language in ("en", "zh") for record in demo_records(0, language)[0]]
    # and the CJK blocks beside the ideographs (〇, 々, kana, enclosed forms), between words as before
    texts += ["二〇二三年五月，iPhone 15的售价为5999元。", "第①条：价格为１２９９元", "日本の々〆ヶ カタカナ ひらがな", "℃ ㎏ ㈱"]
    assert list(bm25_token_lists(texts)) == [_tokens_before(text) for text in texts]


def test_the_changed_rule_changes_the_bm25_keys() -> None:
    assert TEXT_LAYER_ID.startswith("text-v4-") and TEXT_LAYER_ID in bm25_key("chunks", "en", 1.5, 0.75)
    assert unicodedata.is_normalized("NFC", bm25_tokens("Yucata\u0301n")[0])
