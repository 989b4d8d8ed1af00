"""Collection settings of the whole repository (the suite's own fixtures are in tests/conftest.py)."""

from __future__ import annotations

import compileall
import os
import re
import sys
from pathlib import Path

import pytest

# Their only docstring example is marked +SKIP (it needs an export and a corpus); collecting it imported llama_index
# and langchain_core (~2.3 s of CPU) in every xdist worker. tests/deploy_tests/test_adapters.py imports and tests both.
collect_ignore = ["tuner/deploy/llamaindex.py", "tuner/deploy/langchain.py"]


def pytest_configure(config: pytest.Config) -> None:
    """Where the environment turns bytecode off (``PYTHONDONTWRITEBYTECODE``, set on the CI machines), the run turns it
    back on for itself and compiles tuner and the tests' helper modules once (into ``__pycache__``, ignored by git),
    before the xdist workers start: otherwise every worker and every ``tuner`` process a test starts compiled the
    tuner modules it imported again. Test modules and conftest files are left to pytest, which compiles them its own
    way (asserts rewritten) and would not read plain bytecode of them. Measured on three subprocess-heavy modules (``-n 0``): 55.0, 55.7 → 52.1, 48.9 s of CPU.
    (``PYTHONPYCACHEPREFIX`` would keep the checkout free of bytecode, but it also hides site-packages' compiled
    files, so torch and the rest were compiled again: collection took 11.2 s of CPU per worker instead of 9.5 s.)"""
    if not sys.dont_write_bytecode or hasattr(config, "workerinput"):
        return
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    root = Path(__file__).resolve().parent
    compileall.compile_dir(root / "tuner", quiet=1)
    compileall.compile_dir(root / "tests", quiet=1, rx=re.compile(r"(^|/)(test_[^/]*|conftest)\.py$"))
