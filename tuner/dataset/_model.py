"""Dataset (**dataset** → text analysis): documents, golden cases, conflicts and the dataset's content hash."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from tuner.dataset._provenance import LabelProvenance
from tuner.text import Language

FAMILY = "family"
"""Reserved metadata key: the version group of a document (every version of one document shares it)."""
DATE = "date"
"""Reserved metadata key: a document's date, ISO 8601 ``YYYY-MM-DD`` or a datetime (loading normalizes Chinese dates)."""

Keypoint = tuple[str, ...]
"""A checkable fact of the reference answer: one or more aliases, any one of which counts."""


@dataclass(frozen=True)
class Document:
    doc_id: str
    text: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Conflict:
    """A document that contradicts the corpus document ``conflicts_with`` (stale version, corrupted copy)."""

    doc_id: str
    text: str
    conflicts_with: str
    kind: str = "unspecified"
    severity: str = "unspecified"
    wrong_values: tuple[str, ...] = ()
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MetadataCounts:
    """How much version metadata a dataset carries (``tuner validate``): documents (corpus and conflicting) with a
    ``family``, with a ``date``, and families holding more than one document."""

    documents: int
    with_family: int
    with_date: int
    versioned_families: int


@dataclass(frozen=True)
class GoldenCase:
    """One golden question. ``stratum``: the draw it came from when a person reviewed it from a drafted set (a query
    log's ``head``/``torso``/``tail``/``known_bad``, a synthesized set's kind), which the confirmation split
    stratifies on beside ``category``; ``None`` for a case not drafted."""

    id: str
    question: str
    ground_truth: str
    keypoints: tuple[Keypoint, ...]
    relevant_doc_ids: tuple[str, ...]
    category: str = "uncategorized"
    difficulty: str = "unspecified"
    wrong_answers: tuple[str, ...] = ()
    stratum: str | None = None


@dataclass(frozen=True)
class Dataset:
    """A validated dataset folder: corpus, golden questions and (optional) conflicting documents.

    ``language`` is the resolved language of the texts: declared in ``dataset.yaml``
    (``language_source == "declared"``), or detected from the corpus when it says ``auto`` or there is
    no manifest (``"detected"``, see :func:`tuner.text.detect_language`). ``model_defaults`` holds the model
    settings the manifest declares (embedding model, reranker, prompts): defaults under any study or
    command-line settings, see :func:`tuner.settings.settings_from_mapping`. ``provenance`` is how the golden set was
    labelled (``golden.provenance.json``; ``None``: unknown origin).
    """

    path: Path
    corpus: tuple[Document, ...]
    golden: tuple[GoldenCase, ...]
    conflicts: tuple[Conflict, ...] = ()
    content_hash: str = ""
    language: Language = "en"
    language_source: Literal["declared", "detected"] = "declared"
    model_defaults: Mapping[str, str] = field(default_factory=dict)
    provenance: LabelProvenance | None = None

    def corpus_texts(self) -> Iterator[str]:
        """Titles and texts of the corpus documents: what language detection reads."""
        for doc in self.corpus:
            yield doc.title
            yield doc.text

    @property
    def retrieval_only(self) -> bool:
        """True when no golden case has keypoints: only retrieval metrics can be computed."""
        return all(not case.keypoints for case in self.golden)

    @cached_property
    def _wrong_values(self) -> dict[str, tuple[str, ...]]:
        """Per corpus doc id, the wrong values its conflicting documents assert."""
        values: dict[str, list[str]] = {}
        for conflict in self.conflicts:
            values.setdefault(conflict.conflicts_with, []).extend(conflict.wrong_values)
        return {doc_id: tuple(v) for doc_id, v in values.items()}

    def wrong_answers(self, case: GoldenCase) -> list[str]:
        """The case's known wrong answers plus the wrong values asserted by conflicts of its relevant documents."""
        extra = [value for doc in case.relevant_doc_ids for value in self._wrong_values.get(doc, ())]
        return list(dict.fromkeys([*case.wrong_answers, *extra]))

    def metadata_of(self, doc_id: str) -> Mapping[str, Any]:
        """The metadata of the corpus or conflicting document ``doc_id`` (empty for an unknown id)."""
        return self._metadata.get(doc_id, {})

    @cached_property
    def _metadata(self) -> dict[str, Mapping[str, Any]]:
        return {**{c.doc_id: c.metadata for c in self.conflicts}, **{d.doc_id: d.metadata for d in self.corpus}}

    def metadata_counts(self) -> MetadataCounts:
        metadata = list(self._metadata.values())
        families = Counter(m[FAMILY] for m in metadata if FAMILY in m)
        return MetadataCounts(len(metadata), sum(families.values()), sum(DATE in m for m in metadata),
                              sum(n > 1 for n in families.values()))

    def summary(self) -> str:
        kinds = sorted({c.category for c in self.golden})
        return (
            f"{len(self.corpus)} documents, {len(self.golden)} golden questions, "
            f"{len(self.conflicts)} conflicting documents, "
            f"{sum(len(c.keypoints) for c in self.golden)} keypoints, categories: {', '.join(kinds)}"
        )


def hash_files(paths: list[Path]) -> str:
    """sha256 over the bytes of the given files (in order), so a dataset's identity follows its content."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
