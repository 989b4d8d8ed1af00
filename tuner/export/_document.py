"""Export (front → **export** → serve): the export of a chosen configuration (settings, the models they need and
provenance, never a secret) as YAML, JSON or a ``.env`` file, and read back (:func:`read_export`, what ``tuner serve``
and ``tuner.Retriever.from_config`` load).

The ``.env`` form holds one ``TUNER_<SETTING>=value`` line per retrieval setting (strings JSON-quoted, so a
prompt's trailing space survives) and the provenance as ``# key: json`` comment lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from tuner import __version__
from tuner.errors import UserError
from tuner.io import atomic_write_text, line_safe_json, read_yaml_mapping
from tuner.settings import RetrievalSettings, settings_from_mapping

FORMATS = (".yaml", ".yml", ".json", ".env")
ENV_PREFIX = "TUNER_"
_ENV_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_PROVENANCE_LINE = re.compile(r"^#\s*([a-z_]+):\s(.*)$")


def round_to_step(value: float, step: float) -> float:
    """``value`` with the decimals of ``step`` only: a value Optuna drew on a 0.05 grid is written ``0.15``, not
    ``0.15000000000000002``.

    >>> round_to_step(0.15000000000000002, 0.05)
    0.15
    """
    decimals = max(0, -int(Decimal(str(step)).normalize().as_tuple().exponent))
    return round(value, decimals)


def export_document(
    settings: dict[str, Any], provenance: dict[str, Any], steps: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """The export of one configuration; float settings with a search-space step in ``steps`` are rounded to it."""
    rounded = {
        name: round_to_step(value, steps[name]) if isinstance(value, float) and steps and name in steps else value
        for name, value in settings.items()
    }
    return {
        "settings": rounded,
        "models": {"embedding_model": rounded.get("embedding_model"), "reranker": rounded.get("reranker")},
        "provenance": {**provenance, "tool": f"tuner {__version__}"},
    }


def _env_value(value: Any) -> str:
    return line_safe_json(value) if isinstance(value, (str, dict)) else str(value)


def write_export(path: str | Path, document: dict[str, Any]) -> Path:
    """Write ``document`` as YAML, JSON or a ``.env`` file (TUNER_<SETTING>=value, provenance as comments)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise UserError(f"{target}: unknown export format '{suffix}' (use {', '.join(FORMATS)})")
    if suffix in (".yaml", ".yml"):
        text = "# written by tuner export; load with: tuner serve --config THIS_FILE, or tuner eval DATASET --config THIS_FILE\n"
        text += yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    elif suffix == ".json":
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        lines = ["# written by tuner export; load with: tuner serve --config THIS_FILE"]
        lines += [f"# {key}: {line_safe_json(value)}" for key, value in document["provenance"].items()]
        lines += [f"{ENV_PREFIX}{key.upper()}={_env_value(value)}" for key, value in document["settings"].items()]
        text = "\n".join(lines) + "\n"
    atomic_write_text(target, text)
    return target


@dataclass(frozen=True)
class ExportedConfig:
    """A configuration read back from an export: validated settings and the provenance it carries."""

    settings: RetrievalSettings
    provenance: dict[str, Any]
    source: str


def _read_env(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        lines = path.read_text("utf-8").split("\n")  # one setting a line: U+2028 in a value is not a line end
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    settings: dict[str, Any] = {}
    provenance: dict[str, Any] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            comment = _PROVENANCE_LINE.match(line)
            if comment:
                try:
                    provenance[comment.group(1)] = json.loads(comment.group(2))
                except ValueError:
                    pass  # an ordinary comment that happens to contain a colon
            continue
        match = _ENV_LINE.match(line)
        if match is None:
            raise UserError(f"{path}:{number}: expected KEY=value, got {line[:60]!r}")
        key, value = match.groups()
        if not key.startswith(ENV_PREFIX):
            continue  # a shared .env file may hold other programs' keys
        name = key[len(ENV_PREFIX):].lower()
        if name not in RetrievalSettings.model_fields:
            raise UserError(f"{path}:{number}: {key}: not a retrieval setting (known: "
                            f"{', '.join(ENV_PREFIX + n.upper() for n in RetrievalSettings.model_fields)})")
        if value.startswith(('"', "{")):
            try:
                value = json.loads(value)
            except ValueError:
                raise UserError(f"{path}:{number}: {key}: malformed quoted value") from None
        settings[name] = value
    return settings, provenance


def read_export(path: str | Path) -> ExportedConfig:
    """The settings and provenance of an export (``.yaml``, ``.yml``, ``.json`` or ``.env``) or of a hand-written
    settings mapping; a bad key or value is one :class:`UserError` line naming the file and the key."""
    source = Path(path)
    if source.suffix.lower() == ".env":
        values, provenance = _read_env(source)
    else:
        data = read_yaml_mapping(source, "an export of tuner export")
        values = data["settings"] if isinstance(data.get("settings"), dict) else data
        stored = data.get("provenance")
        provenance = dict(stored) if isinstance(stored, dict) else {}
    return ExportedConfig(settings_from_mapping(values, str(source)), provenance, str(source))
