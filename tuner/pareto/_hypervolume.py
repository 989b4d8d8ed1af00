"""Front (trial record → **front** → report/export): exact hypervolume of a set of points against a reference point, and
its history over a study."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from tuner.objectives import DELTA, DELTA_CORRECT, EXPOSURE, RECALL, Direction
from tuner.pareto._types import Point, goodness

DEFAULT_REFERENCE: dict[str, float] = {RECALL: 0.0, DELTA: 1.0, DELTA_CORRECT: 1.0, EXPOSURE: 1.0}
"""The worst value of each bounded objective: recall 0, a relative faithfulness drop of 100%, every case exposed."""

_UNBOUNDED_MARGIN = 0.1


def default_reference(points: Sequence[Point], directions: Mapping[str, Direction]) -> dict[str, float]:
    """``DEFAULT_REFERENCE`` for recall_at_k and the robustness objectives; any other objective (context_words)
    has no natural worst value, so its reference is the worst value among ``points`` moved outwards
    by 10% of their span (10% of |worst|, at least 0.1, when all points share one value), so that
    the worst point still adds volume."""
    reference: dict[str, float] = {}
    for name, direction in directions.items():
        if name in DEFAULT_REFERENCE:
            reference[name] = DEFAULT_REFERENCE[name]
            continue
        if not points:
            raise ValueError(f"no points to place the reference of objective {name!r} from")
        values = [float(p.values[name]) for p in points]
        span = max(values) - min(values)
        worst = min(values) if direction == "maximize" else max(values)
        margin = _UNBOUNDED_MARGIN * (span if span > 0 else max(abs(worst), 1.0))
        reference[name] = worst - margin if direction == "maximize" else worst + margin
    return reference


def _losses(
    points: Sequence[Point], directions: Mapping[str, Direction], reference: Mapping[str, float]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Points and reference as losses (smaller is better), keeping only points strictly better than the
    reference on every objective: any other point adds no volume."""
    missing = [name for name in directions if name not in reference]
    if missing:
        raise ValueError(f"the reference point has no value for {missing}")
    losses = -goodness(points, directions)
    ref = -goodness([Point(-1, dict(reference))], directions)[0]
    return losses[np.all(losses < ref, axis=1)], ref


def _volume(losses: NDArray[np.float64], ref: NDArray[np.float64]) -> float:
    """Exact volume dominated by ``losses`` (all strictly inside ``ref``), by slicing along the last axis.

    1 objective: ref − min. 2 objectives: sweep in increasing first loss; each point whose second
    loss undercuts all earlier ones adds the strip (ref₀ − x)·(y_prev − y). More objectives: sort by
    the last loss z; between consecutive z values the slice is the (m−1)-volume of the points seen so far.
    """
    if len(losses) == 0:
        return 0.0
    if losses.shape[1] == 1:
        return float(ref[0] - losses[:, 0].min())
    if losses.shape[1] == 2:
        return _area_2d(losses, ref)
    order = np.argsort(losses[:, -1], kind="stable")
    ordered = losses[order]
    upper = np.append(ordered[1:, -1], ref[-1])
    return float(
        sum(
            _volume(ordered[: i + 1, :-1], ref[:-1]) * (upper[i] - ordered[i, -1])
            for i in range(len(ordered))
            if upper[i] > ordered[i, -1]
        )
    )


def _area_2d(losses: NDArray[np.float64], ref: NDArray[np.float64]) -> float:
    """Area dominated by 2-objective ``losses`` (each row strictly below ``ref``) up to ``ref``."""
    order = np.lexsort((losses[:, 1], losses[:, 0]))
    area, ceiling = 0.0, float(ref[1])
    for x, y in losses[order]:
        if y < ceiling:
            area += (float(ref[0]) - float(x)) * (ceiling - float(y))
            ceiling = float(y)
    return area


def hypervolume_2d(
    points: Sequence[Point], directions: Mapping[str, Direction], reference: Mapping[str, float] | None = None
) -> float:
    """Exact area of objective space that the points dominate, bounded by ``reference`` (2 objectives).

    Each objective is turned into a loss (maximized ones negated); the area is the union of the
    rectangles [loss(p), reference] over the points. Points not strictly better than the reference
    on both objectives add nothing. ``reference`` defaults to ``default_reference``.

    >>> from tuner.pareto import Point
    >>> pts = [Point(0, {"recall_at_k": 0.8, "v3_delta_faithful": 0.2}),
    ...        Point(1, {"recall_at_k": 0.5, "v3_delta_faithful": 0.1})]
    >>> round(hypervolume_2d(pts, {"recall_at_k": "maximize", "v3_delta_faithful": "minimize"}), 6)
    0.69
    """
    if len(directions) != 2:
        raise ValueError(f"hypervolume_2d needs exactly 2 objectives, got {list(directions)}")
    return hypervolume(points, directions, reference)


def hypervolume(
    points: Sequence[Point], directions: Mapping[str, Direction], reference: Mapping[str, float] | None = None
) -> float:
    """Exact hypervolume for any number of objectives (2: a sweep; 3 or more: slices of lower-dimensional
    volumes, O(n² log n) for 3), bounded by ``reference`` (default ``default_reference``)."""
    ref_values = default_reference(points, directions) if reference is None else reference
    losses, ref = _losses(points, directions, ref_values)
    return _volume(losses, ref)


def hypervolume_history(
    points_in_order: Sequence[Point], directions: Mapping[str, Direction], reference: Mapping[str, float] | None = None
) -> list[float]:
    """Hypervolume of the first 1, 2, …, n points (complete trials in the order they ran; pruned trials
    are not points and never count), against one fixed reference (default: ``default_reference`` of
    all the points, so the curve is non-decreasing)."""
    ref_values = default_reference(points_in_order, directions) if reference is None else reference
    losses, ref = _losses(points_in_order, directions, ref_values)
    inside = np.all(-goodness(points_in_order, directions) < ref, axis=1)
    # Only the current front bounds the volume, so a point it weakly dominates changes nothing and
    # each recomputation runs over the front, not over every trial so far.
    front = np.empty((0, len(ref)))
    volume, history, seen = 0.0, [], 0
    for is_inside in inside:
        if is_inside:
            point = losses[seen]
            seen += 1
            if not np.any(np.all(front <= point, axis=1)):
                front = np.vstack([front[~np.all(point <= front, axis=1)], point])
                volume = _volume(front, ref)
        history.append(volume)
    return history
