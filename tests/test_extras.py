"""The base install (``pip install -e .``, no extra) runs every command that needs no extra (issue 54 §1): every
module of tuner imports with the extras' modules hidden (but the four adapters of an extra, which say so), every
command's ``--help`` runs, a study runs, a command that needs an extra says which in one line (exit 2), and the table
of what each extra brings (``tuner.extras``) agrees with ``pyproject.toml`` and with what tuner imports."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tuner.cli import main
from tuner.extras import EXTRA_MODULES, extra_for

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
ADAPTERS = {"tuner.deploy.langchain": "langchain", "tuner.deploy.llamaindex": "llamaindex",
            "tuner.deploy.service": "serve", "tuner.golden.review_app": "serve"}
"""The modules that are an extra's own adapter: imported only by what needs that extra."""


def _base(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m tests.hidden_extras ARGS`` from the repository root: tuner with every extra's modules hidden."""
    return subprocess.run([sys.executable, "-m", "tests.hidden_extras", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def _closure(requirements: list[str], extras: tuple[str, ...] = ("",)) -> set[str]:
    """The installed distributions ``requirements`` bring, recursively (markers evaluated for ``extras``)."""
    seen: set[str] = set()
    stack = [(Requirement(text), extras) for text in requirements]
    while stack:
        requirement, wanted = stack.pop()
        if requirement.marker is not None and not any(requirement.marker.evaluate({"extra": e}) for e in wanted):
            continue
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.distribution(requirement.name).requires or []
        except metadata.PackageNotFoundError:
            continue
        stack.extend((Requirement(text), ("", *requirement.extras)) for text in requires)
    return seen


def _imported_top_names() -> set[str]:
    """Every top-level module name tuner's source imports, at a module's top or inside a function."""
    names: set[str] = set()
    for path in (ROOT / "tuner").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.partition(".")[0])
    return names - {"tuner"} - set(sys.stdlib_module_names)


def test_every_module_imports_on_the_base_install_but_the_adapters_of_an_extra() -> None:
    done = _base("--import-all")
    assert done.returncode == 0, done.stderr
    failed = json.loads(done.stdout)
    assert {module: extra_for(missing) for module, missing in failed.items()} == ADAPTERS


def test_every_command_s_help_runs_on_the_base_install() -> None:
    done = _base("--help-all")
    assert done.returncode == 0, done.stderr
    codes = json.loads(done.stdout)
    assert {"run", "serve", "golden", "golden review", "engine"} <= set(codes)
    assert {command: code for command, code in codes.items() if code != 0} == {}


@pytest.mark.slow
def test_a_study_runs_on_the_base_install(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    """What README command 1 failed on (study → external client → http_guard → starlette)."""
    (tmp_path / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 3},
                                                         "retriever": {"type": "categorical", "choices": ["bm25", "hybrid"]}}))
    study = {"name": "base", "dataset": str(tiny_dataset_dir), "search_space": "space.yaml", "budget": {"trials": 2},
             "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}, "output": str(tmp_path / "out")}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study))
    done = _base("run", str(tmp_path / "study.yaml"), timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "base" / "report.html").is_file()


def test_a_command_that_needs_an_extra_names_it_in_one_line(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    done = _base("serve", "--config", str(tmp_path / "missing.yaml"), "--dataset", str(tiny_dataset_dir))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "tuner: error: tuner serve needs the 'serve' extra (uvicorn is not installed): pip install 'tuner[serve]'"]


def test_a_missing_module_of_an_extra_is_one_line_and_any_other_a_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tiny_dataset_dir: Path
) -> None:
    import tuner.commands.validate as validate

    def needs(name: str) -> object:
        def run(_args: object) -> int:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return run

    monkeypatch.setattr(validate, "run", needs("pymilvus.orm"))
    assert main(["validate", str(tiny_dataset_dir)]) == 2
    assert capsys.readouterr().err == ("tuner: error: tuner validate needs the 'milvus' extra (pymilvus.orm is not "
                                       "installed): pip install 'tuner[milvus]'\n")
    monkeypatch.setattr(validate, "run", needs("numpyy"))
    assert main(["validate", str(tiny_dataset_dir)]) == 3
    assert "internal error: ModuleNotFoundError" in capsys.readouterr().err


