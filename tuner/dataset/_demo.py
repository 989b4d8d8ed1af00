"""The built-in demo knowledge base: a seeded, template-based fictional company with stale document versions.

Same seed, same bytes: every random choice comes from one ``random.Random(seed)`` in a fixed order.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tuner.dataset._demo_docs import plan_documents, render
from tuner.dataset._demo_questions import make_golden
from tuner.dataset._model import Dataset
from tuner.dataset._write import write_dataset

GENERATOR_VERSION = 2
"""Bump whenever generated content changes, so cached demo datasets are rebuilt."""


def demo_records(seed: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(corpus, golden, conflicts)`` records of the demo for ``seed``."""
    rng = random.Random(seed)
    specs = plan_documents(rng)
    corpus = [
        {"doc_id": s.doc_id, "title": s.title, "text": render(s, rng, stale=False), "metadata": {"kind": s.kind, "family": s.family}}
        for s in specs
    ]
    conflicts = [
        {
            "doc_id": f"{s.doc_id}-old",
            "title": s.title,
            "text": render(s, rng, stale=True),
            "conflicts_with": s.doc_id,
            "kind": "stale_version",
            "severity": s.severity,
            "wrong_values": [v.text for v in s.stale.values()],
        }
        for s in specs
        if s.stale
    ]
    return corpus, make_golden(rng, specs), conflicts


def generate_demo(destination: str | Path, seed: int = 0, *, force: bool = False) -> Dataset:
    """Write the demo dataset for ``seed`` into ``destination`` (validated, atomic) and return it."""
    corpus, golden, conflicts = demo_records(seed)
    return write_dataset(destination, corpus, golden, conflicts, force=force)
