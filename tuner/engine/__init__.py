"""Engine (indexes → **candidates in an engine**): where a study's first stage runs, chosen once per study or command
(``engine:`` in a study file, ``--engine`` on the command line): ``memory``, tuner's own indexes in the process (the
default), or ``milvus``, a Milvus Lite ``.db`` or a Milvus cluster, where tuner builds one collection per corpus,
chunking and embedding model (``_collections``: naming, building under a claim, the completion marker, verification,
``tuner engine ls|gc``), searches it (``_search``: BM25, dense and hybrid on tuner's [0, 1] scale, filter expressions)
and gives its candidates to tuner's own ranking (``_pipeline``: :class:`MilvusPipeline`, the :data:`ENGINES`
registry). In attach mode (``_attach``) the collection is one the team already has: its schema checked against the
``fields`` mapping, the rows a trial needs read back as the chunk table, never written. ``_config`` holds the ``engine:`` block's
models. See docs/engine.md."""

from tuner.engine._collections import (
    DENSE, SPARSE, TEXT, Collection, CollectionInfo, analyzer_params, collection_name, connect, ensure_collection,
    tuner_collections, verify,
)
from tuner.engine._attach import AttachedSchema, attach, attached_content
from tuner.engine._config import INDEX_KINDS, AttachedFields, EngineConfig, MemoryEngine, MilvusEngine, parse_engine
from tuner.engine._pipeline import ENGINES, MilvusPipeline, engine_pipeline, recorded_engine
from tuner.engine._literal import literal, string_literal
from tuner.engine._search import (
    BM25Ceiling, MilvusFirstStage, dense_params, filter_expression, index_knobs, mask_expression,
)

__all__ = [
    "DENSE",
    "ENGINES",
    "INDEX_KINDS",
    "SPARSE",
    "TEXT",
    "AttachedFields",
    "AttachedSchema",
    "BM25Ceiling",
    "Collection",
    "CollectionInfo",
    "EngineConfig",
    "MemoryEngine",
    "MilvusEngine",
    "MilvusFirstStage",
    "MilvusPipeline",
    "analyzer_params",
    "attach",
    "attached_content",
    "collection_name",
    "connect",
    "dense_params",
    "engine_pipeline",
    "ensure_collection",
    "filter_expression",
    "index_knobs",
    "literal",
    "mask_expression",
    "parse_engine",
    "recorded_engine",
    "string_literal",
    "tuner_collections",
    "verify",
]
