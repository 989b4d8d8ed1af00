"""Text analysis (dataset → **text analysis** → chunks): stopwords for BM25: bm25s' English list (Lucene's English stop
set), and a short list of Chinese function words.

The English list is spelled here rather than imported from ``bm25s.stopwords``: importing that module imports bm25s
and SciPy (half of the command line's start-up, which reads the dataset's text layer to build its parser);
``tests/text_tests/test_tokens.py`` holds it equal to bm25s'.

The Chinese list is deliberately small: particles, conjunctions, prepositions, copula and question
words that occur in nearly every passage or question and carry no topic (的 了 是 在 和 …; 什么 哪 多少 …,
which fill questions but rarely the passages that answer them). Content words are never in it, even
frequent ones, so a query still matches on the words that decide relevance. Punctuation never reaches
the stopword test: tokens come only from letter/digit runs and CJK ideograph runs.
"""

from __future__ import annotations

STOPWORDS_ZH = frozenset(
    """
    的 地 得 之 了 着 过 是 为 在 于 和 与 及 以及 或 或者 等 等等 也 就 都 还 又 而 而且 并 并且 但 但是 却
    被 把 对 对于 从 自 向 以 由 给 让 将 其 这 那 这个 那个 这些 那些 此 该 个 吗 呢 吧 啊 呀 嘛 么
    什么 哪 哪个 哪些 哪里 怎么 怎样 如何 多少 几 谁 为什么
    """.split()
)
STOPWORDS_LATIN = frozenset(
    """
    a an and are as at be but by for if in into is it no not of on or such that the their then there these they this
    to was will with
    """.split()
)
