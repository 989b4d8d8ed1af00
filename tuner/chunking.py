"""Chunks (text analysis → **chunks** → indexes): chunking in tokens of the embedding model or in characters, snapped to
sentence ends; every chunk maps back to ``(doc_id, char span)``.

A chunk holds at most ``chunk_size`` units, counted in ``chunk_unit``:

- ``tokens`` (default): tokens of the embedding model's own tokenizer (the Hugging Face fast tokenizer
  of the sentence-transformers model, without special tokens) — the unit LangChain and LlamaIndex
  users set, and the one that decides what the embedder truncates;
- ``chars``: characters, whitespace included (``len`` of the chunk before stripping);
- ``words``: legacy, maximal runs of non-whitespace, for old study files; refused for Chinese, where
  a "word" is a whole clause.

Snapping (``tokens`` and ``chars``): a chunk ends at the last sentence end
(:func:`tuner.text.sentence_spans`) that leaves it more than ``SNAP_MIN_FILL · chunk_size`` units
long; when no sentence end is that far in, it is cut at ``chunk_size`` units. The next chunk starts
``max(1, round(n · (1 − chunk_overlap)))`` units after the start of this one (n = this chunk's units),
moved forward to the first sentence start before this chunk's end if there is one. ``words`` chunks
never snap, so ``chunk_size`` words with stride ``max(1, round(chunk_size · (1 − chunk_overlap)))``
are exactly the chunks of tuner before units existed. A document no longer than ``chunk_size`` units
is one chunk whatever the overlap, which lets its embedding be shared across configurations.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import string
import threading
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tuner.dataset import Dataset
from tuner.embedding import parse_endpoint, resolve_model_path
from tuner.errors import UserError
from tuner.settings import Chunking, ChunkUnit
from tuner.text import sentence_spans
from tuner.workers import map_shards

if TYPE_CHECKING:
    from tokenizers import Tokenizer

SNAP_MIN_FILL = 0.5
"""A sentence end is used as a chunk end only if the chunk keeps more than this share of ``chunk_size``:
past that, cutting one sentence in two costs less than a half-empty chunk."""

CHUNKER_VERSION = "1"
"""The version of the chunker's rules (``SNAP_MIN_FILL``, the stride, the sentence rules it snaps to): part of every
chunks key (:func:`tuner.retrieval._table.chunks_key`), so raise it with any change that moves a chunk boundary and
no cache serves chunks cut by the old rules. The sentence rules of the text layer are versioned too (its
``TEXT_LAYER_ID`` is in the BM25 and candidates keys), but chunks are cut before any of those."""

CORPUS = "corpus"
CONFLICT = "conflict"

Span = tuple[int, int]
UnitSpans = Callable[[str], list[Span]]
"""The character spans ``[start, end)`` of the units of a text, in order."""

_WORD = re.compile(r"\S+")


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
    def conflicting(self) -> bool:
        """A chunk of a conflicting document (``source`` is :data:`CONFLICT`)."""
        return self.source == CONFLICT

    @property
    def passage(self) -> str:
        """What is indexed and shown to the generator: the title as a header line, then the chunk text."""
        return f"{self.title}\n{self.text}" if self.title else self.text


def char_units(text: str) -> list[Span]:
    """Every character is one unit."""
    return [(i, i + 1) for i in range(len(text))]


def word_units(text: str) -> list[Span]:
    """Maximal runs of non-whitespace (the legacy ``words`` unit)."""
    return [m.span() for m in _WORD.finditer(text)]


_TOKENIZERS = threading.Lock()

ENCODE_BATCH = 256
"""Documents per call of the tokenizer's ``encode_batch``: enough for its threads to share the work (it runs the
documents of one call in parallel, on every core), few enough that one call's encodings stay small."""

Bounds = tuple[Sequence[int] | np.ndarray, Sequence[int] | np.ndarray]
"""The units of a text as where each starts and where it ends (``[start, end)``), in order: lists, or int64 arrays
(:data:`TokenBounds`)."""

TokenBounds = tuple[np.ndarray, np.ndarray]
"""The tokens of a text as :class:`TokenUnits` gives them: int64 arrays of their starts and of their ends."""

_IDEOGRAPHS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF))
"""The CJK ideographs of the Basic Multilingual Plane, which a BERT normalizer with ``handle_chinese_chars`` sets apart
with spaces. Those of the supplementary planes and the compatibility ideographs (which NFD may change) are left to the
tokenizer."""


