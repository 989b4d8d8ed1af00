"""Dataset (**dataset** → text analysis): where a golden set's labels came from (``golden.provenance.json``, written
by the review's export beside ``golden.jsonl``): the candidate pool the reviewer saw (retrievers and depth), how many
labels were found outside it by searching the whole knowledge base, and how many drawn cases were marked "no answer in
the knowledge base" or rejected. Labels judged only inside a pool favour the pool's retrievers (TREC pooling bias):
every figure measured on such a set says so."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PROVENANCE = "golden.provenance.json"

_COUNTS = ("cases", "cases_found_by_search", "labels_found_by_search", "no_answer", "rejected")


@dataclass(frozen=True)
class LabelProvenance:
    """How a reviewed golden set was labelled.

    ``pool_retrievers`` and ``pool_depth``: the candidate pool shown to the reviewer (``pool_depth`` ``None`` when the
    draft did not record it); ``cases``: accepted cases exported; ``cases_found_by_search`` / ``labels_found_by_search``:
    accepted cases with, and relevant chunks that are, labels found by the review's search rather than in the pool;
    ``no_answer``: cases marked "no answer in the knowledge base" (left out of ``golden.jsonl`` and of recall);
    ``rejected``: cases rejected (a bad question, or, without search, an answer the pool did not hold)."""

    pool_retrievers: tuple[str, ...]
    pool_depth: int | None
    cases: int
    cases_found_by_search: int = 0
    labels_found_by_search: int = 0
    no_answer: int = 0
    rejected: int = 0

    def pooled(self, retriever: str, top_k: int) -> bool:
        """True when a configuration retrieving with ``retriever`` at ``top_k`` is measured on questions that retriever
        helped label: it was one of the pool's retrievers and ``top_k`` is within the pool depth."""
        return retriever in self.pool_retrievers and (self.pool_depth is None or top_k <= self.pool_depth)

    def summary(self) -> str:
        """One line: the pool, the labels found outside it, the cases left out."""
        depth = "?" if self.pool_depth is None else str(self.pool_depth)
        return (f"labels from a review of a {'+'.join(self.pool_retrievers)} pool (depth {depth}): {self.cases} cases, "
                f"{self.cases_found_by_search} with labels found by search outside the pool ({self.labels_found_by_search} chunks), "
                f"{self.no_answer} marked no answer in the knowledge base, {self.rejected} rejected")

    def pool_note(self, retriever: str, top_k: int) -> str | None:
        """The caveat of a configuration the pool favours (:meth:`pooled`), else ``None``."""
        if not self.pooled(retriever, top_k):
            return None
        return (f"{retriever} at top_k {top_k} is measured on questions {retriever} helped label "
                f"(pool depth {'?' if self.pool_depth is None else self.pool_depth}): its recall is optimistic; "
                "the lower bound counts the no-answer cases as misses")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["pool_retrievers"] = list(self.pool_retrievers)
        return data

    @classmethod
    def from_mapping(cls, data: object, where: str) -> LabelProvenance:
        """Validated: ``ValueError`` naming ``where`` and the key on anything malformed."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object")
        unknown = set(data) - {"pool_retrievers", "pool_depth", *_COUNTS}
        if unknown:
            raise ValueError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        retrievers = data.get("pool_retrievers")
        if not isinstance(retrievers, list) or not retrievers or not all(isinstance(r, str) and r for r in retrievers):
            raise ValueError(f"{where}: pool_retrievers must be a non-empty list of retriever names")
        depth = data.get("pool_depth")
        if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
            raise ValueError(f"{where}: pool_depth must be a positive integer or null")
        counts: dict[str, int] = {}
        for key in _COUNTS:
            value = data.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{where}: {key} must be a non-negative integer")
            counts[key] = value
        return cls(tuple(retrievers), depth, **counts)


UNKNOWN_ORIGIN = f"labels of unknown origin (no {PROVENANCE}): whether they were judged only inside a candidate pool is not recorded"


def labels_json(provenance: LabelProvenance | None) -> dict[str, Any]:
    """The ``labels`` block of JSON outputs: the provenance with ``known: true``, or ``known: false`` and why."""
    if provenance is None:
        return {"known": False, "note": UNKNOWN_ORIGIN}
    return {"known": True, **provenance.to_dict(), "note": provenance.summary()}


def labels_line(provenance: LabelProvenance | None) -> str:
    """One line for text outputs: :meth:`LabelProvenance.summary` or :data:`UNKNOWN_ORIGIN`."""
    return UNKNOWN_ORIGIN if provenance is None else provenance.summary()


def read_provenance(path: Path) -> LabelProvenance | None:
    """``path`` (``golden.provenance.json``) read and validated; ``None`` when the file is absent."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: malformed JSON: {exc}") from None
    return LabelProvenance.from_mapping(data, str(path))
