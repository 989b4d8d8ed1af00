from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden_tests.drafts import copy_kb, write_case_draft
from tests.text_tests.zh_fixture import DOCS as ZH_DOCS
from tests.tiny_dataset import CORPUS
from tuner.io import write_jsonl


@pytest.fixture(scope="session")
def kb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mixed English and Chinese knowledge base without a golden set: the tiny corpus and the Chinese fixture. Its
    manifest names MiniLM, the model that does not cover Chinese (what the pool and search rules are tested on; a
    Chinese dataset naming no model gets multilingual-e5-small: tests/retrieval_tests/test_packaged_model.py)."""
    root = tmp_path_factory.mktemp("kb")
    corpus = [{"doc_id": d, "title": t, "text": x} for d, t, x in CORPUS]
    corpus += [{"doc_id": f"zh-{d}", "text": x} for d, x in ZH_DOCS]
    write_jsonl(root / "corpus.jsonl", corpus)
    (root / "dataset.yaml").write_text("embedding_model: all-MiniLM-L6-v2\n")
    return root


@pytest.fixture
def kb(kb_dir: Path, tmp_path: Path) -> Path:
    """A copy of the session's knowledge base this test may change."""
    return copy_kb(kb_dir, tmp_path / "kb")


@pytest.fixture
def draft(kb: Path, tmp_path: Path) -> Path:
    """A draft file of review cases over :func:`kb`."""
    (tmp_path / "drafts").mkdir()
    return write_case_draft(kb, tmp_path / "drafts")
