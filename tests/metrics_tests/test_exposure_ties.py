"""Where an exact tie at the cut decided a case's conflict exposure (issue 37 §1): three rankings of one candidate
list, by hand."""

from __future__ import annotations

import numpy as np

from tuner.chunking import Chunk
from tuner.evaluation.robustness import CaseOutcome, VariantOutcome, summarize_variant
from tuner.front import TrialRecord
from tuner.generation import Answer
from tuner.metrics import TiedExposure, tie_flip
from tuner.retrieval import final_ranking
from tuner.settings import Ranking
from tuner.variants import VariantContext

from tests.evaluation_tests.test_robustness_summary import S, _case, _verdicts


def _ranking(top_k: int, relevance_threshold: float = 0.0, dedupe: float = 1.0) -> Ranking:
    return Ranking(top_k=top_k, relevance_threshold=relevance_threshold, rerank_strength=0.0, dedupe=dedupe)


def _flip(scores: list[float], conflicting: list[bool], ranking: Ranking, vectors: np.ndarray | None = None) -> int:
    """tie_flip of one query whose candidates are chunks 0..n−1 in first-stage order with these final scores."""
    indices, first, conflict = np.arange(len(scores)), np.array(scores), np.array(conflicting)

    def shown(ahead: np.ndarray | None) -> bool:
        chosen, _ = final_ranking(indices, first, None, ranking, None, vectors, ahead)
        return bool(conflict[chosen].any())

    return tie_flip(shown(None), shown(conflict), shown(~conflict))


def test_a_conflicting_chunk_tied_at_the_top_k_cut_could_be_shown() -> None:
    top2 = _ranking(2)
    # scores 0.9, 0.5, 0.5, 0.5; chunk 2 conflicts. First-stage order keeps 0 and 1: unexposed; conflicts first
    # keeps 0 and 2: exposed → +1
    assert _flip([0.9, 0.5, 0.5, 0.5], [False, False, True, False], top2) == 1
    # the kept chunk 1 conflicts and ties with 2 and 3, left out: conflicts last keeps 0 and 2 → −1
    assert _flip([0.9, 0.5, 0.5, 0.5], [False, True, False, False], top2) == -1
    # a conflicting chunk kept above the tie stays whatever the tie does; one below the cut by any margin too
    assert _flip([0.9, 0.5, 0.5, 0.5], [True, False, False, True], top2) == 0
    assert _flip([0.9, 0.5, 0.4], [False, False, True], top2) == 0
    # CMRC's case at top_k 1: an original and its stale copy with one BM25 score, the original first in the index
    assert _flip([0.7, 0.7], [False, True], _ranking(1)) == 1
    # both tied chunks kept: the order inside the context does not change what it holds
    assert _flip([0.7, 0.7], [False, True], _ranking(2)) == 0


def test_the_threshold_cut_compares_with_a_number_so_no_tie_order_moves_it() -> None:
    # the conflicting chunk scores exactly the threshold: kept in every order (≥), exposed, 0
    assert _flip([0.9, 0.5], [False, True], _ranking(5, relevance_threshold=0.5)) == 0


def test_a_dedupe_skip_between_tied_near_copies_is_a_tie_at_the_cut() -> None:
    # the stale copy (chunk 1) has the original's vector and score: whichever comes first is kept, the other skipped
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    assert _flip([0.7, 0.7, 0.2], [False, True, False], _ranking(3, dedupe=0.9), vectors) == 1


def test_exposure_over_tie_orders_spans_what_each_case_could_become() -> None:
    ties = TiedExposure.of([1, 1, 1, 0, 0, -1, 0, 0, 0, 0])
    # 3 of 10 exposed as ranked (say): 3 could join, 1 could leave → [2/10, 6/10]
    assert ties.to_dict(3) == {"tied": 4, "could_expose": 3, "could_unexpose": 1, "range": [0.2, 0.6]}
    assert ties.describe() == "3 more (1 fewer) if tied scores at the cut were ordered the other way"
    assert TiedExposure.of([1, 0]).describe() == "1 more if tied scores at the cut were ordered the other way"
    assert TiedExposure.of([0, 0]).describe() is None and TiedExposure.of([]).range(0) is None


def test_robustness_and_the_trial_record_carry_the_count_beside_the_exposure() -> None:
    v0 = VariantContext("v0", (Chunk("c", "d", 0, 1, "x"),))
    shown = VariantContext("v3", (Chunk("k", "d", 0, 1, "x", source="conflict"),))
    outcomes = [
        CaseOutcome(_case(name, 1, "pricing"), {
            "v0": VariantOutcome("v0", v0, Answer("a"), _verdicts(S)),
            "v3": VariantOutcome("v3", context, Answer("a"), _verdicts(S), tie),
        })
        for name, context, tie in [("a", shown, -1), ("b", v0, 1), ("c", v0, 1), ("d", v0, 0)]
    ]
    exposure = summarize_variant(outcomes, "v3", ci=False).to_dict()["exposure"]
    assert (exposure["n"], exposure["tied"], exposure["range"]) == (1, 3, [0.0, 0.75])
    record = TrialRecord(exposed_cases=(1, 0, 0, 0), exposure_ties=(-1, 1, 1, 0))
    row = record.exposure_dict()
    assert row is not None and (row["value"], row["tied"], row["range"]) == (0.25, 3, [0.0, 0.75])
    assert (record.describe_exposure() or "").endswith(", 2 more (1 fewer) if tied scores at the cut were ordered the other way")
    # a study recorded before keeps the keys it had
    assert set(TrialRecord(exposed_cases=(1, 0)).exposure_dict() or {}) == {"value", "ci"}
