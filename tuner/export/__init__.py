"""Export (front → **export** → serve): export a chosen configuration for deployment: settings, the models they need,
and provenance; read it back (:func:`read_export`, what ``tuner serve`` and ``tuner.Retriever.from_config`` load).
Never a secret.

``_document`` writes and reads tuner's own forms (``.yaml``, ``.json``, ``.env``); each framework's export is one
:class:`FrameworkExport` in its module, registered in :data:`FRAMEWORKS` when imported here (the order of
``--format``'s choices). A new framework is its module and its import below.
"""

from tuner.export._document import (
    ENV_PREFIX, FORMATS, ExportedConfig, export_document, read_export, round_to_step, write_export,
)
from tuner.export._framework import (
    FRAMEWORKS, SNIPPET_FENCE, FrameworkExport, Translation, Untranslated, register_framework, write_framework_export,
)
from tuner.export import _langchain, _llamaindex, _dify, _ragflow, _milvus  # noqa: F401  (register in this order)

__all__ = [
    "ENV_PREFIX", "FORMATS", "FRAMEWORKS", "SNIPPET_FENCE", "ExportedConfig", "FrameworkExport", "Translation",
    "Untranslated", "export_document", "read_export", "register_framework", "round_to_step", "write_export",
    "write_framework_export",
]
