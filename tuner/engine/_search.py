"""Engine (indexes → **candidates in an engine**): the first stage searched in a Milvus collection (:class:`MilvusFirstStage`,
a :class:`tuner.retrieval.FirstStage`), with scores on tuner's [0, 1] scale, and the filter expressions it searches
within.

Scores (``docs/engine.md`` says what maps exactly and what does not):

- dense: the collection's COSINE similarity clipped to [0, 1], as tuner's (exact under the ``FLAT`` index);
- bm25: Milvus's BM25 score ``Σ idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))`` divided by its ceiling
  ``(k1 + 1) · Σ idf`` over the query's distinct terms, the normalization of :mod:`tuner.retrieval._bm25` (whose
  lucene score lacks the factor ``k1 + 1``): the fraction of the query's attainable score. Milvus does not give a
  term's document frequency (Milvus Lite has no ``run_analyzer``, and counting ``TEXT_MATCH`` takes seconds a term),
  so :class:`BM25Ceiling` counts it over the collection's own texts with the collection's analyzer;
- hybrid ``fusion: blend``: tuner's blend ``w · cosine + (1 − w) · bm25`` over the union of the dense and the BM25
  list, as :class:`tuner.retrieval.HybridRetriever` scores it: the two lists searched, then per query the chunks one
  list lacks searched again in the other field within their primary keys (a chunk sharing no term with the query is
  not returned by BM25: it scores 0 there, as in memory), both scores clipped to [0, 1] before the blend. Milvus's
  ``WeightedRanker`` counts 0 for a list that does not hold a chunk (CMRC 2018: recall@4 0.58 against 0.96 in
  memory, bench/milvus_parity.py), so it is not used;
- hybrid ``fusion: rrf``: :func:`tuner.retrieval.reciprocal_rank_fusion` of the two lists, each ranked as in memory
  (ties by table row), so the ranks are memory's (Milvus's ``RRFRanker`` ranks ties in its own order).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from tuner.cache import DiskCache, content_key
from tuner.embedding import CachedEncoder
from tuner.engine._collections import BM25_K1, Collection
from tuner.chunking import Chunk
from tuner.engine._config import INDEX_KINDS, AttachedFields
from tuner.engine._literal import literal, string_literal
from tuner.errors import UserError
from tuner.retrieval import FILTER_FIELDS, Hits, reciprocal_rank_fusion
from tuner.settings import RetrievalSettings

if TYPE_CHECKING:
    from milvus_lite.analyzer.protocol import Analyzer

BM25_PARAMS: Final = {"metric_type": "BM25"}


def index_knobs(index: str, settings: RetrievalSettings) -> dict[str, int]:
    """The search-time knobs of a dense ``index`` (a Milvus index type, :data:`tuner.engine.INDEX_KINDS`) under
    ``settings``: ``{"ef": hnsw_ef}`` for the HNSW family, ``{"nprobe": ivf_nprobe}`` for the IVF family, none for
    ``FLAT`` and ``AUTOINDEX`` nor for ``retriever: bm25`` (no dense search). The collection's index decides, not
    ``dense_index`` (a study fixes that at the index).

    >>> index_knobs("HNSW", RetrievalSettings(hnsw_ef=64)), index_knobs("FLAT", RetrievalSettings(hnsw_ef=64))
    ({'ef': 64}, {})
    """
    kind = INDEX_KINDS.get(index, "flat")
    if settings.retriever == "bm25":
        return {}
    if kind == "hnsw":
        return {"ef": settings.hnsw_ef}
    if kind == "ivf":
        return {"nprobe": settings.ivf_nprobe}
    return {}


def dense_params(knobs: Mapping[str, int], depth: int, metric: str = "COSINE") -> dict[str, Any]:
    """The ``search_params`` of a dense search ``depth`` deep with ``knobs`` (:func:`index_knobs`) under the index's
    ``metric``: ``ef`` raised to ``depth``, as Milvus refuses an HNSW search keeping fewer candidates than it returns
    (tuner's in-process HNSW raises its ``efSearch`` the same way).

    >>> dense_params({"ef": 16}, 50), dense_params({"nprobe": 4}, 50), dense_params({}, 5)
    ({'metric_type': 'COSINE', 'params': {'ef': 50}}, {'metric_type': 'COSINE', 'params': {'nprobe': 4}}, {'metric_type': 'COSINE'})
    """
    if not knobs:
        return {"metric_type": metric}
    return {"metric_type": metric, "params": {name: max(value, depth) if name == "ef" else value
                                               for name, value in knobs.items()}}


@lru_cache(maxsize=4)
def analyzer(params: str) -> Analyzer:
    """The rules of a collection's analyzer (``params``: its analyzer parameters as JSON) in this process: Milvus
    Lite's own implementation, which is the engine's for a ``.db`` (a cluster's tokenizers are Rust ports of the same
    rules)."""
    from milvus_lite.analyzer.factory import create_analyzer

    return create_analyzer(json.loads(params))


class BM25Ceiling:
    """A query's attainable Milvus BM25 score, ``(k1 + 1) · Σ q_t · idf(t)`` over its distinct terms ``t``, each held
    ``q_t`` times (Milvus's query vector is the query's term frequencies), with
    ``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``: N and the document frequencies counted over the collection's
    passages by its analyzer (``analyzer_json``; terms no passage holds add nothing: Milvus scores them 0). The counts
    (``document_frequency``) are asked for on the first query only: a dense trial reads no text."""

    def __init__(self, document_frequency: Callable[[], Mapping[str, int]], n_passages: int, analyzer_json: str,
                 k1: float = BM25_K1) -> None:
        self._counts = document_frequency
        self._df: Mapping[str, int] | None = None
        self._n = n_passages
        self._analyzer = analyzer_json
        self._k1 = k1

    @classmethod
    def of(cls, collection: Collection, cache: DiskCache) -> BM25Ceiling:
        """The ceiling of ``collection``'s texts (:meth:`Collection.texts`: an attached collection's read page by
        page, memory its vocabulary), their counts cached on disk under the collection's name, content and
        analyzer."""
        rules = json.dumps(collection.analyzer_params, sort_keys=True, ensure_ascii=False)

        def build(folder: Path) -> None:
            tokenize = analyzer(rules).tokenize
            counts = Counter(term for passage in collection.texts() for term in set(tokenize(passage)))
            (folder / "df.json").write_text(json.dumps(counts, ensure_ascii=False), "utf-8")

        def read(folder: Path) -> dict[str, int]:
            counts: dict[str, int] = json.loads((folder / "df.json").read_text("utf-8"))
            return counts

        key = content_key(collection.name, collection.table.key, rules)
        return cls(lambda: cache.get_or_build("milvus-df", key, build, read), collection.rows, rules, collection.bm25_k1)

    def __call__(self, query: str) -> float:
        if self._df is None:
            self._df = self._counts()
        df_of = self._df
        terms = Counter(analyzer(self._analyzer).tokenize(query))
        return (self._k1 + 1.0) * sum(repeats * math.log(1.0 + (self._n - df + 0.5) / (df + 0.5))
                                      for df, repeats in ((df_of.get(t, 0), r) for t, r in terms.items()) if df > 0)


def _field_test(key: str, wanted: Any) -> str:
    """One key of a metadata filter (:func:`tuner.retrieval.filter_mask`): a chunk field of ``FILTER_FIELDS`` or a key of
    the document's metadata (the ``metadata`` JSON field) equal to the value or one of a list's."""
    values = wanted if isinstance(wanted, list) else [wanted]
    if key in FILTER_FIELDS:
        if not all(isinstance(v, str) for v in values):
            return "false"  # a chunk field is a string: no other value equals it
        return f"{key} in [{', '.join(literal(v) for v in values)}]"
    # Milvus Lite refuses a JSON path on the left of `in`: one equality per value
    field = f"metadata[{string_literal(key)}]"
    return "(" + " or ".join(f"{field} == {literal(v)}" for v in values) + ")" if values else "false"


def _view_test(view: str) -> str:
    """The chunks of index view ``view`` (:meth:`tuner.retrieval.ChunkTable.mask`) as an expression ('' = every chunk)."""
    if view == "all":
        return ""
    if view == "clean":
        return "conflict == false"
    only = view.startswith("only:")
    wanted = dict(part.split("=", 1) for part in view.removeprefix("only:").split(","))
    unknown = set(wanted) - {"kind", "severity"}
    if unknown:
        raise ValueError(f"unknown index view filter {sorted(unknown)} in '{view}'")
    matching = " and ".join(["conflict == true", *(f"{name} == {literal(value)}" for name, value in wanted.items())])
    return matching if only else f"(conflict == false or ({matching}))"


def filter_expression(settings: RetrievalSettings, view: str = "clean") -> str:
    """The chunks a study's first stage searches in index ``view`` under ``settings``' ``metadata_filter``, as a Milvus
    boolean expression: the same chunks as :func:`tuner.retrieval.first_stage_mask` ('' = every chunk).

    >>> filter_expression(RetrievalSettings(metadata_filters={"cur": {"status": "current"}}, metadata_filter="cur"))
    '(conflict == false) and ((metadata["status"] == "current"))'
    """
    tests = [test for test in (_view_test(view), *(_field_test(k, v) for k, v in settings.active_filter.items())) if test]
    return " and ".join(f"({test})" for test in tests) if len(tests) > 1 else (tests[0] if tests else "")


def unread_expression(settings: RetrievalSettings, view: str, fields: AttachedFields) -> str:
    """The rows of an attached collection not read yet that the first stage searches in index ``view`` under
    ``settings``' metadata filter, as an expression over the team's ``fields`` ('' = every one, ``false`` = none): a
    row not read is, as far as tuner knows, a corpus chunk (views ``clean``, ``all`` and ``kind=…`` search it,
    ``only:…`` does not) whose chunk fields are a chunk's defaults (title '', source corpus, kind and severity ''),
    filtered on its doc id field and its metadata (a key of the JSON field, or the scalar field of that name; a key
    the mapping has no field for is absent, which passes only a filter listing None).

    >>> from tuner.engine import AttachedFields
    >>> fields = AttachedFields(text="t", vector="v", doc_id="doc", metadata="meta")
    >>> unread_expression(RetrievalSettings(metadata_filters={"f": {"team": "kb", "doc_id": ["a"]}}, metadata_filter="f"), "clean", fields)
    '(meta["team"] == "kb") and (doc in ["a"])'
    """
    if view.startswith("only:"):
        return "false"
    tests = []
    for key, wanted in settings.active_filter.items():
        values = wanted if isinstance(wanted, list) else [wanted]
        named = [value for value in values if value is not None]
        if key == "doc_id":
            tests.append(f"{fields.doc_id} in [{', '.join(literal(v) for v in named)}]" if named else "false")
        elif key in FILTER_FIELDS:
            if getattr(UNREAD, key) not in values:
                return "false"
        elif isinstance(fields.metadata, str):
            path = f"{fields.metadata}[{string_literal(key)}]"
            tests.append(" or ".join(f"{path} == {literal(v)}" for v in named) or "false")
        elif key in fields.metadata:
            tests.append(f"{key} in [{', '.join(literal(v) for v in named)}]" if named else "false")
        elif None not in values:
            return "false"
    if "false" in tests:
        return "false"
    return " and ".join(f"({test})" for test in tests) if len(tests) > 1 else (tests[0] if tests else "")


UNREAD: Final = Chunk(chunk_id="", doc_id="", start=0, end=0, text="")
"""The chunk fields of a row of an attached collection (its own are its key, doc id and text)."""


def mask_expression(allowed: np.ndarray | None, collection: Collection | None = None, unread: str = "") -> str | None:
    """Any mask of chunks as an expression over the primary keys of ``collection`` (default: a collection tuner built,
    whose key ``id`` is the chunk's row), the shorter of ``in`` and ``not in``; '' for every chunk, None for none.
    Of an attached collection not read whole (:attr:`Collection.known` < :attr:`Collection.rows`) the rows read pass
    by the mask and the others by ``unread``, an expression over its own fields ('' = every one, ``false`` = none):
    ``(key not in [dropped]) and (key in [kept] or (unread))``.

    >>> mask_expression(np.array([True, False, True])), mask_expression(np.array([False, False]))
    ('id not in [1]', None)
    """
    if collection is not None:
        allowed = None if allowed is None else allowed[:collection.known]  # rows past its own are never in it
    if collection is None or collection.known == collection.rows:
        if allowed is None or allowed.all():
            return ""
        if not allowed.any():
            return None
        kept, dropped = np.flatnonzero(allowed).tolist(), np.flatnonzero(~allowed).tolist()
        rows, negate = (kept, False) if len(kept) <= len(dropped) else (dropped, True)
        if collection is None:
            return f"id {'not in' if negate else 'in'} [{', '.join(map(str, rows))}]"
        return collection.keys_expression(rows, negate)
    kept = list(range(collection.known)) if allowed is None else np.flatnonzero(allowed).tolist()
    dropped = [] if allowed is None else np.flatnonzero(~allowed).tolist()
    if unread == "false":
        return collection.keys_expression(kept) if kept else None
    tests = [collection.keys_expression(dropped, negate=True)] if dropped else []
    if unread:
        tests.append(f"{collection.keys_expression(kept)} or ({unread})" if kept else unread)
    return " and ".join(f"({test})" for test in tests) if len(tests) > 1 else (tests[0] if tests else "")


def _ranked(hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """``hits`` with their scores clipped to [0, 1], best first, ties by table row (Milvus's order among equal scores is
    its own; every in-memory retriever breaks them by row)."""
    return sorted(((index, min(max(score, 0.0), 1.0)) for index, score in hits), key=lambda hit: (-hit[1], hit[0]))


class MilvusFirstStage:
    """``retriever`` (bm25, dense, hybrid) searched in ``collection``, questions encoded by ``query_encoder``."""

    def __init__(self, collection: Collection, settings: RetrievalSettings, query_encoder: CachedEncoder,
                 ceiling: BM25Ceiling) -> None:
        self.collection = collection
        self.retriever = settings.retriever
        self._fusion = settings.fusion
        self._weight = settings.hybrid_weight
        self._rrf_k = settings.rrf_k
        self.knobs = index_knobs(collection.index, settings)
        """The dense index's search knobs this stage sends (part of its key: one ``ef`` is not another's candidates)."""
        self._encoder = query_encoder
        self._ceiling = ceiling
        searches = {"dense": self._dense, "bm25": self._bm25, "hybrid": {"rrf": self._rrf, "blend": self._blend}.get(self._fusion)}
        search = searches.get(self.retriever)
        if search is None:
            raise UserError(f"engine: milvus searches retrievers {', '.join(searches)} (fusion rrf or blend), not "
                            f"{self.retriever} (fusion {self._fusion})")
        self._searcher: Callable[[Sequence[str], int, str], list[list[tuple[int, float]]]] = search
        """The search of ``retriever`` (and ``fusion``), by name: a name without one is refused here, never searched
        as another."""

    def search(self, queries: Sequence[str], depth: int, allowed: np.ndarray | None) -> Hits:
        """:class:`tuner.retrieval.FirstStage`'s search: among the chunks of ``allowed`` (:func:`mask_expression`)."""
        return self.search_where(queries, depth, mask_expression(allowed, self.collection))

    def search_where(self, queries: Sequence[str], depth: int, where: str | None) -> Hits:
        """The ``depth`` best chunks per query among those passing ``where`` ('' = all, None = none), best first."""
        indices = np.full((len(queries), depth), -1, dtype=np.int64)
        scores = np.zeros((len(queries), depth), dtype=np.float32)
        if where is None or not queries:
            return Hits(indices, scores)
        for row, hits in enumerate(self._searcher(queries, depth, where)):
            for slot, (index, score) in enumerate(_ranked(hits)[:depth]):
                indices[row, slot], scores[row, slot] = index, score
        return Hits(indices, scores)

    def score(self, query: str, indices: np.ndarray) -> np.ndarray:
        """Normalized scores of the given chunks for one query, searched in the engine among those chunks."""
        wanted = np.unique(indices[indices >= 0])
        hits = self.search_where([query], max(len(wanted), 1), self.collection.keys_expression(wanted.tolist()))
        found = dict(zip(hits.indices[0].tolist(), hits.scores[0].tolist()))
        return np.array([found.get(int(i), 0.0) for i in indices], dtype=np.float32)

    def _vectors(self, queries: Sequence[str]) -> list[list[float]]:
        return [v.tolist() for v in self._encoder.encode(list(queries))]

    def _rows(self, found: Any) -> list[list[tuple[int, float]]]:
        """Milvus's hits as (table row, score) per query (a hit names its primary key by the field's name, or ``id``)."""
        key = self.collection.key
        keys = [[hit[key] if key in hit else hit["id"] for hit in hits] for hits in found]
        rows = iter(self.collection.table_rows([k for query in keys for k in query]))  # rows not read yet fetched
        return [[(next(rows), float(hit["distance"])) for hit in hits] for hits in found]

    def _search(self, data: list[Any], field: str, params: dict[str, Any], depth: int, where: str) -> list[list[tuple[int, float]]]:
        return self._rows(self.collection.client.search(self.collection.name, data=data, anns_field=field, limit=depth,
                                                        filter=where, search_params=params, output_fields=[]))

    def _dense(self, queries: Sequence[str], depth: int, where: str) -> list[list[tuple[int, float]]]:
        return self._search(self._vectors(queries), self.collection.vector,
                            dense_params(self.knobs, depth, self.collection.metric), depth, where)

    def _bm25(self, queries: Sequence[str], depth: int, where: str) -> list[list[tuple[int, float]]]:
        rows = []
        # Milvus Lite returns BM25 scores negated (smaller = better); a cluster returns them as they are
        for query, hits in zip(queries, self._search(list(queries), self.collection.sparse, dict(BM25_PARAMS), depth, where)):
            ceiling = self._ceiling(query)
            rows.append([(i, abs(s) / ceiling if ceiling > 0 else 0.0) for i, s in hits])
        return rows

    def _lists(self, queries: Sequence[str], depth: int,
               where: str) -> tuple[list[list[float]], list[list[tuple[int, float]]], list[list[tuple[int, float]]]]:
        """The questions' vectors and their dense and BM25 lists, each best first with scores clipped to [0, 1] and
        ties by table row, as tuner's own retrievers rank them."""
        vectors = self._vectors(queries)
        dense = self._search(vectors, self.collection.vector, dense_params(self.knobs, depth, self.collection.metric),
                             depth, where)
        return vectors, [_ranked(hits) for hits in dense], [_ranked(hits) for hits in self._bm25(queries, depth, where)]

    def _rrf(self, queries: Sequence[str], depth: int, where: str) -> list[list[tuple[int, float]]]:
        """Per query :func:`tuner.retrieval.reciprocal_rank_fusion` of its BM25 and dense lists, as in memory (Milvus's
        ``RRFRanker`` ranks ties within a list in its own order)."""
        _, dense, bm25 = self._lists(queries, depth, where)
        rows = []
        for dense_hits, bm25_hits in zip(dense, bm25):
            rankings = [np.array([i for i, _ in hits], dtype=np.int64) for hits in (bm25_hits, dense_hits)]
            union = np.union1d(*rankings)
            rows.append(list(zip(union.tolist(), reciprocal_rank_fusion(union, rankings, self._rrf_k).tolist())))
        return rows

    def _blend(self, queries: Sequence[str], depth: int, where: str) -> list[list[tuple[int, float]]]:
        """Per query ``w · cosine + (1 − w) · bm25`` (both clipped to [0, 1]) over the union of its dense and BM25
        lists, best first (ties by table row, as in memory): the chunks one list lacks are searched again in the other
        field among their own primary keys, so every chunk of the union has both scores."""
        vectors, dense, bm25 = self._lists(queries, depth, where)
        rows = []
        for query, vector, dense_hits, bm25_hits in zip(queries, vectors, dense, bm25):
            cosine, lexical = dict(dense_hits), dict(bm25_hits)
            if lacking := sorted(set(lexical) - set(cosine)):
                found = self._search([vector], self.collection.vector,
                                     dense_params(self.knobs, len(lacking), self.collection.metric), len(lacking),
                                     self.collection.keys_expression(lacking))[0]
                cosine.update((i, min(max(s, 0.0), 1.0)) for i, s in found)
            if lacking := sorted(set(cosine) - set(lexical)):
                lexical.update((i, min(max(s, 0.0), 1.0))
                               for i, s in self._bm25([query], len(lacking), self.collection.keys_expression(lacking))[0])
            fused = {i: float(np.float32(self._weight * np.float32(cosine.get(i, 0.0))
                                         + (1.0 - self._weight) * np.float32(lexical.get(i, 0.0))))
                     for i in cosine.keys() | lexical.keys()}
            rows.append(sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:depth])
        return rows