def test_the_extras_table_agrees_with_pyproject_and_with_what_tuner_imports() -> None:
    extras = {name for name in PYPROJECT["optional-dependencies"] if name != "dev"}
    assert set(EXTRA_MODULES) == extras
    base = _closure(PYPROJECT["dependencies"])
    providers = metadata.packages_distributions()

    def in_base(module: str) -> bool:
        return any(canonicalize_name(dist) in base for dist in providers.get(module, []))

    for extra, modules in EXTRA_MODULES.items():
        brought = _closure(PYPROJECT["optional-dependencies"][extra])
        for module in modules:
            dists = {canonicalize_name(dist) for dist in providers.get(module, [])}
            assert dists & brought, f"{module}: not installed by tuner[{extra}]"
            assert not in_base(module), f"{module}: the base install has it; not an extra's module"
    unlisted = {module for module in _imported_top_names() if not in_base(module) and extra_for(module) is None}
    assert unlisted == set(), "tuner imports modules the base install lacks and tuner.extras does not list"


def _calls(source: str, name: str) -> list[list[object]]:
    """The arguments of every call of ``name`` in ``source``, each a constant's value or None (not a constant)."""
    return [[arg.value if isinstance(arg, ast.Constant) else None for arg in node.args]
            for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == name]


def test_every_install_line_is_tuner_extras_and_names_an_extra_that_brings_the_module() -> None:
    """One way to say a missing extra (issue 54 §1): no string but a docstring spells ``pip install 'tuner[``
    outside tuner/extras.py, and every :func:`import_extra` / :func:`extra_line` names an extra of the table that
    brings the module."""
    sources = {str(path.relative_to(ROOT / "tuner")): path.read_text("utf-8") for path in (ROOT / "tuner").rglob("*.py")}
    spelled = set()
    for name, source in sources.items():
        tree = ast.parse(source)
        docs = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        if name != "extras.py" and any(isinstance(node, ast.Constant) and id(node) not in docs
                                       and "pip install 'tuner[" in str(node.value) for node in ast.walk(tree)):
            spelled.add(name)
    assert not spelled, spelled
    imports = [args for source in sources.values() for args in _calls(source, "import_extra")]
    lines = [args for source in sources.values() for args in _calls(source, "extra_line")]
    assert len(imports) >= 7 and len(lines) >= 5
    for module, _what, *extra in imports:
        assert isinstance(module, str) and module.partition(".")[0] in EXTRA_MODULES[str(extra[0]) if extra else str(extra_for(module))]
    assert all(extra in EXTRA_MODULES for _what, extra, *_ in lines if extra is not None)


def test_import_extra_names_the_missing_module_or_why_an_installed_one_does_not_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tuner.errors import UserError
    from tuner.extras import import_extra

    (tmp_path / "tuner_broken_extra.py").write_text("from json import no_such_name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow raises ModuleNotFoundError, as when not installed
    with pytest.raises(UserError) as missing:
        import_extra("mlflow", "tracking: mlflow", "mlflow")
    assert str(missing.value) == "tracking: mlflow needs the 'mlflow' extra (mlflow is not installed): pip install 'tuner[mlflow]'"
    with pytest.raises(UserError) as broken:
        import_extra("tuner_broken_extra", "reading Parquet", "tables")
    assert str(broken.value) == ("reading Parquet: tuner_broken_extra does not import (cannot import name 'no_such_name' "
                                 f"from 'json' ({Path(json.__file__)})): pip install 'tuner[tables]'")
    with pytest.raises(KeyError, match="no extra of tuner brings it"):
        import_extra("numpy", "anything")


def test_reading_parquet_on_the_base_install_names_the_tables_extra(tmp_path: Path) -> None:
    done = _base("import", "table", str(tmp_path / "testset.parquet"), str(tmp_path / "out"), "--preset", "ragas")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "tuner: error: reading Parquet needs the 'tables' extra (pyarrow is not installed): pip install 'tuner[tables]'"]
