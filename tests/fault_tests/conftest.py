"""Fault injection (issue 14): fixtures shared by the fault tests: an isolated cache root, and byte damage."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def fault_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``TUNER_CACHE`` for one test, so damage done to it never reaches other tests."""
    root = tmp_path / "cache"
    monkeypatch.setenv("TUNER_CACHE", str(root))
    return root


def flip_bytes(path: Path, offset: int, count: int = 8) -> None:
    """Invert ``count`` bytes of ``path`` from ``offset`` in place (a disk error, a bad copy)."""
    with path.open("r+b") as handle:
        handle.seek(offset)
        data = handle.read(count)
        handle.seek(offset)
        handle.write(bytes(b ^ 0xFF for b in data))
