"""Engine (indexes → **candidates in an engine**): where a study's first stage runs, chosen once per study or command
(``engine:`` in a study file, ``--engine`` on the command line), one interface (``_base``: :class:`Engine`, the
:data:`ENGINES` registry, :data:`EngineConfig` made from it) with three engines: ``memory``, tuner's own indexes in
the process (the default); ``milvus`` (``_config``, ``_milvus``), a Milvus Lite ``.db`` or a Milvus cluster, where
tuner builds one collection per corpus, chunking and embedding model (``_collections``: naming, building under a
claim, the completion marker, verification, ``tuner engine ls|gc``), searches it (``_search``: BM25, dense and hybrid
on tuner's [0, 1] scale, filter expressions) and gives its candidates to tuner's own ranking (``_pipeline``:
:class:`MilvusPipeline`); in attach mode (``_attach``) the collection is one the team already has: its schema checked
against the ``fields`` mapping, the rows a trial needs read back as the chunk table, never written; and ``external`` (``_external``),
a service speaking Dify's External Knowledge API. A new engine is a module with one :func:`register_engine` class,
imported here, that imports its search code inside the methods that need it (every command line imports the engines
to build its ``--engine`` flags). See docs/engine.md."""

from typing import TYPE_CHECKING

from tuner import lazy_exports
from tuner.engine._base import (
    ENGINES, Engine, EngineFlag, InertKnob, MemoryEngine, SpaceChoices, engine_config, parse_engine, register_engine,
)
from tuner.engine._config import BM25_RETRIEVERS, INDEX_KINDS, AttachedFields, MilvusConfig
from tuner.engine._milvus import MilvusEngine
from tuner.engine._external import ExternalEngine
from tuner.engine._literal import literal, string_literal

if TYPE_CHECKING:
    from tuner.engine._attach import AttachedSchema, attach, attached_content, key_scan
    from tuner.engine._collections import (
        BM25_B, BM25_K1, DENSE, SPARSE, TEXT, Collection, CollectionInfo, analyzer_params, collection_name, connect, ensure_collection,
        tuner_collections, verify,
    )
    from tuner.engine._pipeline import MilvusPipeline
    from tuner.engine._search import (
        BM25Ceiling, analyzer, MilvusFirstStage, dense_params, filter_expression, index_knobs, mask_expression,
    )

__getattr__ = lazy_exports(__name__, {
    "tuner.engine._collections": ("BM25_B", "BM25_K1", "DENSE", "SPARSE", "TEXT", "Collection", "CollectionInfo", "analyzer_params",
                                  "collection_name", "connect", "ensure_collection", "tuner_collections", "verify"),
    "tuner.engine._attach": ("AttachedSchema", "attach", "attached_content", "key_scan"),
    "tuner.engine._pipeline": ("MilvusPipeline",),
    "tuner.engine._search": ("BM25Ceiling", "analyzer", "MilvusFirstStage", "dense_params", "filter_expression", "index_knobs",
                             "mask_expression"),
})
"""The names whose modules load pymilvus and tuner's own indexes, imported when first used (PEP 562): every command
line builds the ``--engine`` flags from :data:`ENGINES`, and none of them needs a collection to do it."""

if TYPE_CHECKING:
    EngineConfig = Engine
else:
    EngineConfig = engine_config()
    """A study file's ``engine:`` block: the registered engines, told apart by ``backend``."""

__all__ = [
    "BM25_B",
    "BM25_K1",
    "BM25_RETRIEVERS",
    "DENSE",
    "ENGINES",
    "INDEX_KINDS",
    "SPARSE",
    "SpaceChoices",
    "TEXT",
    "AttachedFields",
    "AttachedSchema",
    "BM25Ceiling",
    "Collection",
    "CollectionInfo",
    "Engine",
    "EngineConfig",
    "EngineFlag",
    "ExternalEngine",
    "InertKnob",
    "MemoryEngine",
    "MilvusConfig",
    "MilvusEngine",
    "MilvusFirstStage",
    "MilvusPipeline",
    "analyzer_params",
    "attach",
    "analyzer",
    "attached_content",
    "collection_name",
    "connect",
    "dense_params",
    "engine_config",
    "ensure_collection",
    "filter_expression",
    "index_knobs",
    "key_scan",
    "literal",
    "mask_expression",
    "parse_engine",
    "register_engine",
    "string_literal",
    "tuner_collections",
    "verify",
]
