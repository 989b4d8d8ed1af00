"""Token units of a BERT WordPiece tokenizer without calling it on CJK ideographs and punctuation (issue 39 §2): the
spans are the tokenizer's own, checked on random mixes of every kind of character a corpus may hold, for the model
tuner ships and for BERT tokenizers with other normalizer flags; any other tokenizer is called on the whole text."""

from __future__ import annotations

import json
import random

import pytest
from tokenizers import Tokenizer

from tuner.chunking import TokenUnits, lone_chars, token_units

PIECES = [
    # CJK: common ideographs, extension A, the supplementary planes (extension B), compatibility ideographs, a radical
    "中", "国", "的", "保修期是两年", "㐀㐁", "𠀀", "𪜀", "\uf900", "\uf901", "\ufa0e", "\u2f00",
    # CJK and full-width punctuation, full-width forms
    "，", "。", "、", "“", "”", "（", "）", "《", "》", "……", "——", "：", "；", "！", "？", "「", "」", "〔", "・",
    "ＡＢＣ", "１２３", "ｉＰｈｏｎｅ", "％", "＄", "～", "￥",
    # Latin, with accents precomposed and decomposed, capitals that lower-case to two characters, ligatures
    "a", "Token", "ization", "café", "cafe\u0301", "Ærø", "İstanbul", "ǅ", "ﬁne", "ß", "Ωμέγα", "Москва",
    # digits and numbers
    "0", "1990", "5,999", "2.5", "Ⅻ", "²", "①",
    # combining marks alone or after an ideograph or punctuation
    "\u0301", "\u0308\u0301", "\u20dd", "\u3099", "\u302a",
    # control, zero-width and format characters, the replacement character
    "\x00", "\x07", "\x1f", "\x7f", "\x85", "\u200b", "\u200c", "\u200d", "\ufeff", "\u2060", "\ufffd", "\u00ad",
    # emoji, with modifiers and joiners
    "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇨🇳", "❤\ufe0f",
    # whitespace of every kind
    " ", "  ", "\t", "\n", "\r\n", "\u3000", "\xa0", "\u2028", "\u2009", "\u200a",
    # ASCII punctuation and symbols, special-token look-alikes, other scripts
    ".", ",", "!", "?", "-", "_", "$", "+", "<", ">", "^", "`", "|", "~", "@", "#", "[", "]", "[UNK]", "[CLS]", "[MASK]",
    "ひらがな", "カタカナ", "ｶﾀｶﾅ", "한국어", "ไทย", "עברית", "عربي", "℃", "№", "™", "©",
    # a word longer than WordPiece's 100 characters
    "x" * 120,
]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(PIECES, k=rng.randint(0, 40))) for _ in range(count)]


def _reference(tokenizer: Tokenizer, text: str) -> list[tuple[int, int]]:
    return [(start, end) for start, end in tokenizer.encode(text, add_special_tokens=False).offsets if end > start]


def _variant(**normalizer: object) -> Tokenizer:
    """all-MiniLM-L6-v2's tokenizer with other BertNormalizer flags."""
    config = json.loads(token_units("all-MiniLM-L6-v2").tokenizer.to_str())
    config["normalizer"].update(normalizer)
    return Tokenizer.from_str(json.dumps(config))


def _tokenizers() -> list[Tokenizer]:
    return [
        token_units("all-MiniLM-L6-v2").tokenizer,
        _variant(lowercase=False, strip_accents=False),  # a cased BERT
        _variant(lowercase=False, strip_accents=True),
        _variant(clean_text=False),
    ]


@pytest.mark.parametrize("variant", range(4))
def test_the_spans_are_the_tokenizers_own_on_random_mixes(variant: int) -> None:
    tokenizer = _tokenizers()[variant]
    units = TokenUnits(tokenizer)
    assert units._lone is not None  # the BERT path is taken
    texts = _texts(seed=39 + variant, count=400)
    reference = [_reference(tokenizer, text) for text in texts]
    assert [units(text) for text in texts] == reference
    assert [list(zip(starts.tolist(), ends.tolist())) for starts, ends in units.many(texts)] == reference


def test_the_tokenizer_never_sees_an_ideograph_or_punctuation_it_would_split_off() -> None:
    tokenizer = token_units("all-MiniLM-L6-v2").tokenizer
    seen: list[str] = []

    class Recording:
        def __getattr__(self, name: str) -> object:
            return getattr(tokenizer, name)

        def encode_batch(self, texts: list[str], add_special_tokens: bool) -> object:
            seen.extend(texts)
            return tokenizer.encode_batch(texts, add_special_tokens=add_special_tokens)

    units = TokenUnits(Recording())  # type: ignore[arg-type]
    text = "1990年，范廷颂被擢升为主教（Bishop）。iPhone 15的售价是5999元！"
    assert units(text) == _reference(tokenizer, text)
    # the runs of ideographs and punctuation went as one space each
    assert seen == ["1990 Bishop iPhone 15 5999 "]


def test_lone_chars_are_the_ideographs_and_punctuation_of_a_bert_tokenizer() -> None:
    table = lone_chars(token_units("all-MiniLM-L6-v2").tokenizer)
    assert table is not None
    assert all(table[ord(char)] for char in "中国㐀，。“”（）《》!,.")
    # left to the tokenizer: other planes, compatibility ideographs, full-width letters and digits, symbols the
    # pre-tokenizer does not isolate, whitespace, marks, and characters of an added token ("[UNK]")
    assert not any(table[ord(char)] for char in "𠀀\uf900Ａ１a1℃ \u3000\u0301\u200b[]")


@pytest.mark.parametrize(
    "change",
    [
        {"normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False,
                        "strip_accents": None, "lowercase": True}},
        {"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}},
        {"pre_tokenizer": {"type": "Whitespace"}},
        {"truncation": {"direction": "Right", "max_length": 8, "strategy": "LongestFirst", "stride": 0}},
    ],
)
def test_other_tokenizers_are_called_on_the_whole_text(change: dict[str, object]) -> None:
    config = json.loads(token_units("all-MiniLM-L6-v2").tokenizer.to_str())
    config.update(change)
    tokenizer = Tokenizer.from_str(json.dumps(config))
    assert lone_chars(tokenizer) is None
    text = "1990年，范廷颂被擢升为主教。" * 3
    assert TokenUnits(tokenizer)(text) == _reference(tokenizer, text)


def test_an_added_token_that_needs_a_whole_word_turns_the_bert_path_off() -> None:
    config = json.loads(token_units("all-MiniLM-L6-v2").tokenizer.to_str())
    config["added_tokens"].append({"id": len(config["model"]["vocab"]), "content": "ab", "single_word": True,
                                   "lstrip": False, "rstrip": False, "normalized": False, "special": False})
    tokenizer = Tokenizer.from_str(json.dumps(config))
    assert lone_chars(tokenizer) is None
    # whether it matches depends on its neighbours, which a run handed over as one space would change
    assert TokenUnits(tokenizer)("中ab中") == _reference(tokenizer, "中ab中")
