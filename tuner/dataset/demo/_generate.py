"""Demo (dataset → **demo**): the built-in demo knowledge base: a seeded, template-based fictional company with stale
document versions.

Same seed and language, same bytes: every random choice comes from one ``random.Random(seed)`` in a fixed order.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

from tuner.dataset.demo._docs import edition_id, edition_title, plan_documents, render, render_edition
from tuner.dataset.demo._language import Language
from tuner.dataset.demo._questions import make_golden
from tuner.dataset.demo.en import ENGLISH
from tuner.dataset.demo.zh import CHINESE
from tuner.dataset._model import DATE, FAMILY, Dataset
from tuner.dataset._write import write_dataset
from tuner.errors import UserError

GENERATOR_VERSION = 4
"""Bump whenever generated content changes (in any language), so cached demo datasets are rebuilt."""

LANGUAGES: dict[str, Language] = {lang.code: lang for lang in (ENGLISH, CHINESE)}
"""Demo languages by code (``--lang``)."""


def demo_language(code: str) -> Language:
    """The demo language ``code``; a user error naming the choices otherwise."""
    if code not in LANGUAGES:
        raise UserError(f"demo language '{code}' is not available (choose from {', '.join(LANGUAGES)})")
    return LANGUAGES[code]


def demo_records(seed: int = 0, language: str = "en") -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``(corpus, golden, conflicts)`` records of the demo for ``seed`` in ``language``."""
    lang = demo_language(language)
    rng = random.Random(seed)
    specs = plan_documents(rng, lang)
    # every version of a document is in the current one's family; the dates are the effective dates the texts state
    corpus = [
        {"doc_id": s.doc_id, "title": s.title, "text": render(lang, s, rng),
         "metadata": {"kind": s.kind, "product_line": s.family, FAMILY: s.doc_id, DATE: _iso(s.effective), "status": "current"}}
        for s in specs
    ]
    conflicts = [
        {
            "doc_id": edition_id(s, e),
            "title": edition_title(lang, e),
            "text": render_edition(lang, s, e, rng),
            "conflicts_with": s.doc_id,
            "kind": "stale_version",
            "severity": s.severity,
            "wrong_values": [v.text for v in e.values.values()],
            "metadata": {FAMILY: s.doc_id, DATE: _iso(e.effective), "status": "superseded"},
        }
        for s in specs
        for e in s.editions
    ]
    return corpus, make_golden(rng, lang, specs), conflicts


def _iso(day: int) -> str:
    return dt.date.fromordinal(day).isoformat()


def generate_demo(destination: str | Path, seed: int = 0, *, language: str = "en", force: bool = False) -> Dataset:
    """Write the demo dataset for ``seed`` in ``language`` (``en``, ``zh``) into ``destination`` (validated, atomic)
    and return it."""
    corpus, golden, conflicts = demo_records(seed, language)
    return write_dataset(destination, corpus, golden, conflicts, force=force)
