"""Importers (documents → **dataset**): one converter per file suffix, turning a file's bytes into a title and plain
text for ``tuner import files``.

Light formats (Markdown, plain text, HTML) use the core install; PDF, DOCX, PPTX and XLSX need the ``docs`` extra
(pypdf, python-docx, markitdown), and a file of those kinds without it fails with one line naming the extra. Text
files are decoded by detection (charset-normalizer), never by assuming UTF-8, so GBK/GB18030 Chinese reads right.
"""

from __future__ import annotations

import io
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tuner.errors import ConversionError
from tuner.extras import extra_line
from tuner.io import load_yaml
from tuner.text import cjk_share, is_blank

CONVERTER_VERSION = "files-v2"
"""Part of each file's state entry: a change to the converters re-converts every file."""
FRONT_MATTER_BYTES = 16 * 1024
"""Largest front matter read: metadata is a few lines; a file with more is not imported."""


@dataclass(frozen=True)
class Converted:
    text: str
    title: str = ""
    front_matter: dict[str, Any] = field(default_factory=dict)


Converter = Callable[[bytes], Converted]
"""The bytes of one file → its text and, when the format has one, its title (empty: the importer uses the file name)."""

_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(?P<title>.+?)\s*#*\s*$", re.MULTILINE)
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(?P<yaml>.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HTML_TITLE = re.compile(r"<title[^>]*>(?P<title>.*?)</title>", re.IGNORECASE | re.DOTALL)


def decode_text(data: bytes) -> str:
    """``data`` as text: UTF-8 (with or without BOM) when it is valid UTF-8 without NUL bytes, else the encoding
    charset-normalizer finds (UTF-16 without a BOM is valid UTF-8 full of NULs). Text that still holds NUL bytes or is
    mostly control characters is binary data (an image or archive renamed ``.txt``), a :class:`ConversionError`.

    Short Chinese text is where detectors slip (GBK bytes also decode as some Cyrillic or Latin code page), so when
    GB18030 decodes the bytes cleanly into mostly Chinese text it wins over a guess whose text has no CJK at all.

    >>> decode_text("保修两年".encode("utf-16-le"))
    '保修两年'
    >>> decode_text(bytes(64))
    Traceback (most recent call last):
    tuner.errors.ConversionError: binary data, not text (64 NUL bytes)
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = None
    if text is None or "\x00" in text:
        text = _detected(data)
    nul = text.count("\x00")
    control = len(_CONTROL.findall(text))
    if nul or control > _BINARY_CONTROL_SHARE * len(text):
        raise ConversionError(f"binary data, not text ({nul} NUL bytes)" if nul else
                              f"binary data, not text ({control} control characters in {len(text)})")
    return text


_BINARY_CONTROL_SHARE = 0.1
"""Above this share of control characters a decoded file is not text."""
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")
"""Control characters (Unicode Cc) but the tab, the line ends and U+0085 (NEL), which text pasted from elsewhere holds."""


def _detected(data: bytes) -> str:
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    guess = str(best) if best is not None else None
    try:
        gb = data.decode("gb18030")
    except UnicodeDecodeError:
        gb = None
    if gb is not None and (guess is None or cjk_share(gb) > 0.3 > cjk_share(guess)):
        return gb
    if guess is None:
        raise ConversionError("unknown text encoding (not UTF-8, and no encoding could be detected)")
    return guess


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, str | bool | int) or (isinstance(value, float) and math.isfinite(value))


def read_front_matter(text: str) -> dict[str, Any]:
    """The YAML mapping of a Markdown front matter, keeping scalar values and lists of scalars (``tags: [hr]``);
    nested mappings, non-finite numbers and the like are left out. :class:`ConversionError` when it is over
    :data:`FRONT_MATTER_BYTES`, uses aliases, is not valid YAML or not a mapping.

    >>> read_front_matter("title: Leave\\ndate: 2024-02-30\\ntags: [hr, 2024]\\nnested: {a: 1}")
    {'title': 'Leave', 'date': '2024-02-30', 'tags': ['hr', 2024]}
    >>> read_front_matter("a: &a [x, x]\\nb: [*a, *a]")
    Traceback (most recent call last):
    tuner.errors.ConversionError: front matter is not valid YAML (aliases are not allowed, line 2)
    """
    if len(text.encode("utf-8", "surrogatepass")) > FRONT_MATTER_BYTES:
        raise ConversionError(f"front matter over {FRONT_MATTER_BYTES // 1024} KiB")
    try:
        loaded = load_yaml(text, dates=False)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConversionError(f"front matter is not valid YAML ({problem}" + (f", line {mark.line + 1})" if mark else ")")) from None
    if not isinstance(loaded, dict):
        raise ConversionError("front matter must be a YAML mapping")
    return {str(key): value for key, value in loaded.items()
            if _scalar(value) or (isinstance(value, list) and all(_scalar(item) for item in value))}


def _markdown_title(text: str) -> str:
    match = _HEADING.search(text)
    return match["title"].strip() if match else ""


def _markdown(data: bytes) -> Converted:
    text = decode_text(data)
    front: dict[str, Any] = {}
    match = _FRONT_MATTER.match(text)
    if match:
        front = read_front_matter(match["yaml"])
        text = text[match.end():]
    title = str(front.get("title") or _markdown_title(text))
    return Converted(text.strip(), title, front)


def _plain(data: bytes) -> Converted:
    return Converted(decode_text(data).strip())


def _html(data: bytes) -> Converted:
    import trafilatura

    markup = decode_text(data)
    # trafilatura keeps the main text and drops navigation, headers, footers and boilerplate
    text = trafilatura.extract(markup, include_comments=False, include_tables=True, favor_precision=True)
    if not text or not text.strip():
        raise ConversionError("no main text found in the HTML")
    match = _HTML_TITLE.search(markup)
    title = re.sub(r"\s+", " ", match["title"]).strip() if match else ""
    return Converted(text.strip(), title)


def _needs_docs(kind: str, package: str) -> ConversionError:
    return ConversionError(extra_line(f"reading {kind}", "docs", [package]))


def _pdf(data: bytes) -> Converted:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError:
        raise _needs_docs("a PDF", "pypdf") from None
    # pypdf logs each repair it attempts; the one reason line below is what the user needs
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ConversionError("encrypted PDF")
        text = "\n".join((page.extract_text() or "").strip() for page in reader.pages).strip()
        title = str(reader.metadata.get("/Title") or "").strip() if reader.metadata else ""
    except (PdfReadError, ValueError, KeyError) as exc:
        raise ConversionError(f"unreadable PDF ({exc})") from None
    if not text:
        raise ConversionError("the PDF has no text layer (a scan? run OCR first)")
    return Converted(text, title)


def _docx(data: bytes) -> Converted:
    try:
        import docx
    except ImportError:
        raise _needs_docs("a DOCX", "python-docx") from None
    from zipfile import BadZipFile

    try:
        document = docx.Document(io.BytesIO(data))
    except (BadZipFile, KeyError, ValueError) as exc:
        raise ConversionError(f"unreadable DOCX ({type(exc).__name__})") from None
    paragraphs = [p for p in document.paragraphs if p.text.strip()]
    title = next((p.text.strip() for p in paragraphs if p.style is not None and p.style.name == "Title"), "")
    lines = [p.text.strip() for p in paragraphs]
    for table in document.tables:
        lines.extend(" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows)
    text = "\n".join(lines).strip()
    if not text:
        raise ConversionError("the DOCX has no text")
    return Converted(text, title)


def _markitdown(suffix: str) -> Converter:
    def convert(data: bytes) -> Converted:
        try:
            from markitdown import MarkItDown, StreamInfo
        except ImportError:
            raise _needs_docs(f"a {suffix.lstrip('.').upper()}", "markitdown") from None
        try:
            result = MarkItDown(enable_plugins=False).convert_stream(io.BytesIO(data), stream_info=StreamInfo(extension=suffix))
        except Exception as exc:  # markitdown wraps each format library's own errors in its own types
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if "dependencies" in message.lower():
                raise _needs_docs(f"a {suffix.lstrip('.').upper()}", f"markitdown[{suffix.lstrip('.')}]") from None
            raise ConversionError(f"unreadable {suffix.lstrip('.').upper()} ({message[:120]})") from None
        text = re.sub(r"<!--.*?-->", "", result.markdown).strip()
        if not text:
            raise ConversionError(f"the {suffix.lstrip('.').upper()} has no text")
        return Converted(text, _markdown_title(text))

    return convert


CONVERTERS: dict[str, Converter] = {
    ".md": _markdown,
    ".markdown": _markdown,
    ".txt": _plain,
    ".html": _html,
    ".htm": _html,
    ".pdf": _pdf,
    ".docx": _docx,
    ".pptx": _markitdown(".pptx"),
    ".xlsx": _markitdown(".xlsx"),
}
"""Converter per lower-case file suffix; a suffix not listed is not imported."""


def convert_file(path: Path, data: bytes) -> Converted:
    """``data`` (the bytes of ``path``) through the converter of its suffix; :class:`ConversionError` says why not,
    also for a file with no text and for whatever a parser raises on a damaged file (one bad file fails alone)."""
    converter = CONVERTERS.get(path.suffix.lower())
    if converter is None:
        raise ConversionError(f"no converter for '{path.suffix}' files")
    try:
        converted = converter(data)
    except ConversionError:
        raise
    except Exception as exc:  # parsers of damaged files raise anything: XMLSyntaxError, struct.error, ...
        detail = next(iter(str(exc).splitlines()), "")[:200]
        raise ConversionError(f"unreadable {path.suffix.lstrip('.').upper()} ({type(exc).__name__}" + (f": {detail})" if detail else ")")) from None
    if is_blank(converted.text):
        raise ConversionError("no text to import (the file is empty or holds only front matter or markup)")
    if not converted.title.strip():
        return Converted(converted.text, path.stem, converted.front_matter)
    return converted
