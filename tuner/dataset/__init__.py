"""Dataset (**dataset** → text analysis): the folder format (corpus, golden questions, conflicts), loading, validation
and writing; the built-in demo (``demo/``) and importers of outside data (``importers/``)."""

from tuner.dataset._builtin import builtin_model_defaults, is_builtin, resolve_dataset
from tuner.dataset.demo import generate_demo
from tuner.dataset._load import (
    CONFLICTS, CORPUS, GOLDEN, LANGUAGE_MODELS, MANIFEST, MODEL_KEYS, document_metadata, language_model_defaults, load_dataset,
    manifest_model_defaults,
)
from tuner.dataset._kb import load_knowledge_base
from tuner.dataset._model import DATE, FAMILY, Conflict, Dataset, Document, GoldenCase, Keypoint, MetadataCounts
from tuner.dataset._provenance import (
    PROVENANCE, SUMMARY_TEXTS, UNKNOWN_ORIGIN, DraftLabels, LabelProvenance, labels_json, labels_line, read_provenance,
)
from tuner.dataset._write import write_dataset

__all__ = [
    "CONFLICTS",
    "CORPUS",
    "DATE",
    "FAMILY",
    "GOLDEN",
    "LANGUAGE_MODELS",
    "MANIFEST",
    "MODEL_KEYS",
    "PROVENANCE",
    "SUMMARY_TEXTS",
    "UNKNOWN_ORIGIN",
    "Conflict",
    "Dataset",
    "Document",
    "DraftLabels",
    "GoldenCase",
    "Keypoint",
    "LabelProvenance",
    "MetadataCounts",
    "builtin_model_defaults",
    "generate_demo",
    "is_builtin",
    "document_metadata",
    "labels_json",
    "language_model_defaults",
    "labels_line",
    "load_dataset",
    "load_knowledge_base",
    "manifest_model_defaults",
    "read_provenance",
    "resolve_dataset",
    "write_dataset",
]
