"""Dataset (**dataset** → text analysis): dataset specs on the command line: ``demo`` / ``demo:SEED`` name the built-in
English demo, ``demo-zh`` / ``demo-zh:SEED`` the Chinese one (``demo-LANG`` for any demo language); anything else is a
folder."""

from __future__ import annotations

from pathlib import Path

from tuner.cache import DiskCache
from tuner.dataset.demo import GENERATOR_VERSION, LANGUAGES, generate_demo
from tuner.dataset._load import language_model_defaults
from tuner.errors import UserError

DEMO = "demo"


def _demo_name(language: str) -> str:
    """The spec name of the demo in ``language``: ``demo`` for English (as it always was), ``demo-zh`` otherwise."""
    return DEMO if language == "en" else f"{DEMO}-{language}"


_DEMO_NAMES = {_demo_name(code): code for code in LANGUAGES}


def is_builtin(spec: str) -> bool:
    """True when ``spec`` names a built-in demo (``demo``, ``demo-zh:3``), not a folder."""
    return spec.split(":", 1)[0] in _DEMO_NAMES


def _demo_spec(spec: str) -> tuple[str, int] | None:
    """``(language, seed)`` of a demo spec; None for a folder."""
    name, colon, seed = spec.partition(":")
    if name not in _DEMO_NAMES:
        return None
    if not colon:
        return _DEMO_NAMES[name], 0
    try:
        return _DEMO_NAMES[name], int(seed)
    except ValueError:
        raise UserError(f"dataset '{spec}': the demo seed must be an integer ({name}:SEED)") from None


def builtin_model_defaults(spec: str) -> dict[str, str]:
    """The model defaults of built-in demo ``spec`` (those of its language: the demos have no manifest), known without
    generating it.

    >>> builtin_model_defaults("demo-zh:3"), builtin_model_defaults("demo")
    ({'embedding_model': 'multilingual-e5-small'}, {})
    """
    demo = _demo_spec(spec)
    if demo is None:
        raise ValueError(f"{spec!r} is not a built-in demo")
    language = demo[0]
    return language_model_defaults("zh" if language == "zh" else "en", {})


def resolve_dataset(spec: str | Path) -> Path:
    """The folder for ``spec``; ``demo[-LANG][:SEED]`` is generated into the cache on first use, once across processes.

    The generated demo is a checksummed cache entry: a copy whose files were changed on disk (a hand edit, a
    torn write) is moved aside with one warning and generated again, never used."""
    demo = _demo_spec(spec) if isinstance(spec, str) else None
    if demo is None:
        return Path(spec)
    language, seed = demo
    key = f"{_demo_name(language)}-seed{seed}-v{GENERATOR_VERSION}"

    def build(folder: Path) -> None:
        generate_demo(folder, seed, language=language)

    return DiskCache().get_or_build("datasets", key, build, lambda folder: folder, keep_damaged=True)