class TokenUnits:
    """The tokens of an embedding model's fast tokenizer as units: the character spans of its tokens, special tokens
    left out, and tokens that cover no character (some tokenizers emit them) dropped.

    Safe from several threads: a Rust tokenizer is not to be called by two threads at once ("Already borrowed"), so
    every call holds a lock. :meth:`many` encodes documents in batches with the tokenizer's own parallelism, the
    same spans as one call per document.

    A BERT WordPiece tokenizer (:func:`lone_chars`) is called only on what is not a CJK ideograph or punctuation: each
    of those is a token of its own, spanning its one character, whatever surrounds it, so a run of them is handed to the
    tokenizer as one space (the word boundary they make) and their tokens are added back. The same spans
    (``tests/retrieval_tests/test_token_units.py``), for a Chinese corpus at a fraction of the tokenizer's cost.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._calls = threading.Lock()
        self._lone = lone_chars(tokenizer)

    def __call__(self, text: str) -> list[Span]:
        starts, ends = self._encode([text])[0]
        return list(zip(starts.tolist(), ends.tolist()))

    def many(self, texts: Sequence[str]) -> Iterator[TokenBounds]:
        """The units of each of ``texts``, in order. The next batch is encoded on a thread of its own while the caller
        works on this one: ``encode_batch`` releases the GIL, so the tokenizer's threads and the caller's Python
        share the cores."""
        batches = [list(texts[first : first + ENCODE_BATCH]) for first in range(0, len(texts), ENCODE_BATCH)]
        with ThreadPoolExecutor(1, thread_name_prefix="tokenizer") as ahead:
            pending = ahead.submit(self._encode, batches[0]) if batches else None
            for index in range(len(batches)):
                assert pending is not None
                units = pending.result()
                pending = ahead.submit(self._encode, batches[index + 1]) if index + 1 < len(batches) else None
                yield from units

    def _encode(self, batch: list[str]) -> list[TokenBounds]:
        if self._lone is None:
            with self._calls:
                encodings = self.tokenizer.encode_batch(batch, add_special_tokens=False)
            return [_bounds(encoding.offsets) for encoding in encodings]
        parts = [_set_apart(text, self._lone) for text in batch]
        with self._calls:
            encodings = self.tokenizer.encode_batch([rest for rest, _, _ in parts], add_special_tokens=False)
        units = []
        for (_, origin, lone), encoding in zip(parts, encodings):
            starts, ends = _bounds(encoding.offsets)
            starts = np.concatenate([lone, origin[starts]])
            ends = np.concatenate([lone + 1, origin[ends - 1] + 1])
            order = np.argsort(starts, kind="stable")
            units.append((starts[order], ends[order]))
        return units


def _bounds(offsets: list[tuple[int, int]]) -> TokenBounds:
    spans = np.array(offsets, dtype=np.int64).reshape(-1, 2)
    spans = spans[spans[:, 1] > spans[:, 0]]
    return spans[:, 0], spans[:, 1]


def _set_apart(text: str, lone: np.ndarray) -> tuple[str, np.ndarray, np.ndarray]:
    """``text`` with each run of ``lone`` characters replaced by one space, the position in ``text`` of each character
    of that, and the positions of the lone characters."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    alone = lone[codes]
    kept = ~alone
    kept[1:] |= alone[1:] & kept[:-1]  # the first of each run stays, as a space
    kept[:1] |= alone[:1]
    rest = np.where(alone, np.uint32(ord(" ")), codes)[kept].tobytes().decode("utf-32-le", "surrogatepass")
    return rest, np.flatnonzero(kept), np.flatnonzero(alone)


