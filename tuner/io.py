"""Beside the flows (every written file): atomic file output: a reader sees the old file or the whole new one, never a
torn write. Files and folders get the modes the umask gives a plain ``open``/``mkdir`` (0644 and 0755 under 022), not the
0600/0700 of the private temporary names they are staged under, so a CI artifact or a team-shared folder stays readable."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tuner.errors import MalformedLine as MalformedLine  # its home before issue 53; the JSON Lines readers import it here


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


_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_LINE_BREAK = re.compile("[\u2028\u2029\x85]")


def line_safe_json(value: Any, *, sort_keys: bool = False) -> str:
    """``value`` as one line of JSON: text as written (``ensure_ascii=False``: Chinese stays readable) except U+0085,
    U+2028 and U+2029, written as ``\\u`` escapes. They are legal raw in a JSON string, but ``str.splitlines()``,
    JavaScript before ES2019 and many editors break lines there, so a file holding them raw is torn by readers that
    are not ours (text pasted from a PDF carries U+2028). The one rule of every JSON Lines file tuner writes.

    >>> line_safe_json({"text": "24\u2028months 两年"})
    '{"text": "24\\\\u2028months 两年"}'
    """
    text = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
    # outside strings JSON has no place for these characters, so every one found is inside a string
    return _LINE_BREAK.sub(lambda match: _LINE_BREAKS[match.group()], text)


def jsonl_text(records: Iterable[Any], *, sort_keys: bool = False) -> str:
    """``records`` as JSON Lines text: one :func:`line_safe_json` line each, every line ended by ``"\\n"``."""
    return "".join(line_safe_json(record, sort_keys=sort_keys) + "\n" for record in records)


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text(jsonl_text(records, sort_keys=True), "utf-8")


def jsonl_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for each non-blank line of JSON Lines ``data``, split at ``"\\n"`` only (JSON Lines'
    one separator: U+2028 inside a string is text, which ``str.splitlines()`` would cut), numbered from 1."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            yield number, line


def parse_jsonl_line(line: bytes | str, first: bool = False) -> Any:
    """The JSON value of one line (``first``: the file's first line, where a UTF-8 byte order mark is accepted, as
    files saved on Windows have one). Whatever a hostile line can do to the parser — invalid UTF-8, malformed JSON,
    nesting deeper than the parser's recursion allows, an integer over Python's digit limit — is a
    :class:`MalformedLine`, never another exception."""
    try:
        text = line.decode("utf-8-sig" if first else "utf-8") if isinstance(line, bytes) else line.removeprefix("\ufeff" if first else "")
    except UnicodeDecodeError as exc:
        raise MalformedLine(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedLine(f"malformed JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise MalformedLine("malformed JSON: nested too deeply") from None
    except ValueError as exc:  # int() past sys.get_int_max_str_digits(): "Exceeds the limit (4300 digits) ..."
        raise MalformedLine(f"malformed JSON: a number too long ({str(exc).split(':')[0]})") from None


def jsonl_objects(path: str | Path, what: str = "file") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of JSON Lines file ``path``, read as it goes; an unreadable
    file or the first line that is malformed (:func:`parse_jsonl_line`) or not a JSON object is one
    :class:`UserError` naming ``path:line``. ``what`` names the file in the not-found line."""
    from tuner.errors import UserError

    try:
        handle = Path(path).open("rb")
    except FileNotFoundError:
        raise UserError(f"{path}: {what} not found") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    with handle:
        yield from numbered_objects(handle, str(path))  # a binary file's lines end at b"\n" only


def numbered_objects(lines: Iterable[bytes | str], where: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of ``lines`` (a JSON Lines file's lines, split at ``\n``
    only); the first line that is malformed (:func:`parse_jsonl_line`) or not a JSON object is one
    :class:`UserError` naming ``where:line``."""
    from tuner.errors import UserError

    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = parse_jsonl_line(line, first=number == 1)
        except MalformedLine as exc:
            raise UserError(f"{where}:{number}: {exc}") from None
        if not isinstance(record, dict):
            raise UserError(f"{where}:{number}: expected a JSON object")
        yield number, record


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


YAML_MAX_DEPTH = 100
"""Deepest nesting of collections a YAML file may hold (a config needs a handful; deeper is an attack on the parser's
recursion)."""


@functools.cache
def _guarded_loader(dates: bool) -> type[Any]:
    import yaml

    class GuardedLoader(yaml.SafeLoader):  # type: ignore[misc]
        """PyYAML's SafeLoader without aliases (``*a`` expanding ``&a``: a few hundred bytes stand for gigabytes once
        anything copies the value — the billion-laughs attack) and with nesting at most :data:`YAML_MAX_DEPTH`."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.depth = 0

        def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
            if self.check_event(yaml.AliasEvent):
                raise yaml.composer.ComposerError(None, None, "aliases are not allowed", self.peek_event().start_mark)
            self.depth += 1
            try:
                if self.depth > YAML_MAX_DEPTH:
                    raise yaml.composer.ComposerError(None, None, f"nested deeper than {YAML_MAX_DEPTH} levels",
                                                      self.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    if not dates:
        GuardedLoader.yaml_implicit_resolvers = {
            first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    return GuardedLoader


def load_yaml(text: str, dates: bool = True) -> Any:
    """The value of YAML ``text``, read by the one loader of every YAML tuner reads (study, search space, backend and
    LLM configs, ``dataset.yaml``, mappings, Markdown front matter): safe types only, no aliases, nesting at most
    :data:`YAML_MAX_DEPTH` (a ``yaml.YAMLError`` saying so, with its line, like any malformed YAML). ``dates=False``
    keeps a date the text written (``2024-02-30`` is then checked where it is used, not a parse error).

    >>> load_yaml("a: &a [x, x]\\nb: [*a, *a]")
    Traceback (most recent call last):
    yaml.composer.ComposerError: aliases are not allowed
      in "<unicode string>", line 2, column 5:
        b: [*a, *a]
            ^
    """
    import yaml

    return yaml.load(text, Loader=_guarded_loader(dates))  # noqa: S506 (a SafeLoader)


def read_yaml_mapping(path: str | Path, what: str) -> dict[str, Any]:
    """The mapping in YAML file ``path``; an unreadable file, malformed YAML (with its line) or a
    document that is not a mapping is one :class:`UserError` line naming the file. An empty file is ``{}``."""
    import yaml

    from tuner.errors import UserError

    try:
        data = load_yaml(Path(path).read_text("utf-8-sig"))
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
