"""Export (front → **export** → serve): export a chosen configuration for deployment: settings, the models they need,
and provenance. Never a secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tuner import __version__
from tuner.errors import UserError
from tuner.io import atomic_write_text

FORMATS = (".yaml", ".yml", ".json", ".env")


def export_document(settings: dict[str, Any], provenance: dict[str, Any]) -> dict[str, Any]:
    return {
        "settings": settings,
        "models": {"embedding_model": settings.get("embedding_model"), "reranker": settings.get("reranker")},
        "provenance": {**provenance, "tool": f"tuner {__version__}"},
    }


def write_export(path: str | Path, document: dict[str, Any]) -> Path:
    """Write ``document`` as YAML, JSON or a ``.env`` file (TUNER_<SETTING>=value, provenance as comments)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise UserError(f"{target}: unknown export format '{suffix}' (use {', '.join(FORMATS)})")
    if suffix in (".yaml", ".yml"):
        text = "# written by tuner export; load with: tuner eval DATASET --config THIS_FILE\n"
        text += yaml.safe_dump(document, sort_keys=False)
    elif suffix == ".json":
        text = json.dumps(document, indent=2) + "\n"
    else:
        lines = [f"# {key}: {json.dumps(value)}" for key, value in document["provenance"].items()]
        lines += [f"TUNER_{key.upper()}={value}" for key, value in document["settings"].items()]
        text = "\n".join(lines) + "\n"
    atomic_write_text(target, text)
    return target
