from __future__ import annotations

import pytest

from tuner.pareto import Point, epsilon_front, front_entries, pareto_front, tie_groups, ties_of

TWO = {"recall_at_k": "maximize", "v3_delta_faithful": "minimize"}
THREE = {**TWO, "context_words": "minimize"}
EPS = {"recall_at_k": 0.05, "v3_delta_faithful": 0.05}


def pt(number: int, recall: float, delta: float, words: float | None = None) -> Point:
    values = {"recall_at_k": recall, "v3_delta_faithful": delta}
    if words is not None:
        values["context_words"] = words
    return Point(number, values, context_words=words)


def numbers(points: list[Point]) -> list[int]:
    return [p.number for p in points]


def test_exact_front_keeps_non_dominated_points_best_recall_first() -> None:
    points = [pt(0, 0.6, 0.10), pt(1, 0.9, 0.30), pt(2, 0.8, 0.20), pt(3, 0.7, 0.25), pt(4, 0.6, 0.12)]
    # 3 is beaten by 2 on both; 4 ties 0 on recall and is worse on delta.
    assert numbers(pareto_front(points, TWO)) == [1, 2, 0]


def test_identical_points_stay_on_the_front_together() -> None:
    points = [pt(5, 0.8, 0.2), pt(2, 0.8, 0.2), pt(1, 0.5, 0.3)]
    assert numbers(pareto_front(points, TWO)) == [2, 5]


def test_direction_decides_which_way_is_better() -> None:
    points = [pt(0, 0.9, 0.1), pt(1, 0.5, 0.3)]
    assert numbers(pareto_front(points, TWO)) == [0]
    assert numbers(pareto_front(points, {"recall_at_k": "minimize", "v3_delta_faithful": "maximize"})) == [1]


def test_a_third_objective_rescues_a_cheaper_point() -> None:
    points = [pt(0, 0.9, 0.1, words=400), pt(1, 0.8, 0.2, words=150)]
    assert numbers(pareto_front(points, TWO)) == [0]
    assert numbers(pareto_front(points, THREE)) == [0, 1]


def test_epsilon_front_drops_a_front_trial_whose_only_edge_is_noise() -> None:
    # 1 is on the exact front only through a delta 0.01 better, within ε = 0.05, while 0 has 0.2 more recall.
    points = [pt(0, 0.9, 0.20), pt(1, 0.7, 0.19)]
    assert numbers(pareto_front(points, TWO)) == [0, 1]
    assert numbers(epsilon_front(points, TWO, EPS)) == [0]


def test_epsilon_front_keeps_a_point_dominated_only_within_noise() -> None:
    points = [pt(0, 0.90, 0.20), pt(1, 0.88, 0.22), pt(2, 0.60, 0.40)]
    assert numbers(pareto_front(points, TWO)) == [0]
    assert numbers(epsilon_front(points, TWO, EPS)) == [0, 1]


def test_epsilon_boundary_counts_as_within_noise() -> None:
    # 0.80 − 0.75 is 0.05000000000000004 in floats: still "within ε", so neither ε-dominates.
    points = [pt(0, 0.80, 0.20), pt(1, 0.75, 0.20)]
    assert numbers(epsilon_front(points, TWO, EPS)) == [0, 1]


def test_zero_epsilon_is_exact_dominance_and_missing_epsilon_is_zero() -> None:
    points = [pt(0, 0.6, 0.10), pt(1, 0.9, 0.30), pt(2, 0.8, 0.20), pt(3, 0.7, 0.25)]
    assert numbers(epsilon_front(points, TWO, {})) == numbers(pareto_front(points, TWO))
    assert numbers(epsilon_front(points, TWO, {"recall_at_k": 0.0, "v3_delta_faithful": 0.0})) == [1, 2, 0]


def test_tie_groups_are_connected_components_within_epsilon() -> None:
    # 0~1 (0.04, 0.03) and 1~2 (0.04, 0.04) but 0 and 2 are 0.08 apart: one chained group; 3 alone.
    points = [pt(0, 0.90, 0.30), pt(1, 0.86, 0.27), pt(2, 0.82, 0.23), pt(3, 0.60, 0.05)]
    assert tie_groups(points, TWO, EPS) == [(0, 1, 2)]
    assert tie_groups(points, TWO, {}) == []


def test_ties_ignore_context_words_but_not_quality() -> None:
    points = [pt(0, 0.90, 0.20, words=400), pt(1, 0.88, 0.21, words=150), pt(2, 0.80, 0.10, words=100)]
    assert tie_groups(points, THREE, EPS) == [(0, 1)]
    assert numbers(ties_of(points[0], points, THREE, EPS)) == [0, 1]


def test_front_entries_annotate_ties_and_epsilon_dominance() -> None:
    points = [pt(0, 0.90, 0.20), pt(1, 0.88, 0.19), pt(2, 0.70, 0.185), pt(3, 0.50, 0.05), pt(4, 0.4, 0.5)]
    entries = front_entries(points, TWO, EPS)
    assert [e.number for e in entries] == [0, 1, 2, 3]
    assert [e.tie_group for e in entries] == [0, 0, None, None]
    assert [e.epsilon_dominated_by for e in entries] == [(), (), (0, 1), ()]
    assert entries[0].values == points[0].values


def test_points_missing_an_objective_are_a_bug() -> None:
    with pytest.raises(ValueError, match="trial 7 has no value"):
        pareto_front([Point(7, {"recall_at_k": 0.5})], TWO)


def test_unknown_direction_and_negative_epsilon_are_rejected() -> None:
    with pytest.raises(ValueError, match="direction"):
        pareto_front([pt(0, 0.5, 0.1)], {"recall_at_k": "up", "v3_delta_faithful": "minimize"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="≥ 0"):
        epsilon_front([pt(0, 0.5, 0.1)], TWO, {"recall_at_k": -0.1})


def test_paired_margins_decide_ties_per_pair_and_keep_the_floor_as_the_mapping() -> None:
    from tuner.pareto import PairedMargins, cheapest

    asked: list[tuple[int, int]] = []

    def pair(a: int, b: int) -> dict[str, float]:
        asked.append((a, b))
        # 0 differs from 1 and 2 consistently case by case (paired margin 0.01); 1 and 2 do not (0.2)
        return {"recall_at_k": 0.01, "v3_delta_faithful": 0.01} if a == 0 else {"recall_at_k": 0.2}

    margins = PairedMargins(EPS, pair)
    assert dict(margins) == EPS  # what a reader is shown: one configuration's floor
    points = [pt(0, 0.90, 0.20, words=300), pt(1, 0.88, 0.18, words=200), pt(2, 0.80, 0.16, words=100)]
    # the single floor ties 0~1 (0.02 apart on both), not 1~2 (0.08 recall apart)
    assert tie_groups(points, TWO, EPS) == [(0, 1)]
    # paired: 0 and 1 are apart (0.02 > 0.01); 1 and 2 tie on recall (0.08 ≤ 0.2), and on Δ (0.02) through the
    # floor, which the pair leaves to it
    assert tie_groups(points, TWO, margins) == [(1, 2)]
    assert numbers(ties_of(points[1], points, TWO, margins)) == [1, 2]
    entries = front_entries(points, TWO, margins)
    assert [e.tie_group for e in entries] == [None, 0, 0]
    assert cheapest(entries, THREE, margins).number in (1, 2)
    assert len(asked) == len(set(asked))  # each pair worked out once
