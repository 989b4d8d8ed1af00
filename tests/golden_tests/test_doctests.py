"""The examples in the docstrings of the first-mile modules are run, so they stay true."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from tuner.dataset.importers import _files
from tuner.golden import _conflicts, _keypoints
from tuner.text import _dates


@pytest.mark.parametrize("module", [_dates, _files, _keypoints, _conflicts], ids=lambda m: m.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
