"""Parity of the first stage, memory against Milvus Lite (issue 45): recall@k of bm25, dense and hybrid (blend, rrf)
on each dataset, the share of questions whose top k chunks are the same, and the largest score difference there;
then, for BM25, where the difference comes from.

    python bench/milvus_parity.py demo demo-zh conflictnq cmrc --top-k 4 --json /tmp/parity.json

Datasets: ``demo`` and ``demo-zh`` (tuner's own), ``conflictnq`` (ConflictNQ val, 225 questions) and ``cmrc`` (CMRC
2018 trial, 1,000 questions over 256 paragraphs), the public sets imported from ``/work/shared/datasets`` into a
folder under ``--work`` (``/tmp``; skipped with a line when absent), or any dataset folder. Chinese sets are chunked
by 300 characters (the zh search space's), the rest with the defaults; both engines embed with the default model
(MiniLM, English-only: its dense recall on Chinese is low, but both engines use the same vectors, so parity still
means something there).

BM25 diagnosis (``bm25 diagnosis`` lines): since issue 52 both engines count the terms of one rule, the Milvus
analyzer's (:func:`tuner.text.analyzer_tokens`: Milvus Lite's ``standard`` rule or jieba over the whole text, tuner's
stop list, a question's repeated terms counted as often as it holds them) with the same formula (idf ``ln(1 + (N − df +
0.5) / (df + 0.5))``, k1 1.5, b 0.75, normalized by the question's ceiling ``Σ q_t · idf``, where Milvus's factor ``k1 +
1`` cancels). The bench computes that BM25 (bm25s' ``lucene`` variant) once over tuner's tokens (``reference_vs_memory``:
the memory engine exactly), once over Milvus Lite's own analyzer (``reference_vs_milvus``: Lite up to its segments'
statistics, float rounding and ties at the cut), and once by the rule of issue 45 (:func:`tuner.text.bm25_tokens`, each
question term once: ``before_vs_memory``, what the change moved). It counts the passages and questions both
analyzers cut into the same tokens (tuner's segmenter is jieba-rs, Lite's Python jieba) and prints the token differences
of a few questions whose top k differs.

Blend diagnosis (``blend diagnosis`` line): the share of questions whose memory top k holds a chunk one of Milvus's two
lists lacks (``memory_top_k_outside_a_list``): what Milvus's ``WeightedRanker`` would score 0 on one side, and what the
engine's blend now searches again within the primary keys of those chunks.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from tuner.dataset import Dataset, load_dataset, resolve_dataset, write_dataset
from tuner.dataset.importers import import_conflictnq, import_squad
from tuner.engine import BM25_B, BM25_K1, MilvusEngine, MilvusPipeline, analyzer
from tuner.evaluation import evaluate_retrieval
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.text import analyzer_tokens, bm25_tokens

SHARED = Path("/work/shared/datasets")
PUBLIC = {"conflictnq": ("ConflictNQ val", SHARED / "conflictnq" / "conflict_nq_val.jsonl", import_conflictnq),
          "cmrc": ("CMRC 2018 trial", SHARED / "cmrc2018" / "cmrc2018_trial.json", import_squad)}
ZH_CHUNKS = {"chunk_unit": "chars", "chunk_size": 300}
ARMS = (("dense", "blend"), ("bm25", "blend"), ("hybrid", "blend"), ("hybrid", "rrf"))
EMPTY = "\x00"
"""The one token of a passage without BM25 terms (bm25s cannot index an empty document), as the memory engine's."""


def dataset(name: str, work: Path) -> Dataset | None:
    """``name``'s dataset: tuner's own, a public set imported into ``work`` once, or a dataset folder (None: absent)."""
    if name not in PUBLIC:
        return load_dataset(resolve_dataset(name))
    label, source, importer = PUBLIC[name]
    if not source.is_file():
        print(f"{label}: {source} not found; skipped", file=sys.stderr)
        return None
    target = work / name
    if not (target / "golden.jsonl").is_file():
        imported = importer(source)
        write_dataset(target, imported.corpus, imported.golden, imported.conflicts, force=True)
    return load_dataset(target)


