from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from tuner.evaluation import CaseOutcome, Responder, RobustnessEvaluator
from tuner.generation import Answer, ExtractiveGenerator, ExtractiveGeneratorConfig
from tuner.judging import KeypointVerdict, LexicalJudge
from tuner.noise import VARIANTS, NoiseConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings

# Small chunks and top_k=1 leave near-miss chunks (the X210 for an X200 question) outside v0, so
# the default soft band 0.70–0.85 has candidates on this tiny corpus.
SETTINGS = RetrievalSettings(chunk_size=20, top_k=1, retriever="dense")


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


def _evaluate(pipeline: RetrievalPipeline, noise: NoiseConfig, settings: RetrievalSettings = SETTINGS) -> list[CaseOutcome]:
    encoder = pipeline.encoder(settings)
    evaluator = RobustnessEvaluator(pipeline, Responder(ExtractiveGenerator(ExtractiveGeneratorConfig(), encoder), LexicalJudge()), noise)
    return evaluator.evaluate(settings)


def _similarity(pipeline: RetrievalPipeline, question: str, passage: str) -> float:
    vectors = pipeline.encoder(SETTINGS).encode([question, passage])
    return float(vectors[0] @ vectors[1])


def test_only_the_context_changes_between_variants(pipeline: RetrievalPipeline) -> None:
    generator = RecordingGenerator(ExtractiveGenerator(ExtractiveGeneratorConfig(), pipeline.encoder(SETTINGS)))
    judge = RecordingJudge()
    outcomes = RobustnessEvaluator(pipeline, Responder(generator, judge), NoiseConfig()).evaluate(SETTINGS)
    for outcome in outcomes:
        case = outcome.case
        asked = {contexts for question, contexts in generator.calls if question == case.question}
        variant_contexts = {tuple(v.context.passages) for v in outcome.variants.values()}
        assert asked == variant_contexts
        judged = {(kp, wrong) for question, kp, wrong in judge.calls if question == case.question}
        assert len(judged) == 1 and next(iter(judged))[0] == case.keypoints
    assert {question for question, _ in generator.calls} == {o.case.question for o in outcomes}
    assert len(generator.calls) == len({(q, c) for q, c in generator.calls})


def test_noise_chunks_come_from_their_band_and_never_from_relevant_or_conflicting_docs(pipeline: RetrievalPipeline) -> None:
    noise = NoiseConfig(n=2)
    outcomes = _evaluate(pipeline, noise)
    bands = {"v1": noise.irrelevant_band, "v2": noise.soft_band, "v4": noise.irrelevant_band}
    injected = {variant: 0 for variant in bands}
    for outcome in outcomes:
        base = {c.chunk_id for c in outcome.variants["v0"].context.chunks}
        for variant, (low, high) in bands.items():
            context = outcome.variants[variant].context
            added = [c for c in context.chunks if variant == "v4" or c.chunk_id not in base]
            assert len(added) == context.injected and context.injected + context.shortfall == noise.n
            for chunk in added:
                assert chunk.source == "corpus"
                assert chunk.doc_id not in outcome.case.relevant_doc_ids
                assert low - 1e-5 <= _similarity(pipeline, outcome.case.question, chunk.passage) <= high + 1e-5
            injected[variant] += len(added)
    assert all(count > 0 for count in injected.values()), injected


@pytest.mark.parametrize("position", ["front", "middle", "end"])
def test_position_is_honoured(pipeline: RetrievalPipeline, position: str) -> None:
    settings = SETTINGS.model_copy(update={"top_k": 3})
    for outcome in _evaluate(pipeline, NoiseConfig(n=2, position=position), settings):
        base = list(outcome.variants["v0"].context.chunks)
        merged = list(outcome.variants["v1"].context.chunks)
        noise = [c for c in merged if c not in base]
        cut = {"front": 0, "middle": len(base) // 2, "end": len(base)}[position]
        assert merged == base[:cut] + noise + base[cut:]


def test_v3_inject_adds_the_conflicts_of_the_relevant_documents(pipeline: RetrievalPipeline) -> None:
    conflicts_with = {c.doc_id: c.conflicts_with for c in pipeline.dataset.conflicts}
    outcomes = {o.case.id: o for o in _evaluate(pipeline, NoiseConfig(n=2, hard_mode="inject"))}
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
    outcomes = _evaluate(pipeline, NoiseConfig(hard_mode="in_index"), settings)
    for outcome in outcomes:
        v3 = outcome.variants["v3"].context
        assert v3.chunks == everything[outcome.case.id].chunks
        assert v3.injected == sum(c.source == "conflict" for c in v3.chunks)
    assert any(o.variants["v3"].context.injected for o in outcomes)


def test_variants_are_reproducible_from_the_seed(pipeline: RetrievalPipeline) -> None:
    def contexts(seed: int) -> list[tuple[str, ...]]:
        outcomes = _evaluate(pipeline, NoiseConfig(n=2, position="random", seed=seed))
        return [tuple(c.chunk_id for c in o.variants[v].context.chunks) for o in outcomes for v in VARIANTS]

    first = contexts(3)
    assert contexts(3) == first
    assert contexts(4) != first


def test_similarity_helper_matches_the_builder(pipeline: RetrievalPipeline) -> None:
    table = pipeline.table(SETTINGS)
    question = pipeline.dataset.golden[0].question
    expected = pipeline.encoder(SETTINGS).encode([question]) @ table.embeddings().T
    assert np.allclose(expected[0, :3], [_similarity(pipeline, question, c.passage) for c in table.chunks[:3]], atol=1e-5)
