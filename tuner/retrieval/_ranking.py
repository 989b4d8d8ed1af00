"""Ranking (candidates → **ranking** → variants): blend first-stage and rerank scores, threshold, keep top_k."""

from __future__ import annotations

import numpy as np


def final_ranking(
    indices: np.ndarray,
    first_stage: np.ndarray,
    rerank: np.ndarray | None,
    rerank_strength: float,
    relevance_threshold: float,
    top_k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The final context of one query from its cached candidates.

    ``score = (1 − s) · first_stage + s · rerank`` (s = ``rerank_strength``; the first stage alone when
    s = 0); candidates are ordered by score, ties keeping first-stage order; those scoring below
    ``relevance_threshold`` are dropped, and at most ``top_k`` remain. Returns (chunk indices, scores).

    A candidate whose first-stage score is 0 is never kept, at any threshold and rerank strength: it shares
    nothing with the query (BM25: no term; dense: cosine ≤ 0), and keeping it would fill the context with
    chunks in corpus order and count a hit for whichever relevant chunk comes first. Every ranking (studies,
    eval, robustness, gate, the deployed Retriever) goes through here, so this is the one place of that rule;
    the cached candidates keep such slots, so no cache entry changes with it.
    """
    valid = (indices >= 0) & (first_stage > 0.0)
    candidates = indices[valid]
    scores = first_stage[valid].astype(np.float64)
    if rerank_strength > 0.0:
        if rerank is None:
            raise ValueError("rerank_strength > 0 needs reranker scores")
        scores = (1.0 - rerank_strength) * scores + rerank_strength * rerank[valid]
    order = np.argsort(-scores, kind="stable")
    order = order[scores[order] >= relevance_threshold][:top_k]
    return candidates[order], scores[order]
