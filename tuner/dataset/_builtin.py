"""Dataset specs on the command line: ``demo`` / ``demo:SEED`` name the built-in demo, anything else is a folder."""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock

from tuner.cache import default_cache_root
from tuner.dataset.demo import GENERATOR_VERSION, generate_demo
from tuner.dataset._load import CORPUS
from tuner.errors import UserError


def _demo_seed(spec: str) -> int | None:
    if spec == "demo":
        return 0
    if not spec.startswith("demo:"):
        return None
    try:
        return int(spec.removeprefix("demo:"))
    except ValueError:
        raise UserError(f"dataset '{spec}': the demo seed must be an integer (demo:SEED)") from None


def resolve_dataset(spec: str | Path) -> Path:
    """The folder for ``spec``; ``demo[:SEED]`` is generated into the cache on first use, once across processes."""
    seed = _demo_seed(str(spec)) if isinstance(spec, str) else None
    if seed is None:
        return Path(spec)
    folder = default_cache_root() / "datasets" / f"demo-seed{seed}-v{GENERATOR_VERSION}"
    if (folder / CORPUS).exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock"):
        if not (folder / CORPUS).exists():
            generate_demo(folder, seed)
    return folder
