from __future__ import annotations

import pytest

from tuner.metrics import RETRIEVAL_METRICS, context_precision, hit_at_k, mrr, recall_at_k


def test_registry_names_match_json_output() -> None:
    expected = {"hit_at_k": hit_at_k, "mrr": mrr, "recall_at_k": recall_at_k, "context_precision": context_precision}
    assert {name: entry.score for name, entry in RETRIEVAL_METRICS.items()} == expected
    assert list(RETRIEVAL_METRICS) == list(expected)  # the order of every output that lists them


@pytest.mark.parametrize("metric", sorted(RETRIEVAL_METRICS))
def test_empty_context_scores_zero(metric: str) -> None:
    assert RETRIEVAL_METRICS[metric]([], {"a"}) == 0.0


@pytest.mark.parametrize("metric", sorted(RETRIEVAL_METRICS))
def test_case_without_relevant_docs_is_unscorable(metric: str) -> None:
    with pytest.raises(ValueError, match="relevant doc id"):
        RETRIEVAL_METRICS[metric](["a"], set())


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        (["x", "y", "a"], 1.0),  # a relevant doc at rank 3 still counts
        (["x", "y", "z"], 0.0),
        (["stale-a", "a-old"], 0.0),  # conflicting versions carry their own ids, never relevant
    ],
)
def test_hit_at_k(ranked: list[str], expected: float) -> None:
    assert hit_at_k(ranked, {"a", "b"}) == expected


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        (["a", "x"], 1.0),  # 1/1
        (["x", "b", "a"], 0.5),  # first relevant at rank 2: 1/2
        (["x", "y", "z", "a"], 0.25),  # 1/4
        (["x", "x", "b", "b"], 1 / 3),  # duplicates keep their ranks: first relevant chunk at rank 3
        (["x", "y"], 0.0),
    ],
)
def test_mrr(ranked: list[str], expected: float) -> None:
    assert mrr(ranked, ("a", "b")) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        (["a", "b", "c"], 1.0),  # 3/3
        (["a", "x", "c"], 2 / 3),  # {a, c}: 2/3
        (["a", "a", "a"], 1 / 3),  # three chunks of one document: {a}: 1/3, not 3/3
        (["x", "y"], 0.0),  # 0/3
    ],
)
def test_recall_at_k_is_document_level(ranked: list[str], expected: float) -> None:
    assert recall_at_k(ranked, ["a", "b", "c"]) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        # mission.md worked examples (R = relevant, I = irrelevant)
        (["a", "x", "b"], (1 + 0 + 2 / 3) / 2),  # R I R: P@1=1, P@3=2/3 → 0.8333
        (["x", "a", "b"], (0 + 1 / 2 + 2 / 3) / 2),  # I R R: P@2=1/2, P@3=2/3 → 0.5833
        (["a", "b", "x"], (1 + 1) / 2),  # R R I: relevant chunks first → 1.0
        (["x", "y", "a"], (1 / 3) / 1),  # I I R: one relevant chunk at rank 3 → 0.3333
        (["x", "y", "z"], 0.0),  # no relevant chunk
        (["a", "a", "x", "a"], (1 + 1 + 3 / 4) / 3),  # chunk level: three relevant chunks → 0.9167
    ],
)
def test_context_precision(ranked: list[str], expected: float) -> None:
    assert context_precision(ranked, {"a", "b"}) == pytest.approx(expected)


def test_context_precision_worked_examples_to_three_decimals() -> None:
    assert round(context_precision(["a", "x", "b"], {"a", "b"}), 3) == 0.833
    assert round(context_precision(["x", "a", "b"], {"a", "b"}), 3) == 0.583
