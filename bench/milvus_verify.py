"""What verifying a built collection costs (issue 54 §2.4): the content digest of every row (``tuner.engine``'s
``content_digest``, read back page by page) against the 8-row spot check it replaced, on Milvus Lite; and what a
study on an attached collection reads to record its content (issue 54 §2.3: ``attached_content``, every primary key
and 64 whole rows).

    python bench/milvus_verify.py --sets demo 10000 50000

``demo``: tuner's own collection of the demo dataset (built once by a :class:`tuner.engine.MilvusPipeline`, default
settings); a number: a collection of that many synthetic rows in tuner's schema (random unit 384-dimensional vectors,
passages of ~600 characters), upserted directly. Each line: rows, seconds of the digest (median of ``--repeat``),
seconds of the spot check, seconds of the attached-content record over the same collection, and the peak RSS
growth.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from tuner.dataset import load_dataset, resolve_dataset
from tuner.engine import MilvusEngine, MilvusPipeline, attached_content, connect
from tuner.engine._collections import BATCH, SCALARS, _indexes, _schema, content_digest
from tuner.progress import SilentReporter
from tuner.settings import RetrievalSettings

DIM = 384


def _synthetic(client: Any, engine: MilvusEngine, rows: int) -> str:
    name = f"bench_{rows}"
    client.create_collection(name, schema=_schema(client, "en", DIM), index_params=_indexes(client, engine))
    rng = np.random.default_rng(0)
    words = "price warranty delivery battery screen memory storage returns shipping policy".split()
    for first in range(0, rows, BATCH):
        vectors = rng.standard_normal((min(BATCH, rows - first), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        client.upsert(name, [{"id": first + i, "text": " ".join(rng.choice(words, 90)),
                              **{field: f"{field}-{(first + i) % 97}" for field in SCALARS}, "conflict": False,
                              "metadata": {"family": f"f{(first + i) % 31}"}, "dense": vector.tolist()}
                             for i, vector in enumerate(vectors)])
    client.flush(name)
    return name


def _spot_check(client: Any, name: str, rows: int) -> None:
    ids = sorted({int(i) for i in np.linspace(0, rows - 1, 8)})
    client.query(name, ids=ids, output_fields=["text", "doc_id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", nargs="+", default=["demo", "10000"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        engine = MilvusEngine(backend="milvus", uri=str(Path(folder) / "verify.db"))
        client = connect(engine)
        for which in args.sets:
            if which == "demo":
                pipeline = MilvusPipeline(load_dataset(resolve_dataset("demo")), engine)
                name = pipeline.collection(RetrievalSettings()).name
            else:
                name = _synthetic(client, engine, int(which))
            rows = int(client.query(name, filter="", output_fields=["count(*)"])[0]["count(*)"])
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            digests, spots, contents = [], [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                content_digest(client, name, SilentReporter())
                digests.append(time.perf_counter() - started)
                started = time.perf_counter()
                _spot_check(client, name, rows)
                spots.append(time.perf_counter() - started)
                started = time.perf_counter()
                attached_content(client, name, "id", ["text", "doc_id", "metadata"], "dense", SilentReporter())
                contents.append(time.perf_counter() - started)
            grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
            digest, content = statistics.median(digests), statistics.median(contents)
            print(f"{which}: {rows} rows, digest {digest:.2f} s ({rows / digest:,.0f} rows/s), spot check "
                  f"{statistics.median(spots) * 1000:.1f} ms, attached content {content:.2f} s "
                  f"({rows / content:,.0f} rows/s), peak RSS +{grown:.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
