"""Text analysis (dataset → **text analysis** → chunks): normalization and BM25 tokens, script by script: runs of
letters and digits of any other script are words (the English rule on ASCII text), CJK runs are segmented."""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np

from tuner.text._language import CJK_CHARS
from tuner.text._segment import SEGMENTER, segment, segmenter
from tuner.text._stopwords import STOPWORDS_LATIN, STOPWORDS_ZH

_ASCII_RUN = re.compile("[a-z0-9]+(?:[.,][0-9]+)*")
"""The word rule on ASCII text (the English rule tuner always used): :func:`_word_rule` gives the same tokens there,
this is its fast path."""
_CJK_BLOCKS = "\u2e80-\u33ff"
"""U+2E80–U+33FF: CJK radicals, symbols and punctuation (``〇``, ``々``), kana, bopomofo and enclosed CJK: left out of words, as before
the word rule read Unicode letters, so Chinese text keeps its terms."""
_CJK_RUN = re.compile(f"[{CJK_CHARS}]")


@lru_cache(maxsize=1)
def _word_rule() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The word rule outside CJK ideographs (a run of letters, digits and combining marks of any script, ``yucatán``,
    ``nội``, ``naïve``; a number keeping its inner ``.``/``,``), alone and beside CJK runs. Compiled on first use: the
    marks' class (Unicode categories Mn, Mc, Me, which ``\\w`` leaves out: the vowel signs of Hindi, a letter whose
    accent NFKC cannot compose) is read from the Unicode database."""
    marks = "".join(f"{chr(first)}-{chr(last)}" for first, last in _mark_ranges())
    run = f"(?:[^\\W_{_CJK_BLOCKS}{CJK_CHARS}]|[{marks}])+(?:[.,][0-9]+)*"
    return re.compile(run), re.compile(f"(?P<cjk>[{CJK_CHARS}]+)|(?P<latin>{run})")


def _mark_ranges() -> list[tuple[int, int]]:
    """The code point ranges of combining marks in the planes that have them (Basic and Supplementary Multilingual),
    without those of :data:`_CJK_BLOCKS` (ideographic tone marks, kana voicing marks)."""
    ranges: list[tuple[int, int]] = []
    start = None
    for code in range(0x20001):
        mark = code < 0x20000 and unicodedata.category(chr(code)).startswith("M")
        if mark and start is None:
            start = code
        elif not mark and start is not None:
            ranges.append((start, code - 1))
            start = None
    return [(first, last) for first, last in ranges if not 0x2E80 <= first <= 0x33FF]


_MIXED = re.compile(f"(?P<cjk>[{CJK_CHARS}]+)|(?P<other>[^{CJK_CHARS}\\W_]+)")


def is_blank(text: str) -> bool:
    r"""True when ``text`` has nothing to read: only whitespace of any script (U+3000 ideographic space, NBSP, line
    breaks), control characters and invisible format characters (Unicode category Cf: U+200B zero-width
    space, U+FEFF, joiners). ``str.strip`` alone keeps the format characters.

    >>> is_blank("\u3000\u200b\n"), is_blank("\u200b价格")
    (True, False)
    """
    return all(char.isspace() or unicodedata.category(char) in ("Cc", "Cf") for char in text)


def normalize_text(text: str) -> str:
    """NFKC, then lower case: full-width digits and letters fold to ASCII (``５９９９`` → ``5999``,
    ``ＩＰｈｏｎｅ`` → ``iphone``), compatibility forms to their plain letters; ASCII text only loses case.

    A character whose NFKC is one other character of the Basic Multilingual Plane (full-width punctuation, letters and
    digits, compatibility ideographs) is first replaced by it through a table (:func:`_nfkc_table`): the same result,
    as a text's NFKC does not change when any of its characters is replaced by that character's own NFKC (both
    decompose alike), and Python's NFKC then finds most Chinese text already normalized instead of normalizing it in
    full (``tests/text_tests/test_tokens.py``)."""
    if text.isascii():
        return text.lower()
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    folded = _nfkc_table()[codes].tobytes().decode("utf-32-le", "surrogatepass")
    return unicodedata.normalize("NFKC", folded).lower()


@lru_cache(maxsize=1)
def _nfkc_table() -> np.ndarray:
    """Every code point's NFKC where that is one other character and the code point is in the Basic Multilingual
    Plane, else the code point itself (the other planes are left to Python's NFKC)."""
    table = np.arange(0x110000, dtype=np.uint32)
    for code in itertools.chain(range(0xD800), range(0xE000, 0x10000)):
        folded = unicodedata.normalize("NFKC", chr(code))
        if len(folded) == 1 and folded != chr(code):
            table[code] = ord(folded)
    return table


def bm25_tokens(text: str) -> list[str]:
    """BM25 terms of ``text`` after :func:`normalize_text`, in order.

    - A run of letters, digits and combining marks of any script but CJK gives one token (``yucatán``, ``nội``);
      a number keeps its inner ``.``/``,`` (``1,299``, ``2.5``); English stopwords are dropped. On ASCII text this
      is exactly the English rule tuner always used, so English rankings do not move.
    - A run of CJK ideographs is cut into words by the segmenter (:mod:`tuner.text._segment`);
      Chinese stopwords are dropped.
    - Everything else (whitespace, punctuation of either script, symbols) separates tokens.

    >>> bm25_tokens("ＩＰｈｏｎｅ 15的售价是5999元")
    ['iphone', '15', '售价', '5999', '元']
    >>> bm25_tokens("Mérida, Yucatán; Hà Nội")
    ['mérida', 'yucatán', 'hà', 'nội']
    """
    return next(bm25_token_lists([text]))


BM25_BATCH = 512
"""Texts whose CJK runs :func:`bm25_token_lists` hands the segmenter in one call."""

_KEPT_LATIN = "\ue000"
_TEXT_END = "\ue001"
"""Private-use characters standing for a kept Latin token and for the end of a text in what :func:`bm25_token_lists`
hands the segmenter: no CJK run holds them, and both segmenters give a character that is neither an ideograph, a
letter nor whitespace back as a word of its own."""


def bm25_token_lists(texts: Sequence[str]) -> Iterator[list[str]]:
    """:func:`bm25_tokens` of each of ``texts``, in order, with :data:`BM25_BATCH` texts at a time segmented in one
    call (:func:`_segmented`). The same tokens, for a corpus at a fraction of the cost: one segmenter call per run
    and a generator per run cost more than the segmenting (millions of runs in a Chinese corpus)."""
    for first in range(0, len(texts), BM25_BATCH):
        words, latin_tokens = _segmented(texts[first : first + BM25_BATCH])
        latin = iter(latin_tokens)
        start = 0
        while start < len(words):
            end = words.index(_TEXT_END, start)
            yield [next(latin) if word == _KEPT_LATIN else word for word in words[start:end]
                   if word != "\n" and word not in STOPWORDS_ZH]
            start = end + 1


def _segmented(texts: Sequence[str]) -> tuple[list[str], list[str]]:
    """The words the segmenter gives ``texts`` in one call, and the Latin tokens kept, in order. Their CJK runs are
    joined by line breaks (never segmented across: both segmenters cut a text into blocks of ideographs at whitespace
    first), each kept Latin token stands in its place as :data:`_KEPT_LATIN`, each text is closed by
    :data:`_TEXT_END`."""
    pieces: list[str] = []
    kept: list[str] = []
    for text in texts:
        normalized = normalize_text(text)
        if not _CJK_RUN.search(normalized):  # the common case in English, all in C
            words = (_ASCII_RUN if normalized.isascii() else _word_rule()[0]).findall(normalized)
            latin = [word for word in words if word not in STOPWORDS_LATIN]
            kept += latin
            pieces.append(_KEPT_LATIN * len(latin))
        else:
            for cjk, word in _word_rule()[1].findall(normalized):
                if cjk:
                    pieces.append(cjk)
                elif word not in STOPWORDS_LATIN:
                    kept.append(word)
                    pieces.append(_KEPT_LATIN)
        pieces.append(_TEXT_END)
    return segmenter(SEGMENTER)("\n".join(pieces)), kept


@lru_cache(maxsize=65536)  # every trial counts the words of its contexts, which repeat across trials
def word_count(text: str) -> int:
    """Words of ``text`` in any script: each whitespace-separated token is one word, except that a token
    holding CJK ideographs counts its segmented words (and its Latin/digit runs) instead.

    For text without CJK this is ``len(text.split())``, the English count tuner always reported, so a
    context-size figure means the same for a Chinese and an English corpus.

    >>> word_count("The X200 costs $1,299.")
    4
    >>> word_count("Nimbus X2的保修期是两年。")
    6
    """
    count = 0
    for token in text.split():
        if not _CJK_RUN.search(token):
            count += 1
            continue
        for match in _MIXED.finditer(token):
            count += len(segment(match.group())) if match.lastgroup == "cjk" else 1
    return count


def plural(count: int, noun: str) -> str:
    """``count`` and the English ``noun``, plural unless ``count`` is 1 (regular nouns: an ``s`` added).

    >>> plural(1, "chunk"), plural(0, "case"), plural(3, "case")
    ('1 chunk', '0 cases', '3 cases')
    """
    return f"{count} {noun}{'' if count == 1 else 's'}"
