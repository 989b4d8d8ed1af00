"""Engine: values written into Milvus's boolean expressions (filters, primary-key lists, JSON paths), escaped by the
rules of its expression parser.

Both parsers read a string literal in double quotes in which ``\\"``, ``\\'``, ``\\\\``, ``\\n``, ``\\r`` and ``\\t`` are
escapes and every other character but a raw line break stands for itself: Milvus Lite knows only those six escapes (a
JSON string's ``\\u0001`` or ``\\b`` is refused: "unknown escape sequence"), a cluster's grammar knows them among the C
escapes. pymilvus 3.0.2 has expression templates (``filter_params``), but Milvus Lite 3.2.2 does not read them, so a
value is escaped, never bound.
"""

from __future__ import annotations

from typing import Any, Final

_ESCAPES: Final = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def string_literal(value: str) -> str:
    """``value`` as a string literal of Milvus's expression language.

    >>> print(string_literal('say "hi" \\\\ (x)'), string_literal("a\\nb"), repr(string_literal("\\x01\\b\\x00")))
    "say \\"hi\\" \\\\ (x)" "a\\nb" '"\\x01\\x08\\x00"'
    """
    return '"' + value.translate(_ESCAPES) + '"'


def literal(value: Any) -> str:
    """A scalar as a literal of Milvus's expression language: a string (:func:`string_literal`), an integer, a finite
    float or a boolean; a :class:`ValueError` for anything else.

    >>> literal(True), literal(3), literal(2.5), literal("x")
    ('true', '3', '2.5', '"x"')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return repr(value)
    raise ValueError(f"a metadata filter on the engine compares strings, numbers and booleans, not {value!r}")
