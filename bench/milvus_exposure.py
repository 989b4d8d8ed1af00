"""Conflict exposure on an attached collection that holds its own stale versions (issue 52 §3), against the same
data in memory.

    python bench/milvus_exposure.py demo conflictnq --json /tmp/exposure.json

For each dataset the team's collection is made with pymilvus directly (its own field names, VARCHAR keys, a BM25
function): one row per chunk of tuner's chunk table of the dataset *with* its conflicting documents, under their doc
ids, so the stale versions are in the collection as they are in a real knowledge base and ``conflicts.jsonl`` names
them. The same configurations ("trials": retriever × top_k × relevance_threshold × version handling) are evaluated on
the attached collection and in memory; each line gives the cases exposed on both sides and recall@k on both.
Datasets as in bench/milvus_parity.py (``demo``, ``conflictnq`` imported from /work/shared/datasets).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from milvus_parity import dataset  # noqa: E402

from tuner.engine import MilvusEngine, MilvusPipeline, analyzer_params, connect  # noqa: E402
from tuner.evaluation import evaluate_retrieval  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402

FIELDS = {"text": "content", "vector": "embedding", "doc_id": "source_doc", "metadata": "meta", "sparse": "content_sparse"}
TRIALS = [dict(zip(("retriever", "top_k", "relevance_threshold", "version_policy"), values)) for values in itertools.product(
    ("dense", "bm25"), (2, 5, 8), (0.0, 0.4), ("all", "latest"))]


def team_collection(uri: str, name: str, memory: RetrievalPipeline, language: str) -> int:
    """The team's collection of every chunk of ``memory``'s default table, its stale versions included."""
    from pymilvus import DataType, Function, FunctionType

    table = memory.table(RetrievalSettings())
    client = connect(MilvusEngine(backend="milvus", uri=uri))
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("content", DataType.VARCHAR, max_length=65535, enable_analyzer=True,
                     analyzer_params=analyzer_params(language))  # type: ignore[arg-type]
    schema.add_field("source_doc", DataType.VARCHAR, max_length=512)
    schema.add_field("meta", DataType.JSON)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=table.encoder.inner.dim)
    schema.add_field("content_sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["content"],
                                 output_field_names=["content_sparse"]))
    indexes = client.prepare_index_params()
    indexes.add_index("embedding", index_type="FLAT", metric_type="COSINE")
    indexes.add_index("content_sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection(name, schema=schema, index_params=indexes)
    vectors = table.embeddings()
    rows = [{"pk": f"chunk-{i}", "content": table.passages[i], "source_doc": chunk.doc_id,
             "meta": dict(memory.metadata_of(chunk.doc_id)), "embedding": vectors[i].tolist()}
            for i, chunk in enumerate(table.chunks)]
    for first in range(0, len(rows), 256):
        client.insert(name, rows[first:first + 256])
    client.flush(name)
    return sum(chunk.conflicting for chunk in table.chunks)


def run(name: str, work: Path) -> dict[str, Any] | None:
    data = dataset(name, work)
    if data is None:
        return None
    uri = str(work / f"exposure-{name}.db")
    memory = RetrievalPipeline(data)
    stale = team_collection(uri, "team_kb", memory, data.language)
    engine = MilvusEngine(backend="milvus", uri=uri, collection="team_kb", fields=FIELDS)  # type: ignore[arg-type]
    attached = MilvusPipeline(data, engine)
    rows = []
    for trial in TRIALS:
        settings = RetrievalSettings(candidate_depth=30, **trial)  # type: ignore[arg-type]
        started = time.perf_counter()
        on_engine = evaluate_retrieval(attached, settings)
        seconds = time.perf_counter() - started
        in_memory = evaluate_retrieval(memory, settings)
        assert on_engine.exposed is not None and in_memory.exposed is not None
        rows.append({**trial, "exposed_engine": sum(on_engine.exposed), "exposed_memory": sum(in_memory.exposed),
                     "same_cases": on_engine.exposed == in_memory.exposed,
                     "recall_engine": on_engine.overall["recall_at_k"].value,
                     "recall_memory": in_memory.overall["recall_at_k"].value, "engine_s": round(seconds, 2)})
        row = rows[-1]
        print(f"{name} {trial['retriever']} top_k {trial['top_k']} threshold {trial['relevance_threshold']} "
              f"{trial['version_policy']}: exposed {row['exposed_engine']} / {row['exposed_memory']} of "
              f"{len(data.golden)} (same cases: {row['same_cases']}), recall@k {row['recall_engine']:.3f} / "
              f"{row['recall_memory']:.3f}, {seconds:.1f} s", flush=True)
    return {"set": name, "cases": len(data.golden), "stale_rows": stale, "trials": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = args.work or Path(folder)
        results = [r for r in (run(name, work) for name in args.sets) if r is not None]
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
