from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder, EmbeddingStore
from tuner.evaluation import CaseOutcome, Responder, RobustnessEvaluator, summarize
from tuner.generation import Answer, ExtractiveGenerator, ExtractiveGeneratorConfig
from tuner.judging import KeypointVerdict, LexicalJudge
from tuner.variants import VARIANTS, VariantsConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

# Small chunks and top_k=1 leave near-miss chunks (the X210 for an X200 question) outside v0, so
# the absolute soft band 0.70–0.85 has candidates on this tiny corpus.
SETTINGS = RetrievalSettings(chunk_size=20, top_k=1, retriever="dense")
# The tiny corpus has 15 clean chunks: its top 5% (the default relative soft band) is one chunk, a
# relevant one, so tests of the relative mechanism widen the band to the top 30%.
WIDE_SOFT = (0.7, 1.0)


class RecordingGenerator:
    """The offline generator, recording every (question, contexts) it is asked."""

    name = "recording"
    concurrency = 1

    def __init__(self, inner: ExtractiveGenerator) -> None:
        self.inner = inner
        self.requests_made = inner.requests_made
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        self.calls.append((question, tuple(contexts)))
        return self.inner.generate(question, contexts)


class RecordingJudge(LexicalJudge):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, tuple[tuple[str, ...], ...], tuple[str, ...]]] = []

    def judge(
        self,
        question: str,
        answer: str,
        contexts: Sequence[str],
        keypoints: Sequence[tuple[str, ...]],
        wrong_answers: Sequence[str],
    ) -> list[KeypointVerdict]:
        self.calls.append((question, tuple(keypoints), tuple(wrong_answers)))
        return super().judge(question, answer, contexts, keypoints, wrong_answers)


def _evaluate(pipeline: RetrievalPipeline, variant_config: VariantsConfig, settings: RetrievalSettings = SETTINGS) -> list[CaseOutcome]:
    encoder = pipeline.encoder(settings)
    evaluator = RobustnessEvaluator(pipeline, Responder(ExtractiveGenerator(ExtractiveGeneratorConfig(), encoder), LexicalJudge()), variant_config)
    return evaluator.evaluate(settings)


def _similarity(pipeline: RetrievalPipeline, question: str, passage: str) -> float:
    vectors = pipeline.encoder(SETTINGS).encode([question, passage])
    return float(vectors[0] @ vectors[1])


def test_only_the_context_changes_between_variants(pipeline: RetrievalPipeline) -> None:
    generator = RecordingGenerator(ExtractiveGenerator(ExtractiveGeneratorConfig(), pipeline.encoder(SETTINGS)))
    judge = RecordingJudge()
    outcomes = RobustnessEvaluator(pipeline, Responder(generator, judge), VariantsConfig()).evaluate(SETTINGS)
    for outcome in outcomes:
        case = outcome.case
        asked = {contexts for question, contexts in generator.calls if question == case.question}
        variant_contexts = {tuple(v.context.passages) for v in outcome.variants.values()}
        assert asked == variant_contexts
        judged = {(kp, wrong) for question, kp, wrong in judge.calls if question == case.question}
        assert len(judged) == 1 and next(iter(judged))[0] == case.keypoints
    assert {question for question, _ in generator.calls} == {o.case.question for o in outcomes}
    assert len(generator.calls) == len({(q, c) for q, c in generator.calls})


def _bounds(pipeline: RetrievalPipeline, variant_config: VariantsConfig, question: str, kind: str) -> tuple[float, float]:
    """The band by its definition: absolute cosines, or quantiles of the question's cosine to every clean chunk."""
    if variant_config.band == "absolute":
        return variant_config.soft_band if kind == "soft" else variant_config.irrelevant_band
    table = pipeline.table(SETTINGS)
    clean = [c.passage for c, conflict in zip(table.chunks, table.is_conflict) if not conflict]
    sims = sorted(_similarity(pipeline, question, passage) for passage in clean)
    quantiles = variant_config.soft_quantiles if kind == "soft" else variant_config.irrelevant_quantiles
    low, high = (float(np.quantile(sims, q)) for q in quantiles)
    return low, high


