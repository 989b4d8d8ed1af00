from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["context_precision", "delta", "faithfulness", "hit_at_k", "mrr", "recall_at_k", "rejection"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(f"tuner.metrics.{name}"))
    assert result.attempted > 0
    assert result.failed == 0
