from __future__ import annotations

import pytest

from tuner.errors import UserError
from tuner.pareto import PickUnmet, PICK_RULES, FrontEntry, pick, runner_up

TWO = {"recall_at_k": "maximize", "v3_delta_faithful": "minimize"}
EPS = {"recall_at_k": 0.05, "v3_delta_faithful": 0.05}


def entry(number: int, recall: float, delta: float, words: float | None = None) -> FrontEntry:
    return FrontEntry(number, {"recall_at_k": recall, "v3_delta_faithful": delta}, context_words=words)


# Normalized (1 = best): A (1, 0), K (0.818, 0.8), C (0.364, 0.914), B (0, 1); K is furthest above x + y = 1.
A, K, C, B = entry(1, 0.95, 0.40, 900), entry(2, 0.85, 0.12, 500), entry(3, 0.60, 0.08, 200), entry(4, 0.40, 0.05, 100)
K2 = entry(5, 0.83, 0.13, 300)


def test_registry_names() -> None:
    assert sorted(PICK_RULES) == ["cheapest", "knee", "min-delta"]


def test_knee_is_the_point_furthest_from_the_extremes_line() -> None:
    assert pick("knee", [A, K, C, B], TWO, EPS).number == 2
    assert pick("knee", [B, C, K, A], TWO, EPS).number == 2


def test_knee_of_a_straight_or_tiny_front_is_the_best_recall_point() -> None:
    straight = [entry(0, 0.3, 0.1), entry(1, 0.9, 0.3), entry(2, 0.6, 0.2)]
    assert pick("knee", straight, TWO, EPS).number == 1
    assert pick("knee", [C, A], TWO, EPS).number == 1
    assert pick("knee", [C], TWO, EPS).number == 3


def test_min_delta_takes_the_most_robust_point_above_the_recall_floor() -> None:
    assert pick("min-delta", [A, K, C, B], TWO, EPS, min_recall=0.6).number == 3
    assert pick("min-delta", [A, K, C, B], TWO, EPS, min_recall=0.61).number == 2
    assert pick("min-delta", [A, K, C, B], TWO, EPS, min_recall=0.0).number == 4


def test_min_delta_errors_name_the_problem() -> None:
    with pytest.raises(PickUnmet, match=r"no front trial reaches recall_at_k ≥ 0.99; the closest is trial 1 "
                       r"\(recall_at_k 0.950, v3_delta_faithful 0.400\)") as unmet:
        pick("min-delta", [A, K, C, B], TWO, EPS, min_recall=0.99)
    assert unmet.value.closest == A and isinstance(unmet.value, UserError)
    with pytest.raises(UserError, match="needs a recall floor"):
        pick("min-delta", [A, K, C, B], TWO, EPS)


def test_cheapest_takes_the_tie_of_the_knee_with_the_least_context() -> None:
    assert pick("knee", [A, K, K2, C, B], TWO, EPS).number == 2
    assert pick("cheapest", [A, K, K2, C, B], TWO, EPS).number == 5


def test_cheapest_without_ties_is_the_knee() -> None:
    assert pick("cheapest", [A, K, C, B], TWO, EPS).number == 2
    assert pick("cheapest", [A, K, K2, C, B], TWO, {}).number == 2


def test_cheapest_needs_context_words_of_the_tied_trials() -> None:
    unmeasured = entry(6, 0.84, 0.12)
    with pytest.raises(UserError, match=r"trials \[6\]"):
        pick("cheapest", [A, K, unmeasured, C, B], TWO, EPS)


def test_unknown_rule_and_empty_front() -> None:
    with pytest.raises(UserError, match="unknown pick rule 'best'; choose one of: cheapest, knee, min-delta"):
        pick("best", [A], TWO, EPS)
    with pytest.raises(UserError, match="no complete trial"):
        pick("knee", [], TWO, EPS)


def test_pick_rules_name_their_objectives_instead_of_reading_key_order() -> None:
    """Issue 39 §1: the knee trades recall@k against the robustness objective and min-delta minimizes that objective,
    wherever a study lists them (context words first, Δ before recall)."""
    reordered = {"context_words": "minimize", "v3_delta_faithful": "minimize", "recall_at_k": "maximize"}
    front = [A, K, C, B]
    assert pick("knee", front, reordered, EPS).number == pick("knee", front, TWO, EPS).number == 2
    assert pick("min-delta", front, reordered, EPS, min_recall=0.6).number == 3


def test_the_runner_up_is_what_the_rule_picks_without_the_pick() -> None:
    assert runner_up("knee", K, [A, K, C, B], TWO, EPS) is not None
    second = runner_up("min-delta", C, [A, K, C, B], TWO, EPS, min_recall=0.6)
    assert second is not None and second.number == 2  # without C, K is the most robust with recall ≥ 0.6
    assert runner_up("min-delta", A, [A, K], TWO, EPS, min_recall=0.9) is None  # K does not reach recall 0.9
    assert runner_up("knee", C, [C], TWO, EPS) is None  # nothing else on the front
