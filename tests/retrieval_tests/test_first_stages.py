"""Retrievers and settings declared once (issue 53): a retriever's name, what it reads, whether it embeds and whether it
scores BM25 live on its ``tuner.settings.FIRST_STAGES`` entry, which settings validate against and the registry, the
study's BM25 checks and the first mile's pools read; the chunking and final-ranking groups are made from the stages'
settings; a setting's ``after_search`` / ``frameworks_lack`` are its field's metadata."""

from __future__ import annotations

import dataclasses

import pytest

from tuner.errors import UserError
from tuner.retrieval import RETRIEVERS
from tuner.retrieval._base import register_retriever
from tuner.settings import (
    AFTER_SEARCH, FIRST_STAGES, FRAMEWORKS_LACK, Chunking, Ranking, RetrievalSettings, settings_from_mapping, stage_fields,
)


def test_every_declared_first_stage_is_registered_with_what_its_declaration_says() -> None:
    assert list(RETRIEVERS) == list(FIRST_STAGES)
    for name, entry in RETRIEVERS.items():
        assert (entry.reads, entry.needs_vectors) == (FIRST_STAGES[name].reads, FIRST_STAGES[name].needs_vectors)
    assert [n for n, spec in FIRST_STAGES.items() if spec.bm25] == ["bm25", "hybrid"]


def test_a_retriever_name_is_checked_against_the_declarations() -> None:
    with pytest.raises(UserError, match=r"^x: retriever: Input should be 'bm25', 'dense' or 'hybrid'$"):
        settings_from_mapping({"retriever": "splade"}, "x")
    with pytest.raises(ValueError, match="not declared in tuner.settings.FIRST_STAGES"):
        register_retriever("splade")


def test_the_study_and_the_first_mile_read_bm25_and_vectors_from_the_declarations() -> None:
    from tuner.golden._pool import POOL_RETRIEVERS, _EMBEDDING_RETRIEVERS
    from tuner.engine import BM25_RETRIEVERS

    assert BM25_RETRIEVERS == ("bm25", "hybrid")
    assert (POOL_RETRIEVERS, _EMBEDDING_RETRIEVERS) == (("bm25", "dense", "hybrid"), ("dense", "hybrid"))


@pytest.mark.parametrize(("group", "stage", "more"), [(Chunking, "chunking", ["tokenizer"]), (Ranking, "final_ranking", [])])
def test_a_group_holds_its_stage_s_settings_with_their_defaults(group: type, stage: str, more: list[str]) -> None:
    fields = dataclasses.fields(group)
    assert [f.name for f in fields] == [*stage_fields(stage), *more]  # type: ignore[arg-type]
    defaults = RetrievalSettings()
    assert all(f.default == getattr(defaults, f.name) for f in fields if f.name not in more)
    chosen = RetrievalSettings(top_k=3, dedupe=0.9, chunk_size=64)
    assert (chosen.ranking.top_k, chosen.ranking.reads_vectors, chosen.chunking.chunk_size) == (3, True, 64)
    assert hash(chosen.chunking) == hash(RetrievalSettings(chunk_size=64).chunking)  # a memo key


def test_after_search_and_frameworks_lack_are_the_fields_metadata_export_reads() -> None:
    """An export's untranslated row of a setting frameworks lack is its field's text, where it acts off its default;
    the Milvus export keeps the rows of what tuner does after the search."""
    from tuner.export._framework import untranslated

    assert set(AFTER_SEARCH) == {"rerank_strength", "reranker", "version_policy", "stale_penalty", "recency_weight", "dedupe"}
    off = {"rerank_strength": 0.5, "version_policy": "latest", "stale_penalty": 0.5, "recency_weight": 0.5, "dedupe": 0.9}
    assert list(off) == list(FRAMEWORKS_LACK)
    for name, value in off.items():
        settings = RetrievalSettings(**{name: value})
        rows = {row[0]: row for row in untranslated(settings, "", cutoff=True)}
        assert rows[name] == (name, value, FRAMEWORKS_LACK[name].format(**settings.model_dump()))
    assert "half-life 365 days" in FRAMEWORKS_LACK["recency_weight"].format(**RetrievalSettings().model_dump())
    inert = RetrievalSettings(version_policy="latest", stale_penalty=0.5)  # the penalty acts only with version_policy all
    assert "stale_penalty" not in [row[0] for row in untranslated(inert, "", cutoff=True)]
