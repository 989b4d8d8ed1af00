"""Chunking by words with fractional overlap; every chunk maps back to ``(doc_id, char span)``.

``chunk_size`` counts words (maximal runs of non-whitespace); ``chunk_overlap`` is the fraction of
a chunk's words repeated at the start of the next chunk, so the stride is
``max(1, round(chunk_size * (1 - chunk_overlap)))`` words. A document no longer than ``chunk_size``
words is one chunk whatever the overlap, which lets its embedding be shared across configurations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tuner.dataset import Dataset

_WORD = re.compile(r"\S+")

CORPUS = "corpus"
CONFLICT = "conflict"


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    start: int
    end: int
    text: str
    title: str = ""
    source: str = CORPUS
    kind: str = ""
    severity: str = ""

    @property
    def passage(self) -> str:
        """What is indexed and shown to the generator: the title as a header line, then the chunk text."""
        return f"{self.title}\n{self.text}" if self.title else self.text


def word_spans(text: str, chunk_size: int, chunk_overlap: float) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of the chunks of ``text``; deterministic, covers every word."""
    if chunk_size < 1 or not 0.0 <= chunk_overlap < 1.0:
        raise ValueError(f"bad chunking: size={chunk_size} overlap={chunk_overlap}")
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    if not words:
        return []
    stride = max(1, round(chunk_size * (1.0 - chunk_overlap)))
    spans: list[tuple[int, int]] = []
    first = 0
    while True:
        last = min(first + chunk_size, len(words)) - 1
        spans.append((words[first][0], words[last][1]))
        if last == len(words) - 1:
            return spans
        first += stride


def chunk_dataset(dataset: Dataset, chunk_size: int, chunk_overlap: float) -> list[Chunk]:
    """Chunks of every corpus document, then of every conflicting document (marked by ``source``)."""
    chunks: list[Chunk] = []

    def add(doc_id: str, text: str, title: str, source: str, kind: str = "", severity: str = "") -> None:
        for start, end in word_spans(text, chunk_size, chunk_overlap):
            chunks.append(Chunk(f"{doc_id}#{start}-{end}", doc_id, start, end, text[start:end], title, source, kind, severity))

    for doc in dataset.corpus:
        add(doc.doc_id, doc.text, doc.title, CORPUS)
    for conflict in dataset.conflicts:
        add(conflict.doc_id, conflict.text, conflict.title, CONFLICT, conflict.kind, conflict.severity)
    return chunks


SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9$€£])|\n\s*")
"""A sentence ends at a line break, or at . ! ? followed by space and a capital, digit or currency sign
(so "v2.5 is out" and "e.g. foo" stay whole). A heuristic, good enough to pick and rewrite sentences."""
_HAS_WORD = re.compile(r"\w")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (see ``SENTENCE_BREAK``), stripped; pieces without a word character dropped."""
    return [s.strip() for s in SENTENCE_BREAK.split(text) if _HAS_WORD.search(s)]
