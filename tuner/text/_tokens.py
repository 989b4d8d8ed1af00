"""Normalization and BM25 tokens, script by script: Latin/digit runs keep the English rule, CJK runs are segmented."""

from __future__ import annotations

import re
import unicodedata

from tuner.text._language import CJK_CHARS
from tuner.text._segment import segment
from tuner.text._stopwords import STOPWORDS_LATIN, STOPWORDS_ZH

_RUN = re.compile(f"(?P<cjk>[{CJK_CHARS}]+)|(?P<latin>[a-z0-9]+(?:[.,][0-9]+)*)")


def normalize_text(text: str) -> str:
    """NFKC, then lower case: full-width digits and letters fold to ASCII (``５９９９`` → ``5999``,
    ``ＩＰｈｏｎｅ`` → ``iphone``), compatibility forms to their plain letters; ASCII text only loses case."""
    return unicodedata.normalize("NFKC", text).lower()


def bm25_tokens(text: str) -> list[str]:
    """BM25 terms of ``text`` after :func:`normalize_text`, in order.

    - A run of Latin letters and digits gives one token; a number keeps its inner ``.``/``,``
      (``1,299``, ``2.5``); English stopwords are dropped. For text without CJK this is exactly the
      English rule tuner always used, so English rankings do not move.
    - A run of CJK ideographs is cut into words by the segmenter (:mod:`tuner.text._segment`);
      Chinese stopwords are dropped.
    - Everything else (whitespace, punctuation of either script, symbols) separates tokens.

    >>> bm25_tokens("ＩＰｈｏｎｅ 15的售价是5999元")
    ['iphone', '15', '售价', '5999', '元']
    """
    tokens: list[str] = []
    for match in _RUN.finditer(normalize_text(text)):
        if match.lastgroup == "cjk":
            tokens.extend(word for word in segment(match.group()) if word not in STOPWORDS_ZH)
        elif match.group() not in STOPWORDS_LATIN:
            tokens.append(match.group())
    return tokens
