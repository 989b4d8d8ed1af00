"""External knowledge (retrieval ⇄ **a retrieval service**): a :class:`tuner.retrieval.RetrievalPipeline` whose
contexts come from a service that speaks Dify's External Knowledge API, so ``tuner eval``, the noise variants and a
study measure it as they measure tuner's own retrieval.

Only ``top_k`` and ``relevance_threshold`` (sent as ``score_threshold``, the same [0, 1] meaning) reach such a service
(:data:`EXTERNAL_KNOBS`); the other settings shape only what tuner builds locally for the noise variants: the golden
set's own corpus and conflicting documents, chunked and embedded here, from which v1, v2 and v4 draw their noise and v3
its conflicts. Those cannot be put into someone else's index, so v3 is always ``hard_mode: inject``: the conflicts of
a case's relevant documents added to the context the service returned.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Final

import numpy as np

from tuner.cache import DiskCache
from tuner.chunking import Chunk
from tuner.dataset import Dataset
from tuner.embedding import EmbeddingContext
from tuner.errors import UserError
from tuner.external._client import ExternalClient
from tuner.external._contract import Record
from tuner.progress import Reporter
from tuner.retrieval import RetrievalPipeline, RetrievedContext, SearchLatency
from tuner.settings import RetrievalSettings

EXTERNAL_KNOBS: Final = ("top_k", "relevance_threshold")
"""The settings a service speaking the contract is asked with (``top_k``; ``relevance_threshold`` as ``score_threshold``):
a study over such a service searches these and leaves every other knob out."""
UNMATCHED: Final = ""
"""The document id of a record matched to no document of the golden set: retrieved, never relevant."""


def _normalized(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


@dataclass(frozen=True)
class Matching:
    """How many records the service returned over the golden questions, how many matched no document, and the
    records beyond ``top_k`` it sent and tuner dropped (how many, in how many replies; the top_k by score were kept)."""

    records: int
    unmatched: int
    dropped: int = 0
    dropped_replies: int = 0


class RecordMatcher:
    """Which golden-set document a record is, by ``match`` (:class:`tuner.external.ExternalConfig`): the value of
    ``metadata.<key>`` when it is a corpus document id, the document with that ``title`` (a title two documents share
    matches neither), or the document whose text contains the record's ``content`` (whitespace and full-width forms
    normalized); else :data:`UNMATCHED`."""

    def __init__(self, dataset: Dataset, match: str) -> None:
        self.match = match
        self._ids = {doc.doc_id for doc in dataset.corpus}
        titles: dict[str, list[str]] = {}
        for doc in dataset.corpus:
            titles.setdefault(doc.title, []).append(doc.doc_id)
        self._titles = {title: ids[0] for title, ids in titles.items() if title and len(ids) == 1}
        self._texts = [(doc.doc_id, _normalized(doc.text)) for doc in dataset.corpus] if match == "content" else []

    def doc_id(self, record: Record) -> str:
        if self.match == "title":
            return self._titles.get(record.title, UNMATCHED)
        if self.match == "content":
            content = _normalized(record.content)
            return next((doc_id for doc_id, text in self._texts if content and content in text), UNMATCHED)
        value = record.metadata.get(self.match.removeprefix("metadata."))
        return str(value) if value is not None and str(value) in self._ids else UNMATCHED


class ExternalPipeline(RetrievalPipeline):
    """Retrieval of every golden question by ``client``'s service; the rest (chunk tables, question vectors, noise)
    is :class:`RetrievalPipeline`'s over the local ``dataset``. ``matching`` holds the counts of the last retrieval."""

    searches_conflicts = False

    def __init__(self, dataset: Dataset, client: ExternalClient, cache: DiskCache | None = None,
                 reporter: Reporter | None = None, embeddings: EmbeddingContext | None = None) -> None:
        super().__init__(dataset, cache, reporter, embeddings=embeddings)
        self.client = client
        self.matcher = RecordMatcher(dataset, client.config.match)
        self.matching = Matching(0, 0)

    def retrieve(
        self, settings: RetrievalSettings, view: str = "clean", ahead: np.ndarray | None = None
    ) -> list[RetrievedContext]:
        """The service's records for every golden question with ``settings``' ``top_k`` and ``relevance_threshold``
        (as ``score_threshold``), at most ``top_k`` of them and none scoring below the threshold (should the service
        ignore it), in the service's order (the service orders its own ties: ``ahead`` is refused)."""
        if ahead is not None:
            raise ValueError("external retrieval orders its own ties: no ahead flags")
        if view != "clean":
            raise UserError(f"external retrieval ({self.client.config.url}) has only the service's own index: v3 needs "
                            "variants.hard_mode: inject, not in_index")
        k, threshold = settings.top_k, settings.relevance_threshold
        before = self.client.dropped
        replies = self.client.many(self.queries, k, threshold)
        contexts, total, unmatched = [], 0, 0
        for case, records in zip(self.dataset.golden, replies):
            kept = [r for r in records if r.score is None or r.score >= threshold][:k]
            chunks = tuple(self._chunk(case.id, rank, record) for rank, record in enumerate(kept))
            total += len(chunks)
            unmatched += sum(chunk.doc_id == UNMATCHED for chunk in chunks)
            contexts.append(RetrievedContext(case.id, chunks, tuple(r.score or 0.0 for r in kept)))
        after = self.client.dropped
        self.matching = Matching(total, unmatched, after.records - before.records, after.replies - before.replies)
        return contexts

    def retrieval_warning(self) -> str | None:
        """When some of the records the last retrieval returned matched no golden document, how many (they count as
        retrieved and not relevant)."""
        if not self.matching.unmatched:
            return None
        return (f"external: {self.matching.unmatched} of {self.matching.records} records matched no golden document by "
                f"{self.client.config.match} (counted as retrieved, not relevant)")

    def search_latency(self, settings: RetrievalSettings, view: str = "clean") -> SearchLatency | None:
        """None: the service's time per question is the network's and the service's, not a first stage of tuner's
        (its replies are read from the call cache after the first pass anyway)."""
        return None

    def _chunk(self, case_id: str, rank: int, record: Record) -> Chunk:
        """A record as a chunk of its matched document (its id says where it came from; no local chunk has it)."""
        return Chunk(f"external:{case_id}:{rank}", self.matcher.doc_id(record), 0, len(record.content), record.content,
                     record.title)