def lone_chars(tokenizer: Tokenizer) -> np.ndarray | None:
    """For a BERT WordPiece tokenizer (normalizer ``BertNormalizer`` with ``handle_chinese_chars``, pre-tokenizer
    ``BertPreTokenizer``, model ``WordPiece``, no truncation or padding, no added token that strips or needs a whole
    word), a table over code points, True for the characters that are always one token spanning just themselves and a
    word boundary on both sides, whatever surrounds them: the CJK ideographs of :data:`_IDEOGRAPHS` (the normalizer
    puts spaces around them) and the punctuation the normalizer leaves as it is (the pre-tokenizer isolates each
    punctuation character), no character of an added token. None for any other tokenizer.

    Each character is also checked on the tokenizer itself: between two ``a`` it must be a token of its own and both
    ``a`` whole words (not continuations), so a character whose Unicode properties the tokenizer reads differently
    than Python is left out."""
    config = json.loads(tokenizer.to_str())
    normalizer, pre_tokenizer, model = (config.get(part) or {} for part in ("normalizer", "pre_tokenizer", "model"))
    added = config.get("added_tokens") or []
    if (
        normalizer.get("type") != "BertNormalizer"
        or not normalizer.get("handle_chinese_chars")
        or pre_tokenizer.get("type") != "BertPreTokenizer"
        or model.get("type") != "WordPiece"
        or config.get("truncation")
        or config.get("padding")
        or any(token["lstrip"] or token["rstrip"] or token["single_word"] for token in added)
    ):
        return None
    candidates = [chr(code) for first, last in _IDEOGRAPHS for code in range(first, last + 1)]
    candidates += [
        char for char in map(chr, range(0x10000))
        if (unicodedata.category(char).startswith("P") or char in string.punctuation)
        and unicodedata.normalize("NFD", char) == char and char.lower() == char and not unicodedata.combining(char)
    ]
    candidates = [char for char in candidates if not any(char in token["content"] for token in added)]
    probe = tokenizer.encode("a" + "a".join(candidates) + "a", add_special_tokens=False)
    prefix = model.get("continuing_subword_prefix") or "##"
    whole = {offset for offset, token in zip(probe.offsets, probe.tokens) if not token.startswith(prefix)}
    table = np.zeros(0x110000, dtype=bool)
    for at, char in enumerate(candidates):
        position = 2 * at + 1
        if all((position + step, position + step + 1) in whole for step in (-1, 0, 1)):
            table[ord(char)] = True
    return table


def token_units(embedding_model: str) -> TokenUnits:
    """The tokens of ``embedding_model``'s fast tokenizer (offsets into the text, special tokens left out).

    Loads only the tokenizer files, never the weights, and never from the network (see
    :func:`tuner.embedding.resolve_model_path`); for an endpoint, the tokenizer of a local copy of its model. The
    lock keeps the first calls of a service's concurrent requests from racing in transformers' lazy imports
    (``cannot import name 'AutoTokenizer'``).
    """
    with _TOKENIZERS:
        return _token_units(embedding_model)


@lru_cache(maxsize=8)
def _token_units(embedding_model: str) -> TokenUnits:
    spec = parse_endpoint(embedding_model)
    if spec is None:
        path = resolve_model_path(embedding_model)
    else:
        try:  # an endpoint's model counts in its own tokenizer, when a local copy of the model has one
            path = resolve_model_path(spec.model)
        except UserError:
            raise UserError(
                f"embedding model '{embedding_model}' is served by an endpoint and '{spec.model}' is not available "
                "locally for its tokenizer: use chunk_unit: chars (or words)"
            ) from None
    tokenizer = _fast_tokenizer(embedding_model, path)
    # a whole document is longer than the model's input on purpose: neither truncated nor padded
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return TokenUnits(tokenizer)


def _fast_tokenizer(embedding_model: str, path: str) -> Tokenizer:
    """The model's Rust tokenizer: its ``tokenizer.json`` read by ``tokenizers`` (a tenth of a second), else the one
    transformers converts from the model's other tokenizer files (importing transformers takes seconds: it imports
    torch)."""
    from tokenizers import Tokenizer

    file = Path(path) / "tokenizer.json"
    if file.is_file():
        return Tokenizer.from_file(str(file))
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(path)
    if not loaded.is_fast:
        raise UserError(f"embedding model '{embedding_model}' has no fast tokenizer: use chunk_unit: chars")
    backend: Tokenizer = loaded.backend_tokenizer
    return backend


def unit_spans(unit: ChunkUnit, embedding_model: str) -> UnitSpans:
    """How ``unit`` is counted; ``embedding_model`` names the tokenizer of the ``tokens`` unit."""
    if unit == "tokens":
        return token_units(embedding_model)
    return char_units if unit == "chars" else word_units