def same_top_k(ours: np.ndarray, theirs: np.ndarray, k: int) -> np.ndarray:
    """Per question, whether the two rankings hold the same set of chunks in their first ``k``."""
    return np.asarray((np.sort(ours[:, :k], axis=1) == np.sort(theirs[:, :k], axis=1)).all(axis=1))


def scored(hits: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The chunk indices of ``hits`` with their zero-score slots emptied (−1): the memory engine fills a BM25 list
    that fewer chunks match with zero-score chunks in corpus order, Milvus returns none."""
    return np.where(hits[1] > 0, hits[0], -1)


class Reference:
    """tuner's BM25 formula over the tokens of ``tokenize``: bm25s ``lucene`` (k1, b as both engines use), each query's
    scores divided by Σ q_t · idf of its distinct terms that some passage holds (q_t: 1, or the times the query holds
    the term), clipped to [0, 1] as both engines clip."""

    def __init__(self, passages: Sequence[str], tokenize: Callable[[str], list[str]]) -> None:
        self.tokenize = tokenize
        self.tokens = [tokenize(p) for p in passages]
        self.index = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")  # the collections tuner builds
        self.index.index([t or [EMPTY] for t in self.tokens], show_progress=False)
        self.df = Counter(term for tokens in self.tokens for term in set(tokens))

    def ranking(self, queries: Sequence[str], depth: int, allowed: np.ndarray,
                repeats: bool) -> tuple[np.ndarray, np.ndarray]:
        """The ``depth`` best passages of ``allowed`` per query (score descending, then passage order) and their
        normalized scores, the statistics (N, df, avgdl) over every passage as both engines keep them. ``repeats``:
        a query term counts as often as the query holds it (Milvus's query vector is the query's term frequencies),
        else once (tuner)."""
        n = len(self.tokens)
        indices, scores = np.zeros((len(queries), depth), dtype=np.int64), np.zeros((len(queries), depth))
        for row, query in enumerate(queries):
            weights = Counter(self.tokenize(query)) if repeats else Counter(set(self.tokenize(query)))
            present = [term for term in weights if self.df[term]]
            ceiling = sum(weights[t] * math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5)) for t in present)
            raw = sum((weights[t] * self.index.get_scores([t]) for t in present), np.zeros(n))
            order = np.lexsort((np.arange(n), -np.where(allowed, raw, -np.inf)))[:depth]
            indices[row], scores[row] = order, np.minimum(raw[order] / ceiling, 1.0) if ceiling else 0.0
        return indices, scores


def segments(uri: str, collection: str) -> int:
    """The sealed segments of ``collection`` in a Milvus Lite folder (each keeps its own BM25 statistics)."""
    return len(list((Path(uri) / "collections" / collection).glob("partitions/*/data/*.parquet")))


def compare(ours: tuple[np.ndarray, np.ndarray], theirs: tuple[np.ndarray, np.ndarray], k: int) -> dict[str, float]:
    """Share of the same top ``k`` and the largest score difference at equal rank, of two (indices, scores)."""
    return {"same_top_k": round(float(same_top_k(ours[0], theirs[0], k).mean()), 4),
            "same_scored_top_k": round(float(same_top_k(scored(ours), scored(theirs), k).mean()), 4),
            "max_score_diff_top_k": float(np.abs(ours[1][:, :k] - theirs[1][:, :k]).max())}


def tied_at_the_cut(scores: np.ndarray, rows: np.ndarray, k: int) -> int:
    """How many of ``rows`` have the same score at ranks k and k + 1 (either set of k chunks is a right answer)."""
    return int(sum(abs(float(scores[row, k - 1]) - float(scores[row, k])) < 1e-6 for row in rows if scores.shape[1] > k))


def diagnose_blend(memory: RetrievalPipeline, engine: MilvusPipeline, chunks: dict[str, Any], k: int) -> dict[str, Any]:
    """The share of questions whose memory top ``k`` under hybrid blend holds a chunk one of Milvus's dense and BM25
    lists lacks: the chunks whose second score the engine's blend searches again (Milvus's WeightedRanker would count
    0 for it)."""
    def settings(retriever: str) -> RetrievalSettings:
        return RetrievalSettings.model_validate({**chunks, "retriever": retriever, "fusion": "blend", "top_k": k,
                                                 "candidate_depth": max(30, k)})

    dense, bm25 = (engine.candidates(settings(r)) for r in ("dense", "bm25"))
    ours = memory.candidates(settings("hybrid"))
    outside = [any(i not in set(hits.indices[row].tolist()) for i in ours.indices[row, :k].tolist() for hits in (dense, bm25))
               for row in range(len(ours.indices))]
    return {"hybrid_weight": settings("hybrid").hybrid_weight, "memory_top_k_outside_a_list": round(float(np.mean(outside)), 4)}


def diagnose(name: str, data: Dataset, memory: RetrievalPipeline, engine: MilvusPipeline, settings: RetrievalSettings,
             k: int, examples: int) -> dict[str, Any]:
    """Why the two BM25 rankings differ on ``data`` (module docstring), with ``examples`` differing questions."""
    collection = engine.collection(settings)
    passages = list(collection.table.passages)
    queries = list(memory.queries)
    milvus_tokens = analyzer(json.dumps(collection.analyzer_params, sort_keys=True, ensure_ascii=False)).tokenize

    def tuner_tokens(text: str) -> list[str]:
        return analyzer_tokens(text, collection.language)

    ours, theirs = memory.candidates(settings), engine.candidates(settings)
    on_ours, on_milvus = Reference(passages, tuner_tokens), Reference(passages, milvus_tokens)
    depth, clean = settings.candidate_depth, collection.table.mask("clean")  # the view both engines searched
    tuner_like = on_ours.ranking(queries, depth, clean, repeats=True)
    milvus_like = on_milvus.ranking(queries, depth, clean, repeats=True)
    before = Reference(passages, bm25_tokens).ranking(queries, depth, clean, repeats=False)
    report: dict[str, Any] = {
        "dataset": name, "language": collection.language, "passages": len(passages), "questions": len(queries),
        "segments": segments(engine.engine.uri, collection.name),
        "passages_same_tokens": round(float(np.mean([Counter(a) == Counter(b) for a, b in zip(on_ours.tokens, on_milvus.tokens)])), 4),
        "questions_same_tokens": round(float(np.mean([tuner_tokens(q) == milvus_tokens(q) for q in queries])), 4),
        "questions_repeating_a_term": round(float(np.mean([len(set(t)) < len(t) for t in map(milvus_tokens, queries)])), 4),
        "mean_length_tuner": round(float(np.mean([len(t) for t in on_ours.tokens])), 2),
        "mean_length_milvus": round(float(np.mean([len(t) for t in on_milvus.tokens])), 2),
        # the reference reproduces each engine: the memory engine exactly, Milvus Lite up to its segments
        "reference_vs_memory": compare(tuner_like, (ours.indices, ours.scores), k),
        "reference_vs_milvus": compare(milvus_like, (theirs.indices, theirs.scores), k),
        # what the one rule moved in memory: issue 45's rule (tuner's own tokens, each question term once) against it
        "before_vs_memory": compare(before, (ours.indices, ours.scores), k),
        "examples": [],
    }
    differing = np.flatnonzero(~same_top_k(ours.indices, theirs.indices, k))
    unreproduced = np.flatnonzero(~same_top_k(milvus_like[0], theirs.indices, k))
    # no chunk shares a term with the question: tuner fills its list with zero-score chunks, Milvus returns none
    report.update(differing=len(differing), differing_without_a_match=int((ours.scores[differing, 0] == 0).sum()),
                  differing_tied_at_the_cut=tied_at_the_cut(ours.scores, differing, k),
                  unreproduced=len(unreproduced), unreproduced_tied_at_the_cut=tied_at_the_cut(milvus_like[1], unreproduced, k))
    for row in differing[:examples]:
        query = queries[row]
        mine, engines = tuner_tokens(query), milvus_tokens(query)
        only = sorted(set(ours.indices[row, :k]) ^ set(theirs.indices[row, :k]))
        report["examples"].append({
            "question": query, "tuner_tokens": mine, "milvus_tokens": engines,
            "repeated_terms": sorted(term for term, count in Counter(engines).items() if count > 1),
            "query_only_tuner": sorted(set(mine) - set(engines)), "query_only_milvus": sorted(set(engines) - set(mine)),
            "top_k_tuner": ours.indices[row, :k].tolist(), "top_k_milvus": theirs.indices[row, :k].tolist(),
            "score_at_k_tuner": round(float(ours.scores[row, k - 1]), 4),
            "score_at_k_plus_1_tuner": round(float(ours.scores[row, k]), 4) if depth > k else None,
            "chunks_in_one_top_k": [{
                "chunk": int(i), "query_terms_tuner": sorted(set(mine) & set(on_ours.tokens[i])),
                "query_terms_milvus": sorted(set(engines) & set(on_milvus.tokens[i])),
                "length_tuner": len(on_ours.tokens[i]), "length_milvus": len(on_milvus.tokens[i]),
                "passage_only_tuner": sorted(set(on_ours.tokens[i]) - set(on_milvus.tokens[i]))[:12],
                "passage_only_milvus": sorted(set(on_milvus.tokens[i]) - set(on_ours.tokens[i]))[:12],
            } for i in only],
        })
    return report


def run(name: str, data: Dataset, uri: str, k: int, examples: int, arms: Sequence[tuple[str, str]] = ARMS) -> dict[str, Any]:
    """Every arm of ``arms`` on both engines, then the BM25 diagnosis."""
    engine, memory = MilvusPipeline(data, MilvusEngine(backend="milvus", uri=uri)), RetrievalPipeline(data)
    chunks = ZH_CHUNKS if data.language == "zh" else {}
    rows = []
    for retriever, fusion in arms:
        settings = RetrievalSettings.model_validate({**chunks, "retriever": retriever, "fusion": fusion, "top_k": k,
                                                     "candidate_depth": max(30, k)})
        start = time.perf_counter()
        milvus_recall = evaluate_retrieval(engine, settings).overall["recall_at_k"].value
        seconds = time.perf_counter() - start
        memory_recall = evaluate_retrieval(memory, settings).overall["recall_at_k"].value
        ours, theirs = memory.candidates(settings), engine.candidates(settings)
        rows.append({"dataset": name, "retriever": retriever, "fusion": fusion, "memory_recall": memory_recall,
                     "milvus_recall": milvus_recall, **compare((ours.indices, ours.scores), (theirs.indices, theirs.scores), k),
                     "milvus_seconds": round(seconds, 1)})
        print(json.dumps(rows[-1]), flush=True)
    settings = RetrievalSettings.model_validate({**chunks, "retriever": "bm25", "top_k": k, "candidate_depth": max(30, k)})
    report = diagnose(name, data, memory, engine, settings, k, examples)
    print("bm25 diagnosis", json.dumps(report, ensure_ascii=False), flush=True)
    blend = diagnose_blend(memory, engine, chunks, k)
    print("blend diagnosis", json.dumps(blend), flush=True)
    return {"dataset": name, "summary": data.summary(), "arms": rows, "bm25": report, "blend": blend}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", help="demo, demo-zh, conflictnq, cmrc or a dataset folder")
    parser.add_argument("--top-k", type=int, default=4)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "milvus-parity",
                        help="folder of the imported public sets and the Milvus Lite files")
    parser.add_argument("--examples", type=int, default=5, help="differing BM25 questions to explain per dataset")
    parser.add_argument("--json", type=Path, help="write every dataset's rows and diagnosis here")
    parser.add_argument("--arms", nargs="+", choices=[f"{r}-{f}" for r, f in ARMS], help="only these (retriever-fusion)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results = []
    for name in args.datasets:
        data = dataset(name, args.work)
        if data is not None:
            arms = [arm for arm in ARMS if args.arms is None or f"{arm[0]}-{arm[1]}" in args.arms]
            results.append(run(name, data, str(args.work / f"{Path(name).name}.db"), args.top_k, args.examples, arms))
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), "utf-8")


if __name__ == "__main__":
    main()
