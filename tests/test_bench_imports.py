"""bench/ and tools/ import only tuner's public names (issue 53): a module path with no ``_private`` part, and a name its
package lists in ``__all__`` (read with ``ast``, nothing is imported), so a benchmark breaks no refactor of a package's
private modules and times what a user calls."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the bench of building a collection builds synthetic ones in tuner's schema with the engine's private builders (what
# it measures is that build itself); every other script imports public names only
WAITING: dict[str, set[str]] = {"bench/milvus_verify.py": {"tuner.engine._collections"}}


def _public_names(module: str) -> set[str] | None:
    """The ``__all__`` of ``module`` (a tuner module or package), or None where it declares none."""
    path = ROOT.joinpath(*module.split("."))
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    for node in ast.parse(source.read_text("utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return None


def private_imports(source: str) -> list[str]:
    """Each ``tuner`` import of ``source`` that reaches a private module or a name outside its package's ``__all__``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if alias.name.split(".")[0] == "tuner" and any(p.startswith("_") for p in alias.name.split("."))]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "tuner":
            module = node.module or ""
            if any(part.startswith("_") for part in module.split(".")):
                found.append(module)
                continue
            public = _public_names(module)
            found += [f"{module}.{alias.name}" for alias in node.names
                      if (alias.name.startswith("_") if public is None else alias.name not in public)]
    return found


@pytest.mark.parametrize("script", sorted(str(p.relative_to(ROOT)) for d in ("bench", "tools") for p in (ROOT / d).glob("*.py")))
def test_a_benchmark_imports_only_public_names(script: str) -> None:
    found = private_imports((ROOT / script).read_text("utf-8"))
    assert [name for name in found if not any(name.startswith(w) for w in WAITING.get(script, ()))] == []


def test_the_check_finds_private_modules_and_names_outside_all() -> None:
    source = ("from tuner.retrieval._bm25 import build_index\nimport tuner.text._segment\n"
              "def f():\n    from tuner.retrieval import RetrievalPipeline, _hybrid\n"
              "from tuner.errors import UserError\nfrom tuner.text import segment\n")
    assert private_imports(source) == ["tuner.retrieval._bm25", "tuner.text._segment", "tuner.retrieval._hybrid"]
