"""Deploy (export → **serve on an engine**): the engine a deployed retriever's first stage runs on.

Which engine serves is the deployment's choice (``tuner serve --engine``, ``Retriever(engine=...)``), never read from
the export: the engine a study was tuned on is often not the one production reads (a staging cluster, a Lite file on
the tuning machine), and its token is never in an export. What the export does fix is the dense index the trial was
measured with: an engine serves with the export's ``engine.index`` and ``index_params`` (:func:`serving_engine`), and a
configuration served on another backend than the one it was measured on says so (:func:`engine_note`). A trial
measured on an attached collection (attach mode) is served from that collection, read-only, through the field mapping
its export records, never from a collection tuner builds in its place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tuner.engine import Engine


def measured_backend(provenance: Mapping[str, Any]) -> str | None:
    """The engine backend an export was measured on (``provenance.engine.backend``); None when it does not say (a
    hand-written configuration, an export written before tuner recorded engines)."""
    engine = provenance.get("engine")
    return str(engine["backend"]) if isinstance(engine, Mapping) and "backend" in engine else None


def serving_engine(engine: Engine, provenance: Mapping[str, Any]) -> Engine:
    """``engine`` as it serves an export of ``provenance`` (:meth:`tuner.engine.Engine.serving`): on Milvus, with the
    dense index of the Milvus engine the export was measured on (the index and its parameters are part of what was
    measured), or the attached collection it was measured on (read-only, through the recorded field mapping) at
    ``engine``'s address, never a collection tuner builds in its place.

    >>> from tuner.engine import MilvusEngine
    >>> recorded = {"engine": {"backend": "milvus", "uri": "kb.db", "index": "HNSW", "index_params": {"M": 16}}}
    >>> serving_engine(MilvusEngine(backend="milvus", uri="http://milvus:19530"), recorded).index
    'HNSW'
    """
    return engine.serving(provenance)


def engine_note(source: str, provenance: Mapping[str, Any], engine: Engine) -> str | None:
    """One line when ``source`` (an export) was measured on another engine backend than ``engine`` serves it on: the
    first-stage scores of BM25 and hybrid differ between engines (docs/engine.md), so the served configuration is not
    exactly the measured one. None when they agree or the export does not say.

    >>> from tuner.engine import MemoryEngine
    >>> engine_note("deploy.yaml", {"engine": {"backend": "milvus", "uri": "kb.db"}}, MemoryEngine()).split(":")[0]
    'deploy.yaml was measured on milvus (kb.db) and is served in memory'
    """
    measured = measured_backend(provenance)
    if measured is None or measured == engine.backend:
        return None
    recorded = provenance["engine"]
    attached = recorded.get("collection")
    if attached:
        why = f"its chunks and vectors were those of the attached collection {attached}, the served ones the dataset's"
    else:
        why = "BM25 and hybrid first-stage scores differ slightly between engines (docs/engine.md)"
    hint = (f"; --engine {measured} --engine-uri URI serves it where it was measured"
            if engine.backend == "memory" and not attached else "")
    return f"{source} was measured {_on(measured, recorded.get('uri'))} and is served {_on(engine.backend, None)}: {why}{hint}"


def _on(backend: str, uri: str | None) -> str:
    return "in memory" if backend == "memory" else f"on {backend}" + (f" ({uri})" if uri else "")
