from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["_dominance", "_hypervolume"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(f"tuner.pareto.{name}"))
    assert result.attempted > 0
    assert result.failed == 0
