"""Ranking (candidates → **ranking** → variants): blend first-stage and rerank scores, threshold, keep top_k."""

from __future__ import annotations

import numpy as np

from tuner.settings import Ranking


def final_ranking(
    indices: np.ndarray, first_stage: np.ndarray, rerank: np.ndarray | None, ranking: Ranking
) -> tuple[np.ndarray, np.ndarray]:
    """The final context of one query from its cached candidates, under the final-ranking group ``ranking``.

    ``score = (1 − s) · first_stage + s · rerank`` (s = ``rerank_strength``; the first stage alone when
    s = 0); candidates are ordered by score, ties keeping first-stage order; those scoring below
    ``relevance_threshold`` are dropped, and at most ``top_k`` remain. Returns (chunk indices, scores).
    """
    rerank_strength, relevance_threshold, top_k = ranking.rerank_strength, ranking.relevance_threshold, ranking.top_k
    valid = indices >= 0
    candidates = indices[valid]
    scores = first_stage[valid].astype(np.float64)
    if rerank_strength > 0.0:
        if rerank is None:
            raise ValueError("rerank_strength > 0 needs reranker scores")
        scores = (1.0 - rerank_strength) * scores + rerank_strength * rerank[valid]
    order = np.argsort(-scores, kind="stable")
    order = order[scores[order] >= relevance_threshold][:top_k]
    return candidates[order], scores[order]
