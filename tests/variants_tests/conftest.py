from __future__ import annotations

from pathlib import Path

import pytest

from tuner.cache import DiskCache
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.retrieval import RetrievalPipeline


@pytest.fixture(scope="module")
def pipeline(tiny_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory, encoder: CachedEncoder) -> RetrievalPipeline:
    cache = DiskCache(tmp_path_factory.mktemp("variants-cache"))
    return RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=cache, encoder=encoder)
