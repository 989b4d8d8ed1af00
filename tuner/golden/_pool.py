"""Golden set (dataset → **golden drafts**): the candidate pool of a question, TREC-style: the union of the top-``depth``
chunks of BM25, dense and hybrid retrieval, each candidate with its rank in every run, for a person to label."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder
from tuner.progress import Reporter, SilentReporter
from tuner.retrieval import RetrievalPipeline
from tuner.settings import settings_from_mapping

POOL_RETRIEVERS = ("bm25", "dense", "hybrid")
DEFAULT_DEPTH = 10


def pool_order(ranks: dict[str, int | None]) -> tuple[int, int]:
    """Sort key of a candidate: its best rank in any run, then the sum of its ranks (a missing rank counts as one
    past the pool depth, 10 000 here), so what every retriever agrees on comes first."""
    present = [r for r in ranks.values() if r is not None]
    return min(present, default=10_000), sum(r if r is not None else 10_000 for r in ranks.values())


def build_pools(
    kb: Dataset,
    questions: Sequence[str],
    depth: int = DEFAULT_DEPTH,
    *,
    encoder: CachedEncoder | None = None,
    reporter: Reporter | None = None,
) -> list[list[dict[str, Any]]]:
    """Per question, its pool: ``{doc_id, chunk_id, title, text, ranks: {bm25, dense, hybrid}}`` (rank 1 = best,
    ``None`` when that run did not return the chunk in its top ``depth``), in :func:`pool_order`.

    Retrieval is tuner's own, over the knowledge base's corpus (conflicting documents left out) with the default
    chunking and the models its ``dataset.yaml`` names, so the chunks a reviewer labels are the chunks a study
    retrieves."""
    if not questions:
        return []
    # searched directly rather than through the candidate cache, whose keys cover the dataset's golden questions only
    pipeline = RetrievalPipeline(kb, reporter=reporter or SilentReporter(), encoder=encoder)
    pools: list[dict[int, dict[str, int | None]]] = [{} for _ in questions]
    table = None
    for name in POOL_RETRIEVERS:
        settings = settings_from_mapping({"retriever": name, "candidate_depth": depth, "top_k": depth}, "pool settings", kb.model_defaults)
        table = pipeline.table(settings)
        indices = pipeline.retriever(settings).search(list(questions), depth, table.mask("clean")).indices
        for row, pool in enumerate(pools):
            for rank, index in enumerate(indices[row][:depth], start=1):
                if index >= 0:
                    pool.setdefault(int(index), dict.fromkeys(POOL_RETRIEVERS))[name] = rank
    assert table is not None  # POOL_RETRIEVERS is not empty; the three runs share one chunk table
    result = []
    for pool in pools:
        entries = []
        for index, ranks in sorted(pool.items(), key=lambda item: pool_order(item[1])):
            chunk = table.chunks[index]
            entries.append({"doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id, "title": chunk.title, "text": chunk.text,
                            "ranks": ranks})
        result.append(entries)
    return result
