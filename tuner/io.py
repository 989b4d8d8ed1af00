"""Beside the flows (every written file): atomic file output: a reader sees the old file or the whole new one, never a
torn write. Files and folders get the modes the umask gives a plain ``open``/``mkdir`` (0644 and 0755 under 022), not the
0600/0700 of the private temporary names they are staged under, so a CI artifact or a team-shared folder stays readable."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def current_umask() -> int:
    """The process umask, read without changing it where Linux reports it (``/proc/self/status``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def public_mode(path: str | Path, folder: bool = False) -> None:
    """Give ``path`` (made by ``mkstemp``/``mkdtemp``, mode 0600/0700) the mode the umask gives new files or folders."""
    os.chmod(path, (0o777 if folder else 0o666) & ~current_umask())


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and an atomic rename."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        public_mode(tmp)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, payload: Any) -> None:
    atomic_write_text(path, json.dumps(payload, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records), "utf-8")


@contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; on success it replaces ``path`` whole, on error it vanishes.

    Existing files in ``path`` that the block did not write are kept (they are copied in first).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        public_mode(staging, folder=True)
        if target.is_dir():
            shutil.copytree(target, staging, dirs_exist_ok=True)
        yield staging
        backup = None
        if target.exists():
            backup = target.with_name(f".{target.name}.old")
            shutil.rmtree(backup, ignore_errors=True)
            os.replace(target, backup)
        os.replace(staging, target)
        if backup is not None:
            shutil.rmtree(backup, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def read_yaml_mapping(path: str | Path, what: str) -> dict[str, Any]:
    """The mapping in YAML file ``path``; an unreadable file, malformed YAML (with its line) or a
    document that is not a mapping is one :class:`UserError` line naming the file. An empty file is ``{}``."""
    import yaml

    from tuner.errors import UserError

    try:
        data = yaml.safe_load(Path(path).read_text("utf-8-sig"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: invalid UTF-8 at byte {exc.start}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise UserError(f"{where}: malformed YAML: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a mapping ({what})")
    return data


def renamed_key(data: Any, old: str, new: str) -> Any:
    """``data`` with key ``old`` (a spelling files written before a rename still use) moved to ``new``; anything
    but a mapping holding ``old`` comes back as it was. Both spellings at once is a :class:`ValueError`, so a
    pydantic ``mode="before"`` validator reports it under the file's key.

    >>> renamed_key({"noise": {"n": 2}, "seed": 1}, "noise", "variants")
    {'seed': 1, 'variants': {'n': 2}}
    """
    if not isinstance(data, dict) or old not in data:
        return data
    if new in data:
        raise ValueError(f"'{old}' is the old spelling of '{new}': give only '{new}'")
    moved = {key: value for key, value in data.items() if key != old}
    moved[new] = data[old]
    return moved
