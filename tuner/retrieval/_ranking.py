"""Ranking (candidates → **ranking** → variants): blend first-stage and rerank scores, version and recency handling,
threshold, near-duplicate suppression, keep top_k."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tuner.dataset import DATE, FAMILY
from tuner.rerank import Reranker
from tuner.settings import Ranking
from tuner.text import day_number, parse_date


@dataclass(frozen=True)
class ChunkVersions:
    """Per chunk of a table, what version handling reads, for one index (the chunks a query may get):
    ``stale`` is True when a document of the chunk's family with a later date is in the index; ``age_days`` is how
    many days the chunk's document is older than the newest dated document of the index (NaN when undated)."""

    stale: np.ndarray
    age_days: np.ndarray


def chunk_versions(
    doc_ids: Sequence[str], metadata_of: Callable[[str], Mapping[str, Any]], in_index: np.ndarray | None
) -> ChunkVersions:
    """:class:`ChunkVersions` of the chunks of documents ``doc_ids`` (one per chunk), among the chunks where
    ``in_index`` is True (all when None). A document without ``family`` is never stale; one without ``date`` is
    neither stale nor newer than another."""
    n = len(doc_ids)
    visible = np.ones(n, dtype=bool) if in_index is None else in_index
    days = np.full(n, np.nan)
    families: list[str | None] = [None] * n
    for i, doc_id in enumerate(doc_ids):
        metadata = metadata_of(doc_id)
        date = parse_date(metadata[DATE]) if isinstance(metadata.get(DATE), str) else None
        days[i] = np.nan if date is None else day_number(date)
        family = metadata.get(FAMILY)
        families[i] = family if isinstance(family, str) else None
    newest: dict[str, float] = {}
    for j in np.flatnonzero(visible & ~np.isnan(days)):
        if (group := families[j]) is not None:
            newest[group] = max(newest.get(group, -np.inf), days[j])
    stale = np.array([f is not None and not np.isnan(d) and d < newest.get(f, -np.inf) for f, d in zip(families, days)],
                     dtype=bool)
    dated = days[visible & ~np.isnan(days)]
    age = (dated.max() - days) if dated.size else np.full(n, np.nan)
    return ChunkVersions(stale, age)


def final_ranking(
    indices: np.ndarray,
    first_stage: np.ndarray,
    rerank: np.ndarray | None,
    ranking: Ranking,
    versions: ChunkVersions | None = None,
    vectors: np.ndarray | None = None,
    ahead: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The final context of one query from its cached candidates, under the final-ranking group ``ranking``.

    ``score = (1 − s) · first_stage + s · rerank`` (s = ``rerank_strength``; the first stage alone when
    s = 0). With ``recency_weight`` w > 0, ``score = (1 − w) · score + w · 0.5^(age / half_life)`` (age in days
    behind the index's newest dated document, ``recency_half_life_days``; an undated chunk's recency is 0).
    A stale chunk (``versions.stale``) is dropped under ``version_policy: latest``, else its score is multiplied
    by ``1 − stale_penalty``. Candidates are ordered by score, exact ties keeping first-stage order (with ``ahead``,
    one flag per chunk of the table, flagged chunks go first among exact ties, first-stage order within each side:
    how :func:`tuner.metrics.tie_flip` asks whether a tie decided a case's exposure); those scoring below
    ``relevance_threshold`` are dropped; going down the order, a candidate whose cosine similarity (rows of
    ``vectors``) to a kept one exceeds ``dedupe`` is skipped (``dedupe`` = 1: none is); at most ``top_k`` remain.
    Returns (chunk indices, scores).

    A candidate whose first-stage score is 0 is never kept, at any threshold and rerank strength: it shares
    nothing with the query (BM25: no term; dense: cosine ≤ 0), and keeping it would fill the context with
    chunks in corpus order and count a hit for whichever relevant chunk comes first. Every ranking (studies,
    eval, robustness, gate, the deployed Retriever) goes through here, so this is the one place of that rule;
    the cached candidates keep such slots, so no cache entry changes with it.
    """
    valid = (indices >= 0) & (first_stage > 0.0)
    candidates = indices[valid]
    scores = first_stage[valid].astype(np.float64)
    if ranking.rerank_strength > 0.0:
        if rerank is None:
            raise ValueError("rerank_strength > 0 needs reranker scores")
        scores = (1.0 - ranking.rerank_strength) * scores + ranking.rerank_strength * rerank[valid]
    if ranking.reads_versions:
        if versions is None:
            raise ValueError("version_policy, stale_penalty and recency_weight need the candidates' versions")
        if ranking.recency_weight > 0.0:
            recency = np.nan_to_num(0.5 ** (versions.age_days[candidates] / ranking.recency_half_life_days), nan=0.0)
            scores = (1.0 - ranking.recency_weight) * scores + ranking.recency_weight * recency
        stale = versions.stale[candidates]
        if ranking.version_policy == "latest":
            candidates, scores = candidates[~stale], scores[~stale]
        elif ranking.stale_penalty > 0.0:
            scores = np.where(stale, scores * (1.0 - ranking.stale_penalty), scores)
    # np.lexsort sorts by its last key first and is stable: score, then the ahead flag, then first-stage order
    order = np.argsort(-scores, kind="stable") if ahead is None else np.lexsort((~ahead[candidates], -scores))
    order = order[scores[order] >= ranking.relevance_threshold]
    if ranking.dedupe < 1.0:
        if vectors is None:
            raise ValueError("dedupe < 1 needs the chunk vectors")
        order = _distinct(order, vectors[candidates], ranking.dedupe, ranking.top_k)
    order = order[: ranking.top_k]
    return candidates[order], scores[order]


def rerank_row(reranker: Reranker, query: str, indices: np.ndarray, passages: Sequence[str]) -> np.ndarray:
    """The reranker's scores of one query's candidates (``indices`` into ``passages``; an empty slot, −1, scores 0):
    how a study's pipeline and the deployed Retriever both rerank."""
    valid = indices >= 0
    scores = np.zeros(indices.shape, dtype=np.float32)
    scores[valid] = reranker.score(query, [passages[i] for i in indices[valid]])
    return scores


def _distinct(order: np.ndarray, vectors: np.ndarray, threshold: float, limit: int) -> np.ndarray:
    """Positions of ``order`` kept going down it: each one's cosine similarity (normalized ``vectors``) to every kept
    one is at most ``threshold``; stops at ``limit`` kept."""
    kept: list[int] = []
    for position in order:
        if kept and float(np.max(vectors[kept] @ vectors[position])) > threshold:
            continue
        kept.append(int(position))
        if len(kept) == limit:
            break
    return np.array(kept, dtype=np.int64)
