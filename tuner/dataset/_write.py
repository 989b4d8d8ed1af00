"""Dataset (**dataset** → text analysis): write a dataset folder the safe way: refuse to clobber, validate in staging,
then rename into place."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from tuner.dataset._load import CONFLICTS, CORPUS, GOLDEN, MANIFEST, load_dataset
from tuner.dataset._model import Dataset
from tuner.dataset._provenance import PROVENANCE, LabelProvenance
from tuner.errors import UserError
from tuner.io import atomic_directory, write_jsonl


def write_dataset(
    destination: str | Path,
    corpus: list[dict[str, Any]],
    golden: list[dict[str, Any]],
    conflicts: list[dict[str, Any]],
    *,
    force: bool = False,
    manifest: str | None = None,
    provenance: LabelProvenance | None = None,
) -> Dataset:
    """Write ``corpus.jsonl``, ``golden.jsonl``, (if any) ``conflicts.jsonl`` and (if given, its text) the manifest
    ``dataset.yaml`` into ``destination``, and (if known) where the labels came from (``golden.provenance.json``; a
    file left by the labels this replaces is removed).

    The files are written into a staging folder and validated with :func:`load_dataset` there; only
    a valid dataset replaces ``destination``, so a failure never leaves a half-written folder. A
    folder that already holds a ``corpus.jsonl`` is replaced only with ``force``.
    """
    target = Path(destination)
    if target.exists() and not target.is_dir():
        raise UserError(f"{target}: exists and is not a folder")
    if (target / CORPUS).exists() and not force:
        raise UserError(f"{target}: already holds a dataset ({CORPUS}); pass --force to replace it")
    with atomic_directory(target) as staging:
        write_jsonl(staging / CORPUS, corpus)
        write_jsonl(staging / GOLDEN, golden)
        if conflicts:
            write_jsonl(staging / CONFLICTS, conflicts)
        else:
            # atomic_directory copies the old folder in first; a stale conflicts file must not survive.
            (staging / CONFLICTS).unlink(missing_ok=True)
        if manifest is not None:
            (staging / MANIFEST).write_text(manifest, "utf-8")
        else:
            (staging / MANIFEST).unlink(missing_ok=True)
        if provenance is not None:
            (staging / PROVENANCE).write_text(json.dumps(provenance.to_dict(), indent=2, ensure_ascii=False) + "\n", "utf-8")
        else:
            (staging / PROVENANCE).unlink(missing_ok=True)
        dataset = load_dataset(staging)
    return dataclasses.replace(dataset, path=target)
