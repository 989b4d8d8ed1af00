"""The built-in demo knowledge base: a seeded, template-based fictional company with stale document versions.

Same seed, same bytes: every random choice comes from one ``random.Random(seed)`` in a fixed order.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tuner.dataset.demo._docs import edition_title, plan_documents, render, render_edition
from tuner.dataset.demo._values import date
from tuner.dataset.demo._questions import make_golden
from tuner.dataset._model import Dataset
from tuner.dataset._write import write_dataset

GENERATOR_VERSION = 3
"""Bump whenever generated content changes, so cached demo datasets are rebuilt."""


def demo_records(seed: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(corpus, golden, conflicts)`` records of the demo for ``seed``."""
    rng = random.Random(seed)
    specs = plan_documents(rng)
    corpus = [
        {"doc_id": s.doc_id, "title": s.title, "text": render(s, rng), "metadata": {"kind": s.kind, "family": s.family}}
        for s in specs
    ]
    conflicts = [
        {
            "doc_id": f"{s.doc_id}-{date(e.effective).aliases[1]}",
            "title": edition_title(e),
            "text": render_edition(s, e, rng),
            "conflicts_with": s.doc_id,
            "kind": "stale_version",
            "severity": s.severity,
            "wrong_values": [v.text for v in e.values.values()],
        }
        for s in specs
        for e in s.editions
    ]
    return corpus, make_golden(rng, specs), conflicts


def generate_demo(destination: str | Path, seed: int = 0, *, force: bool = False) -> Dataset:
    """Write the demo dataset for ``seed`` into ``destination`` (validated, atomic) and return it."""
    corpus, golden, conflicts = demo_records(seed)
    return write_dataset(destination, corpus, golden, conflicts, force=force)