def unit_ranges(n_units: int, sentence_starts: list[int], chunk_size: int, chunk_overlap: float) -> list[Span]:
    """Chunks as unit index ranges ``[first, end)`` over ``n_units`` units (see the module docs).

    ``sentence_starts`` are the sorted indices of units that open a sentence; empty means no snapping.
    Deterministic; every unit is in at least one chunk.
    """
    if chunk_size < 1 or not 0.0 <= chunk_overlap < 1.0:
        raise ValueError(f"bad chunking: size={chunk_size} overlap={chunk_overlap}")
    ranges: list[Span] = []
    first = 0
    while first < n_units:
        end = min(first + chunk_size, n_units)
        if end < n_units:
            fits = bisect.bisect_right(sentence_starts, end) - 1
            if fits >= 0 and sentence_starts[fits] > first + SNAP_MIN_FILL * chunk_size:
                end = sentence_starts[fits]
        ranges.append((first, end))
        if end == n_units:
            break
        target = first + max(1, round((end - first) * (1.0 - chunk_overlap)))
        opener = bisect.bisect_left(sentence_starts, target)
        first = sentence_starts[opener] if opener < len(sentence_starts) and sentence_starts[opener] <= end else target
    return ranges


def chunk_spans(text: str, units: UnitSpans, chunk_size: int, chunk_overlap: float, snap: bool) -> list[Span]:
    """Character spans ``[start, end)`` of the chunks of ``text``, without surrounding whitespace.

    ``units`` counts the text; ``snap`` moves chunk ends to sentence ends (see :func:`unit_ranges`).
    """
    return chunks_of(text, _starts_ends(units(text)), chunk_size, chunk_overlap, snap)


def _starts_ends(spans: list[Span]) -> tuple[list[int], list[int]]:
    return [start for start, _ in spans], [end for _, end in spans]


def chunks_of(text: str, units: Bounds, chunk_size: int, chunk_overlap: float, snap: bool) -> list[Span]:
    """:func:`chunk_spans` of ``text`` whose units start and end at ``units`` (what a :data:`UnitSpans` gave for it,
    or :data:`Bounds`)."""
    starts, ends = units
    openers = np.searchsorted(starts, [start for start, _ in sentence_spans(text)[1:]]).tolist() if snap else []
    chunks: list[Span] = []
    for first, end in unit_ranges(len(starts), openers, chunk_size, chunk_overlap):
        start, stop = int(starts[first]), int(ends[end - 1])
        piece = text[start:stop]
        start, stop = start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())
        if stop > start and (not chunks or chunks[-1] != (start, stop)):
            chunks.append((start, stop))
    return chunks


def chunk_dataset(dataset: Dataset, chunking: Chunking) -> list[Chunk]:
    """Chunks of every corpus document, then of every conflicting document (marked by ``source``), cut as ``chunking``
    (``RetrievalSettings.chunking``) says; a large corpus is cut in worker processes (:func:`tuner.workers.map_shards`),
    the same chunks."""
    if chunking.chunk_unit == "words" and dataset.language == "zh":
        raise UserError(
            f"{dataset.path}: chunk_unit 'words' counts whitespace-separated words, which Chinese text does not "
            "have: use chunk_unit: tokens or chars"
        )
    unit_spans(chunking.chunk_unit, chunking.tokenizer)  # a unit that cannot be counted fails here, not in a worker
    documents = [(doc.doc_id, doc.text, doc.title, CORPUS, "", "") for doc in dataset.corpus]
    documents += [(c.doc_id, c.text, c.title, CONFLICT, c.kind, c.severity) for c in dataset.conflicts]
    shards = map_shards(partial(_cut, chunking=chunking), [text for _, text, *_ in documents])
    chunks: list[Chunk] = []
    for (doc_id, text, title, source, kind, severity), spans in zip(documents, itertools.chain.from_iterable(shards)):
        for start, end in spans:
            chunks.append(Chunk(f"{doc_id}#{start}-{end}", doc_id, start, end, text[start:end], title, source, kind, severity))
    return chunks


def _cut(texts: list[str], chunking: Chunking) -> list[list[Span]]:
    """The chunk spans of each of ``texts`` (:func:`chunks_of`)."""
    units = unit_spans(chunking.chunk_unit, chunking.tokenizer)
    # the tokenizer's batches run on every core: counting tokens is most of what chunking a corpus costs
    if isinstance(units, TokenUnits):
        bounds: Iterable[Bounds] = units.many(texts)
    else:
        bounds = map(_starts_ends, map(units, texts))
    snap = chunking.chunk_unit != "words"
    return [chunks_of(text, units_of, chunking.chunk_size, chunking.chunk_overlap, snap)
            for text, units_of in zip(texts, bounds)]
