from __future__ import annotations

import numpy as np
import pytest
from optuna._hypervolume import compute_hypervolume

from tuner.pareto import Point, default_reference, hypervolume, hypervolume_2d, hypervolume_history

TWO = {"recall_at_k": "maximize", "v3_delta_faithful": "minimize"}
THREE = {**TWO, "context_words": "minimize"}


def pt(number: int, recall: float, delta: float, words: float | None = None) -> Point:
    values = {"recall_at_k": recall, "v3_delta_faithful": delta}
    if words is not None:
        values["context_words"] = words
    return Point(number, values, context_words=words)


def test_two_rectangles_minus_their_overlap() -> None:
    # [0, 0.8] × [0.2, 1] = 0.64, [0, 0.5] × [0.1, 1] = 0.45, overlap [0, 0.5] × [0.2, 1] = 0.40.
    points = [pt(0, 0.8, 0.2), pt(1, 0.5, 0.1)]
    assert hypervolume_2d(points, TWO) == pytest.approx(0.69)


def test_dominated_and_out_of_reference_points_add_nothing() -> None:
    base = [pt(0, 0.8, 0.2), pt(1, 0.5, 0.1)]
    extra = [pt(2, 0.7, 0.3), pt(3, 0.9, 1.2), pt(4, 0.0, 0.0)]
    assert hypervolume_2d(base + extra, TWO) == pytest.approx(0.69)


def test_explicit_reference_bounds_the_area() -> None:
    # Against recall 0.5, delta 0.5 only the first point counts: (0.8 − 0.5) × (0.5 − 0.2).
    points = [pt(0, 0.8, 0.2), pt(1, 0.5, 0.1)]
    assert hypervolume_2d(points, TWO, {"recall_at_k": 0.5, "v3_delta_faithful": 0.5}) == pytest.approx(0.09)


def test_three_objectives_two_boxes_minus_their_overlap() -> None:
    # Boxes 0.8·0.8·300 = 192 and 0.5·0.9·100 = 45, overlap 0.5·0.8·100 = 40.
    points = [pt(0, 0.8, 0.2, words=100), pt(1, 0.5, 0.1, words=300)]
    reference = {"recall_at_k": 0.0, "v3_delta_faithful": 1.0, "context_words": 400}
    assert hypervolume(points, THREE, reference) == pytest.approx(197.0)


def test_hypervolume_2d_refuses_other_dimensions() -> None:
    with pytest.raises(ValueError, match="exactly 2"):
        hypervolume_2d([pt(0, 0.8, 0.2, words=100)], THREE)


def test_default_reference_places_unbounded_objectives_past_the_worst_point() -> None:
    points = [pt(0, 0.8, 0.2, words=100), pt(1, 0.5, 0.1, words=300)]
    assert default_reference(points, THREE) == pytest.approx(
        {"recall_at_k": 0.0, "v3_delta_faithful": 1.0, "context_words": 320.0}
    )
    assert default_reference([pt(0, 0.8, 0.2, words=250)], THREE)["context_words"] == pytest.approx(275.0)
    with pytest.raises(ValueError, match="context_words"):
        default_reference([], THREE)


def test_history_counts_each_point_once_in_order() -> None:
    points = [pt(0, 0.5, 0.5), pt(1, 0.4, 0.6), pt(2, 0.8, 0.4), pt(3, 0.2, 0.1), pt(4, 0.0, 0.05)]
    # 0.25; dominated; 0.8·0.6 covers the first; + 0.2·(0.4 − 0.1); recall 0 is on the reference.
    assert hypervolume_history(points, TWO) == pytest.approx([0.25, 0.25, 0.48, 0.54, 0.54])


def test_history_starting_outside_the_reference_is_zero() -> None:
    assert hypervolume_history([pt(0, 0.0, 0.5), pt(1, 0.5, 0.5)], TWO) == pytest.approx([0.0, 0.25])


@pytest.mark.parametrize("dims", [2, 3])
def test_parity_with_optuna(dims: int) -> None:
    rng = np.random.default_rng(dims)
    losses = rng.random((40, dims))
    directions = {f"o{i}": "minimize" for i in range(dims)}
    points = [Point(i, {f"o{j}": float(v) for j, v in enumerate(row)}) for i, row in enumerate(losses)]
    reference = {name: 1.1 for name in directions}
    expected = compute_hypervolume(losses, np.full(dims, 1.1))
    assert hypervolume(points, directions, reference) == pytest.approx(expected, rel=1e-12)


def test_history_ends_at_the_hypervolume_of_all_points_and_never_decreases() -> None:
    rng = np.random.default_rng(11)
    points = [pt(i, float(r), float(0.5 * r + 0.3 * rng.random()), words=float(500 * rng.random()))
              for i, r in enumerate(rng.random(60))]
    history = hypervolume_history(points, THREE)
    assert history[-1] == pytest.approx(hypervolume(points, THREE, default_reference(points, THREE)))
    assert all(a <= b for a, b in zip(history, history[1:]))
    assert history[0] < history[-1]
