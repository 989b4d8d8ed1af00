"""Importers (outside data → **dataset**): convert public or in-house data into the dataset folder format.

Each returns an :class:`ImportResult` that goes through :func:`tuner.dataset.write_dataset`'s validation:
BEIR folders (retrieval only), ConflictNQ (real passages + conflicting fakes), SQuAD-format files (one
document per paragraph, answers as keypoint aliases) and tables (CSV, TSV, JSONL, Parquet, a Hugging Face
dataset saved to disk) through a field mapping, with a ragas-testset preset.
"""

from tuner.errors import ConversionError
from tuner.dataset.importers._beir import import_beir
from tuner.dataset.importers._conflictnq import import_conflictnq
from tuner.dataset.importers._converters import CONVERTERS, Converted, convert_file, decode_text
from tuner.dataset.importers._files import STATE, FilesImport, Version, import_files, infer_version, read_family_mapping
from tuner.dataset.importers._importing import NO_REFERENCE, ImportResult
from tuner.dataset.importers._squad import DEFAULT_CATEGORY, import_squad
from tuner.dataset.importers._table import PRESETS, TableMapping, import_table, table_mapping, table_rows

__all__ = [
    "CONVERTERS",
    "STATE",
    "ConversionError",
    "Converted",
    "FilesImport",
    "Version",
    "convert_file",
    "decode_text",
    "import_files",
    "infer_version",
    "read_family_mapping",
    "DEFAULT_CATEGORY",
    "NO_REFERENCE",
    "PRESETS",
    "ImportResult",
    "TableMapping",
    "import_beir",
    "import_conflictnq",
    "import_squad",
    "import_table",
    "table_mapping",
    "table_rows",
]
