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
from tuner.dataset._provenance import LabelProvenance
from tuner.dataset._write import write_dataset
from tuner.errors import UserError

GENERATOR_VERSION = 5
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


def generate_demo(destination: str | Path, seed: int = 0, *, language: str = "en", force: bool = False,
                  manifest: bool = False) -> Dataset:
    """Write the demo dataset for ``seed`` in ``language`` (``en``, ``zh``) into ``destination`` (validated, atomic)
    and return it; with ``manifest``, also the ``dataset.yaml`` a user starts from (:func:`demo_manifest`), as
    ``tuner demo-data`` does (the built-in ``demo``/``demo-zh`` in the cache have none: their content hash stays)."""
    corpus, golden, conflicts = demo_records(seed, language)
    labels = LabelProvenance.generated(f"the demo generator (tuner demo-data --lang {language} --seed {seed})", len(golden))
    return write_dataset(destination, corpus, golden, conflicts, force=force,
                         manifest=demo_manifest(language) if manifest else None, provenance=labels)


_CHINESE_MODELS = """\
# With no embedding_model named, a Chinese dataset embeds with multilingual-e5-small (packaged with tuner: offline,
# its query:/passage: prompts built in; docs/retrieval.md). Another model is named by a local folder or a hub id
# already in the Hugging Face cache:
# embedding_model: BAAI/bge-small-zh-v1.5
# query_prompt: auto            # = 为这个句子生成表示以用于检索相关文章：
"""


def demo_manifest(language: str) -> str:
    """The ``dataset.yaml`` of a demo folder: its declared language, and for Chinese the model lines to turn on.

    >>> print(demo_manifest("en"), end="")
    # dataset.yaml of the demo knowledge base (tuner demo-data --lang en); keys: docs/dataset-format.md
    language: en
    """
    head = f"# dataset.yaml of the demo knowledge base (tuner demo-data --lang {demo_language(language).code}); keys: docs/dataset-format.md\n"
    return head + f"language: {language}\n" + (_CHINESE_MODELS if language == "zh" else "")
