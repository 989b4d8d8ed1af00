"""Export (front → **export** → serve): export a chosen configuration for deployment: settings, the models they need,
and provenance; read it back (:func:`read_export`, what ``tuner serve`` and ``tuner.Retriever.from_config`` load).
Never a secret."""

from tuner.export._framework import (
    ENV_PREFIX, FORMATS, FRAMEWORKS, SNIPPET_FENCE, ExportedConfig, export_document, read_export, round_to_step, write_export,
    write_framework_export,
)

__all__ = [
    "ENV_PREFIX", "FORMATS", "FRAMEWORKS", "SNIPPET_FENCE", "ExportedConfig", "export_document", "read_export",
    "round_to_step", "write_export", "write_framework_export",
]