@pytest.mark.parametrize("band", ["absolute", "relative"])
def test_injected_chunks_come_from_their_band_and_never_from_relevant_or_conflicting_docs(
    pipeline: RetrievalPipeline, band: str
) -> None:
    variant_config = VariantsConfig(n=2, band=band, soft_quantiles=WIDE_SOFT)
    outcomes = _evaluate(pipeline, variant_config)
    kinds = {"v1": "irrelevant", "v2": "soft", "v4": "irrelevant"}
    injected = {variant: 0 for variant in kinds}
    for outcome in outcomes:
        base = {c.chunk_id for c in outcome.variants["v0"].context.chunks}
        for variant, kind in kinds.items():
            low, high = _bounds(pipeline, variant_config, outcome.case.question, kind)
            context = outcome.variants[variant].context
            added = [c for c in context.chunks if variant == "v4" or c.chunk_id not in base]
            assert len(added) == context.injected and context.injected + context.shortfall == 2
            for chunk in added:
                assert chunk.source == "corpus"
                assert chunk.doc_id not in outcome.case.relevant_doc_ids
                assert low - 1e-5 <= _similarity(pipeline, outcome.case.question, chunk.passage) <= high + 1e-5
            injected[variant] += len(added)
    assert all(count > 0 for count in injected.values()), injected


def test_relative_soft_band_is_the_near_miss_zone_of_each_question(pipeline: RetrievalPipeline) -> None:
    """Relative bands never overlap when their quantiles do not: v2's injected chunks are more similar to the question than
    every v1 injected chunk, whatever the embedder's cosine scale."""
    outcomes = _evaluate(pipeline, VariantsConfig(soft_quantiles=WIDE_SOFT))
    compared = 0
    for outcome in outcomes:
        question = outcome.case.question
        base = {c.chunk_id for c in outcome.variants["v0"].context.chunks}
        soft = [_similarity(pipeline, question, c.passage) for c in outcome.variants["v2"].context.chunks if c.chunk_id not in base]
        off = [_similarity(pipeline, question, c.passage) for c in outcome.variants["v1"].context.chunks if c.chunk_id not in base]
        if soft and off:
            compared += 1
            assert min(soft) > max(off)
    assert compared >= 3


def test_a_short_variant_is_reported_with_a_warning(pipeline: RetrievalPipeline) -> None:
    """With the default top-5% band the tiny corpus has almost no near-miss chunk to spare: v2 is short of
    most of its slots, and the report says so instead of grading a Δ of 0 as robust without comment."""
    outcomes = _evaluate(pipeline, VariantsConfig())
    report = summarize(outcomes, VARIANTS)
    v2 = report.variants["v2"]
    slots = 3 * len(outcomes)
    assert v2.injected + v2.shortfall == slots and v2.shortfall > 0.1 * slots
    assert report.warnings == [v2.shortfall_warning]
    assert report.to_dict()["warnings"] == [
        f"v2: {v2.shortfall} of {slots} injection slots unfilled ({v2.shortfall / slots:.0%}): "
        "too few chunks in its similarity band; its Δ understates the effect"
    ]
    assert report.variants["v1"].shortfall_warning is None


def test_per_variant_counts_default_to_three_and_four_for_v4(pipeline: RetrievalPipeline) -> None:
    variant_config = VariantsConfig(band="absolute", irrelevant_band=(-1.0, 1.0), hard_mode="inject")
    assert (variant_config.count("v1"), variant_config.count("v2"), variant_config.count("v3"), variant_config.count("v4")) == (3, 3, 3, 4)
    for outcome in _evaluate(pipeline, variant_config):
        for variant, asked in (("v1", 3), ("v3", 3), ("v4", 4)):
            context = outcome.variants[variant].context
            assert context.injected + context.shortfall == asked
        assert outcome.variants["v4"].context.injected == 4


def test_one_number_still_means_the_same_count_for_every_variant() -> None:
    assert VariantsConfig(n=2).n.model_dump() == {"v1": 2, "v2": 2, "v3": 2, "v4": 2}
    assert VariantsConfig.model_validate({"n": {"v2": 5}}).n.model_dump() == {"v1": 3, "v2": 5, "v3": 3, "v4": 4}
    with pytest.raises(ValueError, match="soft_quantiles"):
        VariantsConfig(soft_quantiles=(0.9, 0.5))
    with pytest.raises(ValueError):
        VariantsConfig(n={"v5": 2})


def test_relative_and_absolute_bands_differ_and_both_are_reproducible(pipeline: RetrievalPipeline) -> None:
    def v2_chunks(band: str) -> list[tuple[str, ...]]:
        return [tuple(c.chunk_id for c in o.variants["v2"].context.chunks) for o in _evaluate(pipeline, VariantsConfig(band=band))]

    assert v2_chunks("relative") == v2_chunks("relative")
    assert v2_chunks("absolute") == v2_chunks("absolute")
    encoder = pipeline.encoder(SETTINGS)
    responder = Responder(ExtractiveGenerator(ExtractiveGeneratorConfig(), encoder), LexicalJudge())

    def bounds(band: str) -> list[tuple[float, float]]:
        builder = RobustnessEvaluator(pipeline, responder, VariantsConfig(band=band))._builder(SETTINGS)
        return [builder.band_bounds(row, "soft") for row in range(len(pipeline.dataset.golden))]

    assert bounds("absolute") == [(0.70, 0.85)] * len(pipeline.dataset.golden)
    relative = bounds("relative")
    assert len(set(relative)) > 1  # each question's band follows its own similarity distribution


