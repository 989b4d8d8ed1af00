"""tuner (all three flows: docs/architecture.md): multi-objective tuning of RAG retrieval settings — recall@k versus
faithfulness under conflicting content.

The public API mirrors the command line::

    import tuner

    dataset = tuner.load_dataset(tuner.resolve_dataset("demo"))
    pipeline = tuner.RetrievalPipeline(dataset)
    report = tuner.evaluate_retrieval(pipeline, tuner.RetrievalSettings(top_k=4, retriever="hybrid"))
    print(report.overall["recall_at_k"])

Heavy modules (torch, FAISS, Optuna) load only when the name that needs them is first used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_dataset": "tuner.dataset",
    "resolve_dataset": "tuner.dataset",
    "Dataset": "tuner.dataset",
    "RetrievalSettings": "tuner.settings",
    "load_settings_file": "tuner.settings",
    "RetrievalPipeline": "tuner.retrieval",
    "RetrievedContext": "tuner.retrieval",
    "evaluate_retrieval": "tuner.evaluation",
    "RetrievalReport": "tuner.evaluation",
    "UserError": "tuner.errors",
    "Retriever": "tuner.deploy",
    "RetrievedChunk": "tuner.deploy",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'tuner' has no attribute {name!r}")
