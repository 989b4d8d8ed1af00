"""Indexes (chunks → **indexes** → candidates): the encoders of one run and where they keep their vectors.

An :class:`EmbeddingContext` is made once where a run starts (a command, a study, a service) and handed to what
embeds: the :class:`tuner.retrieval.RetrievalPipeline` and the :class:`tuner.backends.BackendResources` of generators and
judges. Everything that embeds through one context shares one loaded model per name, so a process that builds
both loads each model once; the options it runs with apply to every encoder it made, loaded or not.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tuner.cache import default_cache_root
from tuner.embedding._encoders import CachedEncoder, EndpointEncoder, available_devices, parse_endpoint, select_device
from tuner.embedding._inference import BACKENDS, require_packages
from tuner.embedding._models import SentenceTransformerEncoder
from tuner.embedding._stores import STORE_FILE, EmbeddingStore, PostgresEmbeddingStore, VectorStore
from tuner.embedding._types import EmbeddingOptions, ModelEncoder


class EmbeddingContext:
    """Device, batch size and inference backend of every encoder of one run (a study file's ``embedding:``), the
    encoders it has made, one per (model, store), and the stores they keep vectors in.

    Vectors are kept in the PostgreSQL database ``store_url`` (shared by every worker of a study, a study file's
    ``embedding_cache``), or, when None, in ``embeddings.sqlite`` under the cache root an encoder is asked for.

    >>> context = EmbeddingContext(EmbeddingOptions(device="cpu", batch_size=8))
    >>> context.options.batch_size, context.texts_encoded()
    (8, 0)
    """

    def __init__(self, options: EmbeddingOptions | None = None, store_url: str | None = None) -> None:
        self._options = EmbeddingOptions()
        self._store_url: str | None = None
        self._encoders: dict[tuple[str, str], CachedEncoder] = {}
        self._stores: dict[str, VectorStore] = {}
        self._lock = threading.Lock()
        if options is not None or store_url is not None:
            self.configure(options or EmbeddingOptions(), store_url)

    @property
    def options(self) -> EmbeddingOptions:
        """The options every encoder of this context runs with."""
        return self._options

    def configure(self, options: EmbeddingOptions, store_url: str | None = None) -> None:
        """Run every encoder of this context, loaded or not, with ``options`` from now on, and keep the vectors of
        the encoders returned from now on in ``store_url`` (connected here, so an unreachable one fails before any
        work; None: ``embeddings.sqlite`` in the cache root). A backend without its optional packages, or a device
        it cannot use, fails here. A :class:`tuner.retrieval.RetrievalPipeline` keeps the candidate keys it derived
        from the vectors it read, so one built before a backend change is not reused after it (every command builds
        its own)."""
        if options.backend != "auto":
            require_packages(BACKENDS[options.backend])
        # "auto" and "cpu" cannot fail: only a named accelerator needs torch imported to look for it (seconds at start-up)
        select_device(options.device, available_devices() if options.device not in ("auto", "cpu") else {}, options.backend)
        with self._lock:
            if store_url is not None:
                self._store_at(store_url)
            self._options = options
            self._store_url = store_url
            for model in self._models():
                model.configure(options)

    def encoder(self, name: str, cache_root: str | Path | None = None) -> CachedEncoder:
        """The cached encoder of ``name`` (a local model, loaded once per context, or an ``openai:MODEL@URL`` endpoint:
        see :mod:`tuner.embedding._encoders`) with this context's store: the PostgreSQL one, else
        ``embeddings.sqlite`` in ``cache_root`` (default: :func:`tuner.cache.default_cache_root`). Two stores of one
        model share its loaded model."""
        root = Path(cache_root) if cache_root is not None else default_cache_root()
        spec = parse_endpoint(name)
        name = spec.name if spec is not None else name
        with self._lock:
            location = self._store_url or str(root)
            key = (name, location)
            if key not in self._encoders:
                shared = next((e.inner for (n, _), e in self._encoders.items() if n == name), None)
                inner: ModelEncoder
                if shared is not None:
                    inner = shared
                elif spec is not None:
                    inner = EndpointEncoder(spec, self._options)
                else:
                    inner = SentenceTransformerEncoder(name, self._options, root)
                self._encoders[key] = CachedEncoder(inner, self._store_at(location))
            return self._encoders[key]

    def backend_in_use(self, model: str, cache_root: str | Path | None = None) -> str:
        """The backend that runs ``model`` (recorded in a trial's provenance): ``auto`` resolved to the backend it
        chose; for an endpoint, the configured one (the server runs the model). ``cache_root`` as in :meth:`encoder`."""
        inner = self.encoder(model, cache_root).inner
        return inner.backend if isinstance(inner, SentenceTransformerEncoder) else self._options.backend

    def texts_encoded(self) -> int:
        """Texts this context's encoders have run (each model counted once, whatever store it used)."""
        with self._lock:
            return sum(model.texts_encoded for model in self._models())

    def _models(self) -> list[ModelEncoder]:
        """The distinct models behind this context's encoders (one per name, shared by its stores)."""
        return list({id(e.inner): e.inner for e in self._encoders.values()}.values())

    def _store_at(self, location: str) -> VectorStore:
        """The store at ``location``: a PostgreSQL URL, or the folder of a local ``embeddings.sqlite``."""
        if location not in self._stores:
            is_url = location.startswith("postgresql")
            self._stores[location] = PostgresEmbeddingStore(location) if is_url else EmbeddingStore(Path(location) / STORE_FILE)
        return self._stores[location]
