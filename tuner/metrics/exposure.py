"""Metrics (ranking, verdicts → **metrics** → trial record): conflict exposure — did a configuration put a conflicting
chunk in front of the reader at all — and Δfaithful split into that exposure and the reader's susceptibility.

Exposure is a retrieval fact (exact, no model, like recall@k); susceptibility is what the reader loses once
exposed, where all the run-to-run noise is. See docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def exposed(conflicting: Sequence[bool]) -> bool:
    """exposed = ∃ i: conflicting_i: the context holds at least one chunk of a conflicting document.

    ``conflicting`` says of each chunk of one case's final context, in any order, whether it comes from a conflicting
    document (``Chunk.conflicting`` in ``tuner.chunking``). Any conflicting chunk counts, whichever document it
    contradicts: a stale version in front of the reader is the risk.

    >>> exposed([False, True]), exposed([False]), exposed([])
    (True, False, False)
    """
    return any(conflicting)


@dataclass(frozen=True)
class DeltaParts:
    """Δ of one variant split by exposure over the ``n`` cases scored at both v0 and the variant, ``exposed`` of them
    exposed (see :func:`delta_parts` for the formulas). ``at_risk``, ``susceptibility`` and ``unexposed_loss`` are
    None where their denominator is 0."""

    n: int
    exposed: int
    at_risk: float | None
    susceptibility: float | None
    unexposed_loss: float | None
    delta: float | None = None


def delta_parts(f0: Sequence[float], fv: Sequence[float], exposure: Sequence[bool]) -> DeltaParts:
    """Δfaithful split into exposure and susceptibility. With E the exposed cases and U the others, over the cases
    scored at both v0 and the variant (``f0[i]``, ``fv[i]``, ``exposure[i]`` of case i):

        at_risk        = Σ_E f0 / Σ f0                 share of the v0-faithful keypoint credit on exposed cases
        susceptibility = Σ_E (f0 − fv) / Σ_E f0        what the reader loses once shown a conflict
                                                         (None when no case is exposed, or Σ_E f0 = 0)
        unexposed_loss = Σ_U (f0 − fv) / Σ f0          0 whenever unexposed cases keep their v0 context
        Δ = (Σ f0 − Σ fv) / Σ f0 = at_risk · susceptibility + unexposed_loss

    ``delta`` is that Δ; it, ``at_risk`` and ``unexposed_loss`` are None when Σ f0 = 0.

    >>> parts = delta_parts([1.0, 0.5, 1.0, 0.0], [0.0, 0.5, 1.0, 0.0], [True, True, False, False])
    >>> parts.at_risk, round(parts.susceptibility, 4), parts.unexposed_loss
    (0.6, 0.6667, 0.0)
    """
    if not len(f0) == len(fv) == len(exposure):
        raise ValueError(f"per-case lists differ in length: {len(f0)} f0, {len(fv)} fv, {len(exposure)} exposure")
    total = sum(f0)
    shown = [i for i, e in enumerate(exposure) if e]
    shown_f0 = sum(f0[i] for i in shown)
    shown_loss = sum(f0[i] - fv[i] for i in shown)
    hidden_loss = sum(f0[i] - fv[i] for i, e in enumerate(exposure) if not e)
    return DeltaParts(
        n=len(f0),
        exposed=len(shown),
        at_risk=shown_f0 / total if total > 0 else None,
        susceptibility=shown_loss / shown_f0 if shown_f0 > 0 else None,
        unexposed_loss=hidden_loss / total if total > 0 else None,
        delta=(shown_loss + hidden_loss) / total if total > 0 else None,
    )
