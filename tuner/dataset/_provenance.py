"""Dataset (**dataset** → text analysis): where a golden set's labels came from (``golden.provenance.json``, written
by the review's export beside ``golden.jsonl``): the candidate pool the reviewer saw (retrievers and depth), how many
labels were found outside it by searching the whole knowledge base, and how many drawn cases were marked "no answer in
the knowledge base" or rejected. A golden set can gather the cases of several drafts (each exported into it) beside
cases no review made (hand-written or imported): the file keeps one entry per draft, its pool and the ids of its
cases, and counts the others. Labels judged only inside a pool favour the pool's retrievers (TREC pooling bias):
every figure measured on such a set says so. A golden set written by the program that wrote its documents (the demo
generator) records that instead (``generated_by``): each question's relevant documents are known by construction."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

PROVENANCE = "golden.provenance.json"

SUMMARY_TEXTS: Final[Mapping[str, str]] = {
    "labels_generated": ("labels written with the documents by {by}: {cases} cases, each question's relevant documents "
                         "known by construction (no candidate pool, so no pooling bias)"),
    "labels_reviewed": ("labels from {pools}: {cases} cases, {found} with labels found by search outside the pool "
                        "({chunks}), {no_answer} marked no answer in the knowledge base, {rejected} rejected{others}"),
    "labels_pool": "{retrievers} pool (depth {depth})",
    "labels_one_review": "a review of a {pool}",
    "labels_reviews": "reviews of {n} drafts: {parts}",
    "labels_draft": "a {pool} for {n} cases",
    "labels_unreviewed": ", and {n} cases no review made (origin unknown)",
    "labels_chunk": "{n} chunk", "labels_chunks": "{n} chunks",
    "labels_pool_note": ("{retriever} at top_k {top_k} is measured on questions {retriever} helped label "
                         "(pool depth {depth}): its recall is optimistic; the lower bound counts the no-answer cases as misses"),
}
"""The phrases of :meth:`LabelProvenance.summary` and :meth:`LabelProvenance.pool_note` in English; a report in
another language passes its own table with the same keys (``tuner.front._texts``)."""

_COUNTS = ("cases", "cases_found_by_search", "labels_found_by_search", "no_answer", "rejected", "unreviewed")


def _count(data: Mapping[str, Any], key: str, where: str) -> int:
    value = data.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{where}: {key} must be a non-negative integer")
    return value


def _pool(data: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], int | None]:
    retrievers = data.get("pool_retrievers")
    if not isinstance(retrievers, list) or not retrievers or not all(isinstance(r, str) and r for r in retrievers):
        raise ValueError(f"{where}: pool_retrievers must be a non-empty list of retriever names")
    depth = data.get("pool_depth")
    if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool) or depth < 1):
        raise ValueError(f"{where}: pool_depth must be a positive integer or null")
    return tuple(retrievers), depth


def _pooled(retrievers: Sequence[str], depth: int | None, retriever: str, top_k: int) -> bool:
    return retriever in retrievers and (depth is None or top_k <= depth)


@dataclass(frozen=True)
class DraftLabels:
    """One reviewed draft's part of a golden set: ``draft``, the draft file; ``pool_retrievers`` and ``pool_depth``,
    the pool its reviewer saw; ``case_ids``, its accepted cases that are in ``golden.jsonl``; ``found_by_search``, per
    such case with any, how many of its relevant chunks were found by search outside the pool; ``no_answer`` and
    ``rejected``, its cases marked no answer and rejected."""

    draft: str
    pool_retrievers: tuple[str, ...]
    pool_depth: int | None
    case_ids: tuple[str, ...]
    found_by_search: Mapping[str, int] = field(default_factory=dict)
    no_answer: int = 0
    rejected: int = 0

    def pooled(self, retriever: str, top_k: int) -> bool:
        return _pooled(self.pool_retrievers, self.pool_depth, retriever, top_k)

    def pool_text(self, texts: Mapping[str, str] = SUMMARY_TEXTS) -> str:
        return texts["labels_pool"].format(retrievers="+".join(self.pool_retrievers),
                                           depth="?" if self.pool_depth is None else self.pool_depth)

    def keeping(self, ids: set[str]) -> DraftLabels:
        """This part with only the cases ``ids`` (the others left ``golden.jsonl``); the review's counts stay."""
        return DraftLabels(self.draft, self.pool_retrievers, self.pool_depth, tuple(i for i in self.case_ids if i in ids),
                           {i: n for i, n in self.found_by_search.items() if i in ids}, self.no_answer, self.rejected)

    def to_dict(self) -> dict[str, Any]:
        return {"draft": self.draft, "pool_retrievers": list(self.pool_retrievers), "pool_depth": self.pool_depth,
                "case_ids": list(self.case_ids), "found_by_search": dict(self.found_by_search), "no_answer": self.no_answer,
                "rejected": self.rejected}

    @classmethod
    def from_mapping(cls, data: object, where: str) -> DraftLabels:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object")
        unknown = set(data) - {"draft", "pool_retrievers", "pool_depth", "case_ids", "found_by_search", "no_answer", "rejected"}
        if unknown:
            raise ValueError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        if not isinstance(data.get("draft"), str) or not data["draft"]:
            raise ValueError(f"{where}: draft must be the draft file's path")
        ids = data.get("case_ids")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids) or len(set(ids)) != len(ids):
            raise ValueError(f"{where}: case_ids must be a non-empty list of distinct case ids")
        found = data.get("found_by_search", {})
        if not isinstance(found, dict) or not all(i in ids for i in found):
            raise ValueError(f"{where}: found_by_search must map case ids of case_ids to chunk counts")
        return cls(data["draft"], *_pool(data, where), tuple(ids), {i: _count(found, i, f"{where}: found_by_search") for i in found},
                   _count(data, "no_answer", where), _count(data, "rejected", where))


