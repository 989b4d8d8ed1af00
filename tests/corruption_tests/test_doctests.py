from __future__ import annotations

import doctest

import tuner.corruption


def test_package_example_holds() -> None:
    result = doctest.testmod(tuner.corruption)
    assert result.attempted > 0 and result.failed == 0
