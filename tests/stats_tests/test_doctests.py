from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["_estimate", "_noise", "_paired", "_resampling", "_sequential", "_wilson"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(f"tuner.stats.{name}"))
    assert result.attempted > 0
    assert result.failed == 0
