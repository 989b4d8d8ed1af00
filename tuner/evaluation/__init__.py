"""Evaluations of one configuration (ranking → metrics; variants → answers → verdicts → metrics).

Retrieval metrics are deterministic and need no model (:func:`evaluate_retrieval`); robustness
answers every variant through one :class:`Responder` and summarizes Δfaithful per variant
(:class:`RobustnessEvaluator`, :func:`summarize`); ragas scores the same samples on request
(:func:`ragas_scores`, extra ``tuner[ragas]``).
"""

from tuner.evaluation._labels import LabelCaveat, label_caveat
from tuner.evaluation._ragas import RAGAS_METRICS, ragas_scores, require_ragas
from tuner.evaluation._responder import Memo, Responder
from tuner.evaluation.retrieval import EXPOSURE_UNKNOWN, NOT_MEASURED, RetrievalReport, evaluate_retrieval
from tuner.evaluation.robustness import (
    CaseOutcome,
    RobustnessEvaluator,
    RobustnessReport,
    VariantOutcome,
    VariantSummary,
    evaluation_steps,
    summarize,
    summarize_variant,
)

__all__ = [
    "EXPOSURE_UNKNOWN",
    "NOT_MEASURED",
    "RAGAS_METRICS",
    "CaseOutcome",
    "LabelCaveat",
    "Memo",
    "Responder",
    "RetrievalReport",
    "RobustnessEvaluator",
    "RobustnessReport",
    "VariantOutcome",
    "VariantSummary",
    "evaluate_retrieval",
    "evaluation_steps",
    "label_caveat",
    "ragas_scores",
    "require_ragas",
    "summarize",
    "summarize_variant",
]
