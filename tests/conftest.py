from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tuner.embedding import CachedEncoder, EmbeddingContext, EmbeddingOptions

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# One OpenMP thread per process (torch's intra-op pool; the commands' subprocesses inherit it): the suite's parallelism
# is its three xdist workers and their subprocesses on two cores, and each torch process also running a pool as wide
# as the machine oversubscribed it (its threads spin between parallel regions). Measured with one core taken by a
# busy loop: 434 s → 401 s of wall, 592 s → 528 s of CPU (issue 54 note).
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that hold a test marked ``slow`` first, every module's tests in their own order. With ``--dist
    loadscope --no-loadscope-reorder`` (pyproject's addopts) each xdist worker takes whole modules in this order, so
    the long ones start at once instead of forming the tail of the run, and a module's fixtures are set up once."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


_UNFROZEN_LIMIT = 200_000
"""Objects the collector may track beyond the frozen ones before the next module boundary freezes them too."""


def _freeze_long_lived(limit: int = 0) -> None:
    """Collect, then move every object the collector tracks into its permanent generation (``gc.freeze``), when more
    than ``limit`` are tracked outside it. What a worker keeps for the whole run (torch, transformers and
    sentence-transformers' modules and a loaded model: over a million objects) is then not scanned again by every
    full collection: each one cost ~0.3 s of CPU; the three workers' full collections went 34 s → 24 s (issue 54)."""
    if len(gc.get_objects(generation=2)) > limit:
        gc.collect()
        gc.freeze()


_FULL_COLLECTION_EVERY = 100
"""Middle-generation collections between two full ones (CPython's default: 10)."""


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection imported, and make the collector's full scans ten times rarer: measured by a
    ``gc.callbacks`` timer in each worker after the freeze, 229 full collections of ~75 ms each still made 17 s of the
    three workers' CPU (the young generations 5 s); a worker's cyclic garbage only waits longer to be freed."""
    _freeze_long_lived()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _FULL_COLLECTION_EVERY)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if nextitem is not None and nextitem.path != item.path:
        _freeze_long_lived(_UNFROZEN_LIMIT)


@pytest.fixture(scope="session", autouse=True)
def tuner_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every test session gets its own empty cache root, so tests never read a developer's cache."""
    root = tmp_path_factory.mktemp("tuner-cache")
    os.environ["TUNER_CACHE"] = str(root)
    return root


@pytest.fixture(scope="session")
def embeddings() -> EmbeddingContext:
    """The embedding context of the test session: its models load once per session."""
    return EmbeddingContext()


@pytest.fixture(autouse=True)
def default_embeddings(embeddings: EmbeddingContext) -> Iterator[None]:
    """After each test, the session's encoders are back on the default device and batch size and their store on the
    local SQLite file (a test may point them elsewhere)."""
    yield
    embeddings.configure(EmbeddingOptions())


@pytest.fixture(scope="session")
def encoder(embeddings: EmbeddingContext, tuner_cache: Path) -> CachedEncoder:
    """The default embedding model, loaded once per test session."""
    return embeddings.encoder("all-MiniLM-L6-v2", tuner_cache)


@pytest.fixture(scope="session")
def tiny_dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.tiny_dataset import write_tiny_dataset

    return write_tiny_dataset(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="session")
def local_model_path(tuner_cache: Path) -> Path:
    """The local generator's model file (Gemma 3 270M), assembled into this session's cache once; the test is
    skipped, with the reason, when the ``tuner[local]`` extra is not installed."""
    from tuner.errors import UserError
    from tuner.generation import model_file, require_local

    try:
        require_local("gemma-3-270m")
    except UserError as exc:
        pytest.skip(str(exc))
    return model_file("gemma-3-270m")


@pytest.fixture(scope="session")
def chat_model_path(tuner_cache: Path) -> Path:
    """The packaged chat model's file (Qwen2.5-Coder 0.5B Instruct, 491 MB), assembled into this session's cache and its
    sha256 checked once; skipped, with the reason, without its packages."""
    from tuner.errors import UserError
    from tuner.generation import model_file, require_local

    try:
        require_local("qwen2.5-coder-0.5b-instruct")
    except UserError as exc:
        pytest.skip(str(exc))
    return model_file("qwen2.5-coder-0.5b-instruct")


def _linked_packaged_model(name: str, tuner_cache: Path, base: Path) -> Path:
    """Packaged model ``name`` converted from its package once per test run, into a cache every xdist worker of the
    run shares (under ``base``, the run's temporary folder; DiskCache's lock makes one worker convert while the
    others wait), and hard-linked into this session's cache, where every later use (a command's subprocess included)
    finds it: the conversion and its check against the package take tens of seconds of CPU, the links none."""
    from tuner.cache import DiskCache
    from tuner.embedding._packaged import packaged_model_path

    shared = Path(packaged_model_path(name, DiskCache(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)))
    mine = tuner_cache / "models" / shared.name
    if not mine.exists():
        staging = tuner_cache / "models" / f".{shared.name}.linking"
        for source in sorted(shared.rglob("*")):
            target = staging / source.relative_to(shared)
            if source.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(source, target)
        staging.rename(mine)
    return mine


@pytest.fixture(scope="session", autouse=True)
def shared_packaged_models(tuner_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every use of a packaged model (multilingual-e5-small, picked for any Chinese corpus) on the session's cache finds
    it converted once per test run (:func:`_linked_packaged_model`), not once per xdist worker that first meets a
    Chinese corpus: each conversion was ~30 s of CPU. A test that sets its own ``TUNER_CACHE`` (or passes its own
    cache) still converts there, as a user's first run does."""
    import tuner.embedding._models as models
    from tuner.cache import DiskCache

    convert, lock, base = models.packaged_model_path, threading.Lock(), tmp_path_factory.getbasetemp()
    linked_here: set[str] = set()  # linked once per worker: each link checks the shared copy's 470 MB of checksums

    def linked(name: str, cache: DiskCache | None = None) -> str:
        if name not in linked_here and (cache or DiskCache()).root.resolve() == tuner_cache.resolve():
            with lock:
                _linked_packaged_model(name, tuner_cache, base)
                linked_here.add(name)
        return convert(name, cache)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(models, "packaged_model_path", linked)
        yield


@pytest.fixture(scope="session")
def e5_model_path(tuner_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """multilingual-e5-small's folder in the session's cache (:func:`_linked_packaged_model`)."""
    return _linked_packaged_model("multilingual-e5-small", tuner_cache, tmp_path_factory.getbasetemp())
