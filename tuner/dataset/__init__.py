"""Datasets: the folder format (corpus, golden questions, conflicts), loading and validation."""

from tuner.dataset._load import CONFLICTS, CORPUS, GOLDEN, load_dataset
from tuner.dataset._model import Conflict, Dataset, Document, GoldenCase, Keypoint

__all__ = [
    "CONFLICTS",
    "CORPUS",
    "GOLDEN",
    "Conflict",
    "Dataset",
    "Document",
    "GoldenCase",
    "Keypoint",
    "load_dataset",
]
