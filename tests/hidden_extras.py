"""Run ``tuner`` as the base install has it: ``python -m tests.hidden_extras ARGS...`` refuses to import every module
an optional extra brings (:data:`tuner.extras.EXTRA_MODULES`), then runs ``tuner ARGS...``; ``python -m
tests.hidden_extras --import-all`` imports every module of tuner instead and prints, as JSON, the modules that failed
and the missing module each one named; ``--help-all`` runs every command's ``--help`` and prints what each one
ended with."""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import pkgutil
import re
import sys
from collections.abc import Iterator, Sequence
from importlib import metadata
from types import ModuleType
from typing import Any


class HiddenExtras(importlib.machinery.PathFinder):
    """The path finder of ``sys.meta_path`` as pip's base install would leave it: the top-level packages ``hidden``
    are not found (``import`` raises ModuleNotFoundError, ``importlib.util.find_spec`` answers None) and the
    distributions ``absent`` are not installed (``importlib.metadata`` raises PackageNotFoundError): libraries that
    probe for an optional package (transformers looks for wandb, say) then see what they would see there."""

    hidden: frozenset[str] = frozenset()
    absent: frozenset[str] = frozenset()

    @classmethod
    def find_spec(cls, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in cls.hidden:
            return None
        return super().find_spec(fullname, path, target)

    @classmethod
    def find_distributions(cls, *args: Any, **kwargs: Any) -> Iterator[metadata.Distribution]:
        for dist in super().find_distributions(*args, **kwargs):
            if _canonical(dist.metadata["Name"]) not in cls.absent:
                yield dist


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def hide_extras() -> None:
    from tuner.extras import EXTRA_MODULES

    hidden = frozenset(module for modules in EXTRA_MODULES.values() for module in modules)
    loaded = sorted(name for name in sys.modules if name.partition(".")[0] in hidden)
    if loaded:
        raise RuntimeError(f"already imported before the finder was installed: {loaded}")
    providers = metadata.packages_distributions()
    HiddenExtras.hidden = hidden
    HiddenExtras.absent = frozenset(_canonical(dist) for module in hidden for dist in providers.get(module, []))
    sys.meta_path[:] = [HiddenExtras if finder is importlib.machinery.PathFinder else finder for finder in sys.meta_path]
    importlib.invalidate_caches()


def import_all() -> dict[str, str]:
    """Every module of tuner imported; the ones that failed, each with the module it could not import."""
    import tuner

    failed: dict[str, str] = {}
    for info in pkgutil.walk_packages(tuner.__path__, "tuner."):
        if info.name == "tuner.__main__":  # runs the command line when imported
            continue
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as exc:
            failed[info.name] = str(exc.name)
    return failed


def help_all() -> dict[str, int | str]:
    """``tuner COMMAND [SUBCOMMAND] --help`` for every command of the parser: the exit code of each, or the
    exception it raised."""
    import argparse
    import contextlib
    import io

    from tuner.cli import build_parser, main

    def commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        found = [path] if path else []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    found += commands(child, (*path, name))
        return found

    codes: dict[str, int | str] = {}
    for path in commands(build_parser(), ()):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                codes[" ".join(path)] = main([*path, "--help"])
            except SystemExit as exc:
                codes[" ".join(path)] = int(exc.code or 0)
            except Exception as exc:  # a help text argparse cannot format, say
                codes[" ".join(path)] = f"{type(exc).__name__}: {exc}"
    return codes


if __name__ == "__main__":
    hide_extras()
    if sys.argv[1:] == ["--import-all"]:
        print(json.dumps(import_all()))
    elif sys.argv[1:] == ["--help-all"]:
        print(json.dumps(help_all()))
    else:
        from tuner.cli import main

        sys.exit(main(sys.argv[1:]))
