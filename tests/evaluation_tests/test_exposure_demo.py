"""On the demo, v3 ``in_index`` equals v0 wherever no conflicting chunk reached the context: Δ is all exposure."""

from __future__ import annotations

import pytest

from tuner.dataset import load_dataset, resolve_dataset
from tuner.embedding import EmbeddingContext
from tuner.evaluation import Responder, RobustnessEvaluator, evaluate_retrieval, summarize_variant
from tuner.generation import ExtractiveGeneratorConfig, build_generator
from tuner.judging import build_judge, parse_judge_config
from tuner.backends import BackendResources
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.variants import VariantsConfig


def test_never_exposed_cases_keep_their_v0_context_and_score(embeddings: EmbeddingContext) -> None:
    pipeline = RetrievalPipeline(load_dataset(resolve_dataset("demo")), embeddings=embeddings)
    resources = BackendResources(embeddings=embeddings)  # the reader embeds sentences: the session's model
    responder = Responder(build_generator(ExtractiveGeneratorConfig(), resources),
                          build_judge(parse_judge_config({}, "test"), resources))
    settings = RetrievalSettings(retriever="bm25", top_k=5)
    cases = [case.id for case in pipeline.dataset.golden[:10]]  # 5 of them exposed at top_k 5, 5 not
    outcomes = RobustnessEvaluator(pipeline, responder, VariantsConfig()).evaluate(settings, ("v0", "v3"), cases)
    unexposed = [o for o in outcomes if not o.variants["v3"].exposed]
    assert unexposed and len(unexposed) < len(outcomes)  # both kinds, so the check below checks something
    for outcome in unexposed:
        v0, v3 = outcome.variants["v0"], outcome.variants["v3"]
        # BM25 scores every chunk alike in both views of the one index, so a context without a conflict is v0's …
        assert [c.chunk_id for c in v3.context.chunks] == [c.chunk_id for c in v0.context.chunks], outcome.case.id
        # … and the reader, shown the same thing, says the same thing
        assert (v3.answer, v3.faithful) == (v0.answer, v0.faithful), outcome.case.id
    v3 = summarize_variant(outcomes, "v3", ci=False)
    assert v3.unexposed_changed == 0 and v3.parts is not None and v3.parts.unexposed_loss == 0.0
    assert v3.delta_faithful == pytest.approx(v3.parts.at_risk * (v3.parts.susceptibility or 0.0))
    # the exposure a study records comes from retrieval alone, and is the same fact
    report = evaluate_retrieval(pipeline, settings, ci=False)
    flags = dict(zip((c.id for c in pipeline.dataset.golden), report.exposed or ()))
    assert [flags[o.case.id] for o in outcomes] == [o.variants["v3"].exposed for o in outcomes]
    # … and so is where a tie at the cut decided it: +1 only on unexposed cases, −1 only on exposed ones
    ties = dict(zip((c.id for c in pipeline.dataset.golden), report.exposure_ties or ()))
    assert [ties[o.case.id] for o in outcomes] == [o.variants["v3"].exposure_tie for o in outcomes]
    assert all(tie == 0 or (tie < 0) == flags[case_id] for case_id, tie in ties.items())
