"""Statistics (metrics → **estimates** → front): the formulas behind the noise floor: how much of run-to-run variance
is the judge's, and the smallest real difference (``tuner.noisefloor`` measures and stores the floor)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


def min_detectable_difference(run_sd: float, bootstrap_sd: float, z: float = 1.96) -> float:
    """Noise floor = z · √2 · √(run_sd² + bootstrap_sd²).

    One configuration's score carries run-to-run noise (``run_sd``: standard deviation of the mean
    score between repeated runs, from regeneration and re-judging) and case-sampling noise
    (``bootstrap_sd``: bootstrap standard error of the mean over cases). A difference of two
    configurations carries both noises twice, hence the √2 (variances of independent scores add). Two
    configurations whose scores differ by less than this are not distinguishable at the z level.

    >>> round(min_detectable_difference(0.03, 0.04), 4)   # 1.96 · √2 · 0.05
    0.1386
    """
    if run_sd < 0 or bootstrap_sd < 0 or z < 0:
        raise ValueError("standard deviations and z must be non-negative")
    return z * math.sqrt(2) * math.hypot(run_sd, bootstrap_sd)



def run_sd_of_margin(margin: float, z: float) -> float:
    """One configuration's run-to-run sd from a run-to-run margin z · √2 · run_sd (``min_detectable_difference`` with no
    case-sampling part), the inverse of that function: run_sd = margin / (z · √2). Only for margins whose z is known
    (a study file's given noise floor, a study recorded before its run-to-run sd was).

    >>> round(run_sd_of_margin(0.0832, 1.96), 4)   # 0.0832 / 2.7719
    0.03
    """
    if margin < 0 or z <= 0:
        raise ValueError(f"margin must be non-negative and z positive, got {margin} and {z}")
    return margin / (z * math.sqrt(2))

@dataclass(frozen=True)
class VarianceDecomposition:
    """Run-to-run variance of a per-case score split into judge and generator parts.

    ``judge_share`` + ``generator_share`` = 1; both are None when there is no run-to-run variance at
    all (a deterministic pipeline). ``run_sd`` is the standard deviation of the mean score between
    regenerate runs: the ``run_sd`` of ``min_detectable_difference``.
    """

    total_var: float
    judge_var: float
    generator_var: float
    judge_share: float | None
    generator_share: float | None
    run_sd: float


def _score_matrix(scores: Sequence[Sequence[float]] | NDArray[np.float64], name: str) -> NDArray[np.float64]:
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 2 or matrix.shape[1] < 1:
        raise ValueError(f"{name} must be a [run, case] matrix with at least 2 runs and 1 case, got {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} has NaN or infinite scores; drop cases with a missing run first")
    return matrix


def variance_decomposition(
    regenerated: Sequence[Sequence[float]] | NDArray[np.float64],
    rejudged: Sequence[Sequence[float]] | NDArray[np.float64],
) -> VarianceDecomposition:
    """Split run-to-run variance into judge and generator parts.

    ``regenerated[r, c]``: score of case c in run r where the answer was generated anew and judged anew;
    ``rejudged[r, c]``: score of case c in run r where the same saved answer was judged anew. Both use
    the same cases (columns). With var_r the sample variance across runs (ddof = 1) and the mean over
    cases:

        total_var     = mean_c var_r(regenerated[:, c])
        judge_var     = mean_c var_r(rejudged[:, c])
        generator_var = max(total_var − judge_var, 0)
        judge_share   = judge_var / (judge_var + generator_var),  generator_share = 1 − judge_share

    The floor at 0 absorbs sampling error when the judge alone looks noisier than the whole pipeline
    (then judge_share = 1). A metric that never reads the answer (context precision) has all its
    variance in the judge.
    """
    total = _score_matrix(regenerated, "regenerated")
    judge = _score_matrix(rejudged, "rejudged")
    if total.shape[1] != judge.shape[1]:
        raise ValueError(f"regenerated has {total.shape[1]} cases but rejudged has {judge.shape[1]}")
    total_var = float(total.var(axis=0, ddof=1).mean())
    judge_var = float(judge.var(axis=0, ddof=1).mean())
    generator_var = max(total_var - judge_var, 0.0)
    explained = judge_var + generator_var
    judge_share = judge_var / explained if explained > 0 else None
    return VarianceDecomposition(
        total_var=total_var,
        judge_var=judge_var,
        generator_var=generator_var,
        judge_share=judge_share,
        generator_share=None if judge_share is None else 1 - judge_share,
        run_sd=float(total.mean(axis=1).std(ddof=1)),
    )
