"""Text analysis (dataset → **text analysis** → chunks → indexes): the BM25 terms of the first stage, one rule for both
engines: the rule of the Milvus analyzer tuner gives the ``text`` field of its collections
(``tuner.engine.analyzer_params``), so that a study measured in memory ranks by BM25 as the collection a team
deploys does (issue 52 §1; docs/engine.md, "BM25: one rule for both engines").

- ``en``: Milvus's ``standard`` tokenizer as Milvus Lite runs it: the text lower-cased, then every run of word
  characters (``\\w+``: letters of any script, digits, ``_``) one term; ``1,299`` is ``1`` and ``299``, ``yucatán``
  stays whole;
- ``zh``: jieba in precise mode over the whole text (HMM for unknown words; tuner's segmenter, the jieba-rs port a
  Milvus cluster runs), each word stripped and lower-cased, blanks dropped, a Latin/digit word holding ``.``, ``-`` or
  ``_`` cut as Python jieba (Milvus Lite's) cuts it (``zh-tw``: ``zh``, ``-``, ``tw``; ``1.5m``: ``1.5``, ``m``); punctuation jieba gives as a word stays a term unless
  the stop list holds it;
- both: tuner's stopwords of both scripts dropped (and, for ``zh``, the punctuation of :data:`ANALYZER_PUNCTUATION`).

Unlike :func:`tuner.text.bm25_tokens` (what the reader, golden-set tools and keypoints match words by) nothing is
NFKC-folded: Milvus's analyzers do not fold full-width forms, so ``ＩＰｈｏｎｅ`` and ``iphone`` are two terms here.
A query's terms keep their repeats (Milvus's query vector is the question's term frequencies).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import count

import numpy as np

from tuner.text._language import Language
from tuner.text._segment import SEGMENTER, segmenter
from tuner.text._stopwords import STOPWORDS_LATIN, STOPWORDS_ZH

ANALYZER_PUNCTUATION = frozenset("，。！？；：、“”‘’（）《》【】…—·,.!?;:'\"()[]<>-")
"""The punctuation the ``zh`` analyzer's stop list holds beside the stopwords (jieba gives punctuation as words)."""
_WORD = re.compile(r"\w+")
_JOINED = re.compile(r"[a-z0-9%+#&]*[._-][a-z0-9.%+#&_-]*")
"""A Latin/digit word holding ``.``, ``-`` or ``_`` (``zh-tw``, ``a-135``, ``formula_1``, ``u.s``, ``1.5m``): jieba-rs
keeps it one word; Python jieba (Milvus Lite's) cuts it into runs of letters and digits (a number keeping its decimals,
``1.5``) and the characters between, by :data:`_PIECE`."""
_PIECE = re.compile(r"[a-z0-9]+(?:\.\d+)?%?|.")


@lru_cache(maxsize=2)
def analyzer_stopwords(language: Language) -> frozenset[str]:
    """The stop list of the analyzer of a ``language`` corpus: tuner's stopwords of both scripts, for ``zh`` with
    :data:`ANALYZER_PUNCTUATION`."""
    return STOPWORDS_LATIN | STOPWORDS_ZH | (ANALYZER_PUNCTUATION if language == "zh" else frozenset())


def analyzer_tokens(text: str, language: Language) -> list[str]:
    """The BM25 terms of ``text`` in a ``language`` corpus, in order, repeats kept (module docstring).

    >>> analyzer_tokens("The X200 costs $1,299 in Yucatán.", "en")
    ['x200', 'costs', '1', '299', 'yucatán']
    >>> analyzer_tokens("Nimbus X2的保修期是两年。", "zh")
    ['nimbus', 'x2', '保修期', '两年']
    >>> analyzer_tokens("zh-tw和formula_1", "zh")
    ['zh', 'tw', 'formula', '_', '1']
    """
    stop = analyzer_stopwords(language)
    if language == "zh":
        words = (word.strip().lower() for word in segmenter(SEGMENTER)(text))
        cut = (piece for word in words for piece in (_PIECE.findall(word) if _JOINED.fullmatch(word) else (word,)))
        return [word for word in cut if word and word not in stop]
    return [word for word in _WORD.findall(text.lower()) if word not in stop]


def analyzer_term_ids(texts: Sequence[str], empty: str, language: Language) -> tuple[list[str], np.ndarray, np.ndarray]:
    """:func:`analyzer_tokens` of each of ``texts`` as ids into a vocabulary of their own: the vocabulary (each term
    once, in order of first occurrence), every text's ids one after the other and how many each has (int64 arrays);
    a text without terms has the one term ``empty``."""
    ids: dict[str, int] = {}
    new_id = count().__next__

    def numbered(lists: Iterable[list[str]]) -> Iterable[int]:
        for tokens in lists:
            for token in tokens or (empty,):
                term = ids.get(token)
                if term is None:
                    term = ids[token] = new_id()
                yield term

    lists = [analyzer_tokens(text, language) for text in texts]
    counts = np.fromiter((max(len(tokens), 1) for tokens in lists), dtype=np.int64, count=len(lists))
    flat = np.fromiter(numbered(lists), dtype=np.int64, count=int(counts.sum()))
    return list(ids), flat, counts
