"""Issue 24 §1: a chunk whose first-stage score is 0 shares nothing with the question and is never returned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.deploy import Retriever
from tuner.embedding import CachedEncoder
from tuner.evaluation import evaluate_retrieval
from tuner.io import write_jsonl
from tuner.retrieval import RetrievalPipeline, final_ranking
from tuner.settings import Ranking, RetrievalSettings

DOCS = [
    ("first", "Aurora laptop", "The Aurora laptop costs 1299 dollars."),
    ("middle", "Return policy", "Customers may return a product within 30 days."),
    ("last", "Mercury router", "The Mercury router covers 200 square meters."),
]
# questions sharing no BM25 term with the corpus, in English and in Chinese; the relevant documents are the
# first and the last of the corpus, so ranking in corpus order would make the first one "hit"
NO_SHARED_TERM = [("q-en", "zebra quokka wombat", ["first"]), ("q-zh", "长颈鹿 袋鼠", ["last"])]


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("zero")
    write_jsonl(root / "corpus.jsonl", [{"doc_id": d, "title": t, "text": x} for d, t, x in DOCS])
    write_jsonl(root / "golden.jsonl", [
        *({"id": i, "question": q, "ground_truth": "-", "keypoints": ["-"], "relevant_doc_ids": r} for i, q, r in NO_SHARED_TERM),
        {"id": "q-shared", "question": "What does the Mercury router cover?", "ground_truth": "200 m²", "keypoints": ["200"],
         "relevant_doc_ids": ["last"]},
    ])
    return root


def test_final_ranking_never_keeps_a_zero_first_stage_score() -> None:
    indices = np.array([3, 5, 8])
    first = np.array([0.4, 0.0, 0.0])
    rerank = np.array([0.1, 0.9, 0.0])
    # blended at s = 0.5: 3 -> 0.25, 5 -> 0.45 (outranks 3, but its first-stage score is 0), 8 -> 0.0
    for strength in (0.0, 0.5, 1.0):
        chosen, _ = final_ranking(indices, first, rerank, Ranking(top_k=3, relevance_threshold=0.0, rerank_strength=strength))
        assert chosen.tolist() == [3]


@pytest.mark.parametrize("rerank_strength", [0.0, 0.5])
def test_no_shared_term_is_a_miss_in_eval_and_an_empty_context(
    dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder, rerank_strength: float
) -> None:
    pipeline = RetrievalPipeline(load_dataset(dataset_dir), cache=DiskCache(tmp_path), encoder=encoder)
    settings = RetrievalSettings(retriever="bm25", top_k=1, chunk_size=64, rerank_strength=rerank_strength)
    report = evaluate_retrieval(pipeline, settings, ci=False)
    assert dict(zip(report.case_ids, report.per_case["hit_at_k"])) == {"q-en": 0.0, "q-zh": 0.0, "q-shared": 1.0}
    contexts = {c.case_id: c for c in pipeline.retrieve(settings.model_copy(update={"top_k": 3}))}
    assert contexts["q-en"].chunks == contexts["q-zh"].chunks == ()
    assert contexts["q-shared"].doc_ids == ["last"]


def test_deployed_retriever_returns_nothing_for_no_shared_term(dataset_dir: Path, tmp_path: Path) -> None:
    retriever = Retriever(RetrievalSettings(retriever="bm25", top_k=3, chunk_size=64), load_dataset(dataset_dir), DiskCache(tmp_path))
    assert retriever.retrieve("zebra quokka wombat") == []
    assert retriever.retrieve("长颈鹿 袋鼠") == []
    assert [c.doc_id for c in retriever.retrieve("Mercury router")] == ["last"]
