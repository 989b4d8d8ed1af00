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
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__version__ = "0.1.0"


def lazy_exports(package: str, modules: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """The module ``__getattr__`` (PEP 562) of ``package`` that imports each name of ``modules`` (module → names) from
    its module when first asked for, and keeps it in the package; any other name is an ``AttributeError``. A package
    that uses it imports the same names under ``if TYPE_CHECKING:`` so that type checkers see them."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


_EXPORTS = {
    "tuner.dataset": ("load_dataset", "resolve_dataset", "Dataset"),
    "tuner.settings": ("RetrievalSettings", "load_settings_file"),
    "tuner.retrieval": ("RetrievalPipeline", "RetrievedContext"),
    "tuner.evaluation": ("evaluate_retrieval", "RetrievalReport"),
    "tuner.errors": ("UserError",),
    "tuner.deploy": ("Retriever", "RetrievedChunk"),
}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["__version__", *sorted(name for names in _EXPORTS.values() for name in names)]