@dataclass(frozen=True)
class LabelProvenance:
    """How a reviewed golden set was labelled.

    ``pool_retrievers`` and ``pool_depth``: the candidate pool shown to the reviewer (``pool_depth`` ``None`` when the
    draft did not record it; with several drafts, every retriever of their pools and the deepest depth);
    ``cases``: accepted cases exported; ``cases_found_by_search`` / ``labels_found_by_search``: accepted cases with, and
    relevant chunks that are, labels found by the review's search rather than in the pool; ``no_answer``: cases marked
    "no answer in the knowledge base" (left out of ``golden.jsonl`` and of recall); ``rejected``: cases rejected (a bad
    question, or, without search, an answer the pool did not hold); ``unreviewed``: cases of ``golden.jsonl`` no
    review made; ``drafts``: each reviewed draft's part (:class:`DraftLabels`; empty in files written before drafts
    were recorded), of which the counts are the sums. ``generated_by``: the program that wrote the questions with the
    documents (:meth:`generated`; no pool, no review, no pooling bias), else None."""

    pool_retrievers: tuple[str, ...]
    pool_depth: int | None
    cases: int
    cases_found_by_search: int = 0
    labels_found_by_search: int = 0
    no_answer: int = 0
    rejected: int = 0
    unreviewed: int = 0
    drafts: tuple[DraftLabels, ...] = ()
    generated_by: str | None = None

    @classmethod
    def generated(cls, by: str, cases: int) -> LabelProvenance:
        """The provenance of ``cases`` questions written, with their relevant documents, by the program ``by`` that
        wrote the documents (the demo generator): no candidate pool, nothing reviewed."""
        return cls(pool_retrievers=(), pool_depth=None, cases=cases, generated_by=by)

    @classmethod
    def of_drafts(cls, drafts: Sequence[DraftLabels], unreviewed: int = 0) -> LabelProvenance:
        """The provenance of a golden set made of ``drafts`` (at least one) and ``unreviewed`` other cases."""
        depths = [d.pool_depth for d in drafts]
        return cls(
            pool_retrievers=tuple(dict.fromkeys(r for d in drafts for r in d.pool_retrievers)),
            pool_depth=None if None in depths else max(d for d in depths if d is not None),
            cases=sum(len(d.case_ids) for d in drafts),
            cases_found_by_search=sum(len(d.found_by_search) for d in drafts),
            labels_found_by_search=sum(sum(d.found_by_search.values()) for d in drafts),
            no_answer=sum(d.no_answer for d in drafts),
            rejected=sum(d.rejected for d in drafts),
            unreviewed=unreviewed,
            drafts=tuple(drafts),
        )

    def describing(self, golden_ids: Sequence[str]) -> LabelProvenance | None:
        """This provenance for the golden set of case ids ``golden_ids`` (as it is now, edited by hand or not): each
        draft's part with those of its cases still in the set (a part left without any dropped; ``None`` when none is
        left: no case's origin is known), the set's other cases counted as ``unreviewed``. A provenance without drafts
        (written before they were recorded) names no case and stays as it is."""
        if not self.drafts:
            return self
        present = set(golden_ids)
        parts = [kept for part in self.drafts if (kept := part.keeping(present)).case_ids]
        if not parts:
            return None
        covered = {case_id for part in parts for case_id in part.case_ids}
        return LabelProvenance.of_drafts(parts, unreviewed=sum(case_id not in covered for case_id in golden_ids))

    @property
    def answered(self) -> int:
        """The cases of ``golden.jsonl``, reviewed or not: what recall averages over."""
        return self.cases + self.unreviewed

    def pooled(self, retriever: str, top_k: int) -> bool:
        """True when a configuration retrieving with ``retriever`` at ``top_k`` is measured on questions that retriever
        helped label: it was one of a pool's retrievers and ``top_k`` is within that pool's depth."""
        if self.drafts:
            return any(d.pooled(retriever, top_k) for d in self.drafts)
        return _pooled(self.pool_retrievers, self.pool_depth, retriever, top_k)

    def summary(self, texts: Mapping[str, str] = SUMMARY_TEXTS) -> str:
        """One line: the pool (each draft's, when there are several), the labels found outside it, the cases left out;
        for generated labels, what wrote them. In the phrases of ``texts`` (:data:`SUMMARY_TEXTS`' keys)."""
        if self.generated_by is not None:
            return texts["labels_generated"].format(by=self.generated_by, cases=self.cases)
        if len(self.drafts) > 1:
            parts = ", ".join(texts["labels_draft"].format(pool=d.pool_text(texts), n=len(d.case_ids)) for d in self.drafts)
            pools = texts["labels_reviews"].format(n=len(self.drafts), parts=parts)
        else:
            pool = DraftLabels("", self.pool_retrievers, self.pool_depth, ()).pool_text(texts)
            pools = texts["labels_one_review"].format(pool=pool)
        chunks = texts["labels_chunk" if self.labels_found_by_search == 1 else "labels_chunks"].format(n=self.labels_found_by_search)
        others = texts["labels_unreviewed"].format(n=self.unreviewed) if self.unreviewed else ""
        return texts["labels_reviewed"].format(pools=pools, cases=self.cases, found=self.cases_found_by_search,
                                               chunks=chunks, no_answer=self.no_answer, rejected=self.rejected,
                                               others=others)

    def pool_note(self, retriever: str, top_k: int, texts: Mapping[str, str] = SUMMARY_TEXTS) -> str | None:
        """The caveat of a configuration the pool favours (:meth:`pooled`), else ``None``."""
        if not self.pooled(retriever, top_k):
            return None
        depths = [d.pool_depth for d in self.drafts if d.pooled(retriever, top_k)] if self.drafts else [self.pool_depth]
        depth = "?" if None in depths else "/".join(str(d) for d in dict.fromkeys(depths))
        return texts["labels_pool_note"].format(retriever=retriever, top_k=top_k, depth=depth)

    def to_dict(self) -> dict[str, Any]:
        generated = {} if self.generated_by is None else {"generated_by": self.generated_by}
        return {**generated, "pool_retrievers": list(self.pool_retrievers), "pool_depth": self.pool_depth,
                **{key: getattr(self, key) for key in _COUNTS}, "drafts": [d.to_dict() for d in self.drafts]}

    @classmethod
    def from_mapping(cls, data: object, where: str) -> LabelProvenance:
        """Validated: ``ValueError`` naming ``where`` and the key on anything malformed, or on counts that are not the
        sums of the drafts'."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object")
        unknown = set(data) - {"pool_retrievers", "pool_depth", "drafts", "generated_by", *_COUNTS}
        if unknown:
            raise ValueError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        if "generated_by" in data:
            by = data["generated_by"]
            if not isinstance(by, str) or not by.strip():
                raise ValueError(f"{where}: generated_by must name the program that wrote the labels")
            if data.get("pool_retrievers") or data.get("drafts") or any(data.get(key) for key in _COUNTS if key != "cases"):
                raise ValueError(f"{where}: generated labels have no pool, drafts or review counts (only cases)")
            return cls.generated(by, _count(data, "cases", where))
        drafts = data.get("drafts", [])
        if not isinstance(drafts, list):
            raise ValueError(f"{where}: drafts must be a list")
        parts = [DraftLabels.from_mapping(d, f"{where}: drafts[{i}]") for i, d in enumerate(drafts)]
        named = [case_id for part in parts for case_id in part.case_ids]
        if len(set(named)) != len(named):
            raise ValueError(f"{where}: drafts name a case twice (each case of golden.jsonl comes from one draft)")
        retrievers, depth = _pool(data, where)
        counts: dict[str, Any] = {key: _count(data, key, where) for key in _COUNTS}
        provenance = cls(retrievers, depth, **counts, drafts=tuple(parts))
        if parts and provenance != cls.of_drafts(parts, provenance.unreviewed):
            raise ValueError(f"{where}: the pool and counts are not those of its drafts (edit the drafts' entries, not the sums)")
        return provenance


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