@pytest.mark.parametrize("position", ["front", "middle", "end"])
def test_position_is_honoured(pipeline: RetrievalPipeline, position: str) -> None:
    settings = SETTINGS.model_copy(update={"top_k": 3})
    for outcome in _evaluate(pipeline, VariantsConfig(n=2, position=position), settings):
        base = list(outcome.variants["v0"].context.chunks)
        merged = list(outcome.variants["v1"].context.chunks)
        injected = [c for c in merged if c not in base]
        cut = {"front": 0, "middle": len(base) // 2, "end": len(base)}[position]
        assert merged == base[:cut] + injected + base[cut:]


def test_v3_inject_adds_the_conflicts_of_the_relevant_documents(pipeline: RetrievalPipeline) -> None:
    conflicts_with = {c.doc_id: c.conflicts_with for c in pipeline.dataset.conflicts}
    outcomes = {o.case.id: o for o in _evaluate(pipeline, VariantsConfig(n=2, hard_mode="inject"))}
    for outcome in outcomes.values():
        base = outcome.variants["v0"].context.chunks
        v3 = outcome.variants["v3"].context
        added = v3.chunks[len(base):]
        assert v3.chunks[: len(base)] == base and len(added) == v3.injected
        assert all(c.source == "conflict" and conflicts_with[c.doc_id] in outcome.case.relevant_doc_ids for c in added)
    assert {c.doc_id for c in outcomes["q1"].variants["v3"].context.chunks[1:]} == {"aurora-x200-2023"}
    assert outcomes["q3"].variants["v3"].context.injected == 0 and outcomes["q3"].variants["v3"].context.shortfall == 2


def test_v3_in_index_is_the_retrieval_over_the_index_with_conflicts(pipeline: RetrievalPipeline) -> None:
    settings = SETTINGS.model_copy(update={"top_k": 3})
    everything = {c.case_id: c for c in pipeline.retrieve(settings, "all")}
    outcomes = _evaluate(pipeline, VariantsConfig(hard_mode="in_index"), settings)
    for outcome in outcomes:
        v3 = outcome.variants["v3"].context
        assert v3.chunks == everything[outcome.case.id].chunks
        assert v3.injected == sum(c.source == "conflict" for c in v3.chunks)
    assert any(o.variants["v3"].context.injected for o in outcomes)


def test_variants_are_reproducible_from_the_seed(pipeline: RetrievalPipeline) -> None:
    def contexts(seed: int) -> list[tuple[str, ...]]:
        outcomes = _evaluate(pipeline, VariantsConfig(n=2, position="random", seed=seed))
        return [tuple(c.chunk_id for c in o.variants[v].context.chunks) for o in outcomes for v in VARIANTS]

    first = contexts(3)
    assert contexts(3) == first
    assert contexts(4) != first


def test_similarity_helper_matches_the_builder(pipeline: RetrievalPipeline) -> None:
    table = pipeline.table(SETTINGS)
    question = pipeline.dataset.golden[0].question
    expected = pipeline.encoder(SETTINGS).encode([question]) @ table.embeddings().T
    assert np.allclose(expected[0, :3], [_similarity(pipeline, question, c.passage) for c in table.chunks[:3]], atol=1e-5)


def test_bm25_trials_embed_no_chunk_for_v0_and_v3_in_index(
    tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder
) -> None:
    store = CachedEncoder(encoder.inner, EmbeddingStore(tmp_path / "store.sqlite"))
    pipeline = RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=DiskCache(tmp_path / "cache"), encoder=store)
    settings = SETTINGS.model_copy(update={"retriever": "bm25", "top_k": 3})
    reader = ExtractiveGenerator(ExtractiveGeneratorConfig(), encoder)  # the reader's sentences go to the session store
    evaluator = RobustnessEvaluator(pipeline, Responder(reader, LexicalJudge()), VariantsConfig(hard_mode="in_index"))
    passages = set(pipeline.table(settings).passages)
    lazy = evaluator.evaluate(settings, ("v0", "v3"))
    assert len(store.missing(sorted(passages))) == len(passages)  # v0 and v3 in_index read no chunk vector
    everything = evaluator.evaluate(settings, ("v0", "v1", "v3"))
    assert store.missing(sorted(passages)) == []  # v1 draws from a similarity band: now the chunks are embedded
    assert [o.variants["v3"].context for o in lazy] == [o.variants["v3"].context for o in everything]
