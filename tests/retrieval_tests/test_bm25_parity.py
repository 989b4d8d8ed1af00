"""bm25s (the engine tuner uses) against rank-bm25 (the reference implementation) on a small corpus."""

from __future__ import annotations

import bm25s
import numpy as np
from rank_bm25 import BM25Okapi, BM25Plus

from tuner.text import bm25_tokens

DOCS = [
    "The Aurora X200 laptop costs $1,299 and has 16 GB of memory.",
    "The Aurora X210 laptop costs $1,499 and has 32 GB of memory.",
    "Customers may return any product within 30 days for a refund.",
    "Laptops carry a two year warranty against defects in manufacturing.",
    "Standard shipping takes three to five business days.",
    "Express shipping costs fifteen dollars and takes one day.",
    "Mercury Logistics delivers parcels to 28 countries in Europe.",
    "The Mercury router covers 200 square meters with Wi-Fi 6.",
]
QUERIES = ["laptop memory", "return refund days", "shipping days", "mercury countries europe", "warranty laptop defects"]


def _ranking(scores: np.ndarray) -> list[int]:
    return list(np.lexsort((np.arange(len(scores)), -scores)))


def test_bm25plus_scores_equal_rank_bm25() -> None:
    tokens = [bm25_tokens(d) for d in DOCS]
    ours = bm25s.BM25(method="bm25+", k1=1.5, b=0.75, delta=1.0)
    ours.index(tokens, show_progress=False)
    oracle = BM25Plus(tokens, k1=1.5, b=0.75, delta=1.0)
    for query in QUERIES:
        q = bm25_tokens(query)
        np.testing.assert_allclose(ours.get_scores(q), oracle.get_scores(q), rtol=1e-5)


def test_robertson_ranks_like_bm25okapi() -> None:
    tokens = [bm25_tokens(d) for d in DOCS]
    ours = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
    ours.index(tokens, show_progress=False)
    oracle = BM25Okapi(tokens, k1=1.5, b=0.75)
    for query in QUERIES:
        q = bm25_tokens(query)
        a, b = np.asarray(ours.get_scores(q)), np.asarray(oracle.get_scores(q))
        assert _ranking(a) == _ranking(b)
        # rank-bm25 keeps the (k1 + 1) factor in the numerator; bm25s' robertson drops it
        np.testing.assert_allclose(a * 2.5, b, rtol=1e-5)
