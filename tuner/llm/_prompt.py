"""LLM plumbing (answers, verdicts → **chat endpoint**): prompt templates with ``{name}`` placeholders, filled in one
pass."""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def fill(template: str, **values: str) -> str:
    """Replace each ``{name}`` for which a value is given; other braces (JSON examples) stay as written.

    One pass, so a value that itself contains ``{question}`` is never substituted again.
    """
    return _PLACEHOLDER.sub(lambda m: values.get(m[1], m[0]), template)
