"""Evaluations (metrics → **what a recall figure means**): the caveat a golden set's provenance puts on one
configuration's recall: whether the configuration's retriever helped label the questions (pooling bias), and the recall
with the cases marked "no answer in the knowledge base" counted as misses, a lower bound beside the reported figure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tuner.dataset import LabelProvenance
from tuner.metrics import recall_lower_bound


@dataclass(frozen=True)
class LabelCaveat:
    """``pooled``: the note of a configuration the pool favours (:meth:`LabelProvenance.pool_note`), else ``None``;
    ``lower_bound`` and ``lower_bound_ci``: :func:`tuner.metrics.recall_lower_bound` of the recall and of its interval's
    bounds, with the golden set's cases (:attr:`LabelProvenance.answered`) and the no-answer count; ``no_answer``: how many cases that counts as misses."""

    pooled: str | None
    lower_bound: float
    lower_bound_ci: tuple[float, float] | None
    no_answer: int

    def to_dict(self) -> dict[str, Any]:
        return {"pooled": self.pooled, "recall_lower_bound": self.lower_bound,
                "recall_lower_bound_ci": None if self.lower_bound_ci is None else list(self.lower_bound_ci), "no_answer": self.no_answer}

    def line(self) -> str:
        interval = "" if self.lower_bound_ci is None else f" [{self.lower_bound_ci[0]:.3f}, {self.lower_bound_ci[1]:.3f}]"
        text = f"recall with the {self.no_answer} no-answer case(s) counted as misses (lower bound): {self.lower_bound:.3f}{interval}"
        return text if self.pooled is None else f"{text}; {self.pooled}"


def label_caveat(provenance: LabelProvenance | None, retriever: str, top_k: int, recall: float,
                 ci: tuple[float, float] | None = None) -> LabelCaveat | None:
    """The caveat on ``recall`` (and its interval ``ci``) of a configuration retrieving with ``retriever`` at ``top_k``;
    ``None`` for labels of unknown origin, a provenance without cases, or labels generated with the documents (no pool
    to favour a retriever, no case marked no answer)."""
    if provenance is None or provenance.answered == 0 or provenance.generated_by is not None:
        return None

    def bound(value: float) -> float:
        return recall_lower_bound(value, provenance.answered, provenance.no_answer)

    return LabelCaveat(provenance.pool_note(retriever, top_k), bound(recall), None if ci is None else (bound(ci[0]), bound(ci[1])),
                       provenance.no_answer)
