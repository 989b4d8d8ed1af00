"""Evaluations of one configuration: retrieval metrics (deterministic) and, later, noise robustness."""

from tuner.evaluation.retrieval import RetrievalReport, evaluate_retrieval

__all__ = ["RetrievalReport", "evaluate_retrieval"]
