"""Find references to anything outside the page, ignoring the text of inline scripts (the plotly bundle
mentions URLs in its code and comments, but never loads them)."""

from __future__ import annotations

import re

INLINE_SCRIPT = re.compile(r"<script\b([^>]*)>.*?</script>", re.S | re.I)
OUTSIDE = re.compile(r"""\b(?:src|href|action|data)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//|url\(\s*["']?\s*(?:[a-z]+:)?//""", re.I)


def outside_references(page: str) -> list[str]:
    """Script tags with a src, and any src/href/url(...) outside inline scripts that names a network location."""
    found = [m.group(0)[:120] for m in INLINE_SCRIPT.finditer(page) if re.search(r"\bsrc\s*=", m.group(1), re.I)]
    markup = INLINE_SCRIPT.sub("", page)
    found.extend(markup[max(0, m.start() - 40) : m.end() + 40] for m in OUTSIDE.finditer(markup))
    return found
