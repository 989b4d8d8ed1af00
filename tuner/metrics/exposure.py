"""Metrics (ranking, verdicts → **metrics** → trial record): conflict exposure — did a configuration put a conflicting
chunk in front of the reader at all — and Δfaithful split into that exposure and the reader's susceptibility.

Exposure is a retrieval fact (exact, no model, like recall@k); susceptibility is what the reader loses once
exposed, where all the run-to-run noise is. See docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def exposed(conflicting: Sequence[bool]) -> bool:
    """exposed = ∃ i: conflicting_i: the context holds at least one chunk of a conflicting document.

    ``conflicting`` says of each chunk of one case's final context, in any order, whether it comes from a conflicting
    document (``Chunk.conflicting`` in ``tuner.chunking``). Any conflicting chunk counts, whichever document it
    contradicts: a stale version in front of the reader is the risk.

    >>> exposed([False, True]), exposed([False]), exposed([])
    (True, False, False)
    """
    return any(conflicting)


def tie_flip(as_ranked: bool, conflicts_ahead: bool, conflicts_behind: bool) -> int:
    """Whether exactly tied final scores decided one case's exposure, from its exposure with ties ranked three ways
    (:func:`tuner.retrieval.final_ranking` and its ``ahead``): as ranked (first-stage order, the figure reported),
    with every conflicting chunk ahead of the non-conflicting chunks it ties with, and with every one behind them:

        +1  could become exposed:   not as_ranked and conflicts_ahead  (a conflicting chunk left out at the cut —
                                    top_k, or a dedupe skip — scores exactly what a kept corpus chunk scores)
        −1  could become unexposed: as_ranked and not conflicts_behind (every kept conflicting chunk ties with a
                                    corpus chunk left out at the cut)
         0  otherwise: no order of tied scores changes the flag

    The threshold cut compares a score with a number, not with another chunk, so no tie order moves it. Without
    dedupe the two reorderings are the extremes over every tie order (putting conflicting chunks first among equals
    brings the first one as high as it can go), so ±1 says exactly that some tie order flips the flag.

    >>> tie_flip(False, True, False), tie_flip(True, True, False), tie_flip(True, True, True), tie_flip(False, False, False)
    (1, -1, 0, 0)
    """
    if not as_ranked and conflicts_ahead:
        return 1
    if as_ranked and not conflicts_behind:
        return -1
    return 0


@dataclass(frozen=True)
class TiedExposure:
    """Of ``n_total`` cases, how many a tie at the cut decided (:func:`tie_flip`): ``could_expose`` (+1) and
    ``could_unexpose`` (−1). With ``exposed`` of the cases exposed as ranked, exposure over every order of tied
    scores spans [(exposed − could_unexpose) / N, (exposed + could_expose) / N] (each case's flag moves alone).

    >>> ties = TiedExposure.of([1, 1, 0, -1, 0])
    >>> ties.tied, ties.range(2), ties.describe()
    (3, (0.2, 0.8), '2 more (1 fewer) if tied scores at the cut were ordered the other way')
    """

    could_expose: int
    could_unexpose: int
    n_total: int

    @classmethod
    def of(cls, flips: Sequence[int]) -> TiedExposure:
        """From per-case :func:`tie_flip` values."""
        return cls(sum(1 for f in flips if f > 0), sum(1 for f in flips if f < 0), len(flips))

    @property
    def tied(self) -> int:
        """Cases whose exposure a tie decided."""
        return self.could_expose + self.could_unexpose

    def range(self, exposed: int) -> tuple[float, float] | None:
        """Exposure's lowest and highest value over tie orders (None with no case)."""
        if not self.n_total:
            return None
        return (exposed - self.could_unexpose) / self.n_total, (exposed + self.could_expose) / self.n_total

    def to_dict(self, exposed: int) -> dict[str, Any]:
        """``tied``, ``could_expose``, ``could_unexpose`` and ``range``: what sits beside an exposure's n/N."""
        span = self.range(exposed)
        return {"tied": self.tied, "could_expose": self.could_expose, "could_unexpose": self.could_unexpose,
                "range": None if span is None else list(span)}

    def describe(self) -> str | None:
        """``114 more if tied scores at the cut were ordered the other way`` (None when no tie decided a case)."""
        if not self.tied:
            return None
        if not self.could_unexpose:
            moved = f"{self.could_expose} more"
        elif not self.could_expose:
            moved = f"{self.could_unexpose} fewer"
        else:
            moved = f"{self.could_expose} more ({self.could_unexpose} fewer)"
        return f"{moved} if tied scores at the cut were ordered the other way"


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
