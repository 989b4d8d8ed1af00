"""The package graph has no circles (issue 39 §1), nor the module graph inside the packages (issue 47 §7):
``tools/module_graph.py`` reads both from the source as the architecture page draws them; ``tuner.errors`` imports
nothing of tuner; the endpoint plumbing imports nothing of the embedding package; and building the command line's
parser (every ``tuner`` invocation, the ``--engine`` flags made from the engines' registry) imports no index, engine
or BM25 library."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _module_graph() -> ModuleType:
    spec = importlib.util.spec_from_file_location("module_graph", ROOT / "tools" / "module_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["module_graph"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_no_package_imports_another_that_imports_it_back() -> None:
    graph_module = _module_graph()
    graph = graph_module.read_graph(ROOT)
    assert graph_module.circles(graph) == []
    assert "embedding" in graph.top["backends"] and "llm" in graph.top["embedding"]
    # pure metrics sit low: they take what they measure (a chunk is conflicting or not), not the chunker's names
    assert graph.runtime("metrics") <= {"text", "verdicts"}


def test_the_circle_finder_finds_a_lazy_circle(tmp_path: Path) -> None:
    package = tmp_path / "tuner"
    for name, text in {"__init__.py": "", "a/__init__.py": "from tuner.b import x\n",
                       "b/__init__.py": "def f():\n    from tuner.a import y\n", "c.py": "import tuner.a\n"}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    graph_module = _module_graph()
    graph = graph_module.read_graph(tmp_path)
    assert graph_module.circles(graph) == [["a", "b"]]
    layer = graph_module.layers(graph)
    assert graph_module.back_arrows(graph, layer) == [("a", "b"), ("b", "a")] and layer["c"] == layer["a"] + 1


def test_no_module_imports_another_that_imports_it_back() -> None:
    graph_module = _module_graph()
    assert graph_module.module_circles(graph_module.read_modules(ROOT)) == []


def test_errors_are_the_ground_floor() -> None:
    """Every layer raises tuner's errors, so ``tuner.errors`` names no tuner module, not even in a type."""
    assert _module_graph().read_modules(ROOT)["tuner.errors"] == {}


def test_the_module_circle_finder_counts_typing_and_lazy_imports_and_not_a_package_s_own_init(tmp_path: Path) -> None:
    package = tmp_path / "tuner"
    for name, text in {
        "__init__.py": "",
        "errors.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tuner.pareto import Entry\n",
        "pareto/__init__.py": "from tuner.errors import E\nfrom tuner.pareto._pick import pick\n",
        "pareto/_pick.py": "from tuner.pareto import _types\n",  # a submodule, not the package's __init__
        "pareto/_types.py": "",
        "study/__init__.py": "",
        "study/_config.py": "def f():\n    from ._samplers import s\n",
        "study/_samplers.py": "from tuner.study._config import C\n",
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    graph_module = _module_graph()
    modules = graph_module.read_modules(tmp_path)
    assert modules["tuner.pareto._pick"] == {"tuner.pareto._types": "top"}
    assert modules["tuner.errors"] == {"tuner.pareto": "typing"}
    assert graph_module.module_circles(modules) == [["tuner.errors", "tuner.pareto"], ["tuner.study._config", "tuner.study._samplers"]]


def test_importing_the_llm_plumbing_loads_no_encoder_code() -> None:
    code = "import sys, tuner.llm; print(sorted(m for m in sys.modules if m.startswith('tuner.embedding')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_building_the_parser_imports_no_index_engine_or_bm25_library() -> None:
    heavy = ("faiss", "bm25s", "scipy", "pymilvus", "milvus_lite", "tuner.retrieval", "tuner.external._client")
    code = ("import sys; from tuner.cli import build_parser; build_parser(); "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m.startswith({heavy!r})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
