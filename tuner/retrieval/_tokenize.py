from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN

_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_STOP = frozenset(STOPWORDS_EN)


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens (numbers keep inner ``.``/``,``: ``1,299``, ``2.5``), English stopwords removed."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]
