"""Text analysis (dataset → **text analysis** → chunks): the Chinese word segmenter behind BM25 tokens, kept behind one
function so it can be swapped.

rjieba (jieba-rs, the Rust port of jieba with the same dictionary and HMM) is used: on CMRC 2018 it
gives the same BM25 recall as jieba and segments several times faster (``bench/HISTORY.md``). Both load their dictionary once per process, on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache

SEGMENTERS = ("rjieba", "jieba")
SEGMENTER = "rjieba"
"""The segmenter :func:`segment` uses; part of :data:`tuner.text.TEXT_LAYER_ID`, hence of BM25 cache keys."""

_LOCK = threading.Lock()


@lru_cache(maxsize=None)
def segmenter(name: str) -> Callable[[str], list[str]]:
    """The cut function of segmenter ``name`` (precise mode with HMM for unknown words), loaded once."""
    with _LOCK:
        if name == "rjieba":
            import rjieba

            return rjieba.cut
        if name == "jieba":
            import logging

            import jieba

            jieba.setLogLevel(logging.WARNING)  # it prints "Building prefix dict..." to stderr otherwise
            jieba.initialize()
            lcut: Callable[[str], list[str]] = jieba.lcut  # jieba is untyped
            return lcut
    raise ValueError(f"unknown segmenter '{name}' (known: {', '.join(SEGMENTERS)})")


def segment(run: str) -> list[str]:
    """The words of a run of CJK ideographs, in order."""
    return segmenter(SEGMENTER)(run)


def tag(text: str) -> list[tuple[str, str]]:
    """The words of ``text`` with their jieba part-of-speech flags (``nr`` person, ``ns`` place, ``nt`` organization,
    ``nz`` other proper noun, ...), in order; the words concatenate back to ``text``. Always rjieba: the flags come from
    its dictionary, whichever segmenter BM25 uses."""
    import rjieba

    return [(word, flag) for word, flag in rjieba.tag(text)]
