"""Golden set (knowledge base → **stale versions**): ``tuner golden conflicts``: pairs of corpus documents that say
different things about the same fact.

Candidate pairs are documents of one version family (``metadata.family`` with more than one member), near
duplicates: MinHash (datasketch) over character 4-grams of the normalized text, so Chinese and English alike, and,
when asked, dense neighbours: documents one of whose chunks is among the :data:`DENSE_NEIGHBOURS` nearest chunks
(FAISS, inner product of the knowledge base's normalized embeddings, default chunking) of a chunk of the other with a
cosine of at least the threshold given, which pairs versions rewritten rather than copied. In a
pair, each sentence of one document is matched to its most similar sentence in the other (Jaccard of BM25 terms
≥ :data:`SENTENCE_MATCH`; found through an index, :class:`_SentenceIndex`, not by comparing every pair); where matched sentences carry different values — numbers (Chinese numerals read by
tuner.text), dates (read as ISO) or capitalized names — the pair disagrees. With both dates known the older document is
the stale one (``doc_id``); otherwise the order is by doc id and the row says ``severity: undated``.

None of that pairs two documents written apart from each other about one fact (a fabricated passage beside the real
one: no family, no shared text, few shared sentences). With questions (:func:`question_conflicts`, ``--questions``)
the documents BM25 ranks in the top :data:`QUESTION_DEPTH` for one question are read as the offline span reader reads
them (:func:`tuner.generation.answer_type`, :func:`tuner.generation.extract_span`): each answers a date, number or name
question with the span of its sentence that shares the most of the question's terms (at least
:data:`QUESTION_TERMS`); two documents whose answers differ disagree on that question. A question that asks no date,
number or name, and a contradiction without a value (a negation, a changed claim in words), are not found.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from tuner.dataset import Dataset, Document
from tuner.embedding import CachedEncoder
from tuner.progress import LoggedTask, Reporter, SilentReporter
from tuner.text import NUMBER, bm25_tokens, find_dates, format_number, normalize_text, parse_number, split_sentences

SENTENCE_MATCH = 0.5
MATCH_CANDIDATES = 500
"""The most sentences of the other document one sentence is compared with (:class:`_SentenceIndex`): the ones sharing
its rarest terms. Only a sentence made of words most sentences hold has more (documents written from a few templates);
without a bound they cost sentences × sentences Jaccard computations, minutes for two such documents of 1 MB."""
QUESTION_DEPTH = 5
"""Documents read per question by :func:`question_conflicts` (BM25's top chunks, by document)."""
QUESTION_TERMS = 2
"""Question terms (BM25) a sentence must share for its span to count as a document's answer."""
CONFLICT_NEAR_DUPLICATE = 0.5
DENSE_NEIGHBOURS = 10
"""Nearest chunks searched per chunk for dense pairs."""
_SHINGLE = 4
_NAME = re.compile(r"\b[A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)*")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[\d:.]+)?|\d{4}-\d{2}")


@dataclass(frozen=True)
class ConflictCandidate:
    """``doc_id`` (the older or contradicting document) disagrees with ``conflicts_with`` on ``wrong_values``
    (its own values, with the other's in ``right_values``); ``reason`` is ``family``, ``near-duplicate`` or
    ``similar:COSINE`` (dense neighbours) or ``question:N`` (both answer golden question N differently)."""

    doc_id: str
    conflicts_with: str
    wrong_values: tuple[str, ...]
    right_values: tuple[str, ...]
    reason: str
    dated: bool

    def row(self, corpus: dict[str, Document]) -> dict[str, object]:
        """The candidate in ``conflicts.jsonl``'s row format."""
        doc = corpus[self.doc_id]
        return {"doc_id": self.doc_id, "title": doc.title, "text": doc.text, "conflicts_with": self.conflicts_with,
                "kind": "stale_version", "severity": "dated" if self.dated else "undated",
                "wrong_values": list(self.wrong_values), "metadata": dict(doc.metadata)}


def _values(sentence: str) -> set[str]:
    """Numbers (as Arabic), dates (ISO) and capitalized names of ``sentence``."""
    values: set[str] = set()
    rest = sentence
    for mention in reversed(find_dates(sentence)):
        values.add(mention.iso)
        rest = rest[: mention.start] + " " + rest[mention.end:]
    for match in NUMBER.finditer(rest):
        numeral = match.groupdict().get("number")
        value = parse_number(numeral) if numeral else None
        if value is not None:
            values.add(format_number(value))
    values.update(m[0] for m in _NAME.finditer(rest) if " " in m[0] or m.start() > 0)
    return values


def _terms(sentence: str, values: set[str]) -> set[str]:
    """The sentence's context: its BM25 terms without those of its values, so two sentences that differ only in the
    values they assert still match."""
    return set(bm25_tokens(sentence)) - set(bm25_tokens(" ".join(values)))


def _is_date(value: str) -> bool:
    return bool(_ISO_DATE.fullmatch(value))


@dataclass(frozen=True)
class _Sentence:
    """A sentence's context terms (:func:`_terms`) and values (:func:`_values`)."""

    terms: frozenset[str]
    values: frozenset[str]


def _sentences(text: str) -> list[_Sentence]:
    """:class:`_Sentence` of each sentence of ``text``, in order."""
    found = []
    for sentence in split_sentences(text):
        values = _values(sentence)
        found.append(_Sentence(frozenset(_terms(sentence, values)), frozenset(values)))
    return found


class _SentenceIndex:
    """The sentences of one document, searched for the one most similar to a sentence of another (Jaccard of context
    terms, the first in order among equals) when it reaches :data:`SENTENCE_MATCH`, without comparing every pair: a
    prefix-filtered inverted index (Bayardo et al., "Scaling up all pairs similarity search", 2007). With the terms of
    every sentence ordered rarest first, two sets of Jaccard ≥ t share at least ``ceil(t·max(|x|, |y|))`` terms, so
    their prefixes of ``|x| − ceil(t·|x|) + 1`` terms share one: only the sentences whose prefix holds a term of the
    query's prefix, of a size within ``[t·|x|, |x|/t]``, are compared, and the answer is the one the full comparison
    gives, unless they are more than :data:`MATCH_CANDIDATES` (then those found through its rarest terms first). A
    context repeated in the document is indexed once (its first sentence is the one a tie picks), and a query whose
    context the document holds (a version copies most sentences) is answered by that sentence's first copy at once."""

    def __init__(self, sentences: Sequence[_Sentence], threshold: float = SENTENCE_MATCH) -> None:
        self.threshold = threshold
        self.sentences = sentences
        self.frequency: dict[str, int] = {}
        for sentence in sentences:
            for term in sentence.terms:
                self.frequency[term] = self.frequency.get(term, 0) + 1
        self.postings: dict[str, list[int]] = {}
        self.first: dict[frozenset[str], int] = {}  # each context's first sentence: a copy in the other is its best
        for number, sentence in enumerate(sentences):
            if not sentence.terms or sentence.terms in self.first:
                continue
            self.first[sentence.terms] = number
            for term in self._prefix(sentence.terms):
                self.postings.setdefault(term, []).append(number)
        self._best: dict[frozenset[str], int | None] = {}
        self.compared = 0
        """Jaccard similarities computed so far (all pairs: every sentence against every sentence)."""

    def _prefix(self, terms: frozenset[str]) -> list[str]:
        # the float's rounding may only lengthen the prefix (never miss a match): ceil of a hair less
        length = len(terms) - math.ceil(self.threshold * len(terms) - 1e-9) + 1
        return sorted(terms, key=lambda term: (self.frequency.get(term, 0), term))[:length]

    def best(self, terms: frozenset[str]) -> int | None:
        """The number of the first sentence of highest Jaccard with ``terms`` when that is at least the threshold."""
        if terms in self.first:  # a Jaccard of 1, which none exceeds: the first copy (a version copies most sentences)
            return self.first[terms]
        if terms not in self._best:
            low, high = self.threshold * len(terms) - 1e-9, len(terms) / self.threshold + 1e-9
            found: dict[int, None] = {}
            for term in self._prefix(terms):  # rarest first: a sentence of common words only is the one cut short
                for number in self.postings.get(term, ()):
                    if len(found) >= MATCH_CANDIDATES:
                        break
                    if low <= len(self.sentences[number].terms) <= high:
                        found[number] = None
            candidates = sorted(found)
            self.compared += len(candidates)
            best, score = None, 0.0
            for number in candidates:
                other = self.sentences[number].terms
                jaccard = len(terms & other) / len(terms | other)
                if jaccard > score:
                    best, score = number, jaccard
            self._best[terms] = best if score >= self.threshold else None
        return self._best[terms]


def disagreements(a: str, b: str) -> tuple[list[str], list[str]]:
    """Values of ``a`` and of ``b`` that differ in matched sentences (see the module doc), each in order, once.

    >>> disagreements("Staff get 15 days of leave per year.", "Staff get 20 days of leave per year.")
    (['15'], ['20'])
    >>> disagreements("员工每年享有年假十五天。", "员工每年享有年假二十天。")
    (['15'], ['20'])
    """
    return _disagreements(_sentences(a), _SentenceIndex(_sentences(b)))


def _disagreements(mine: Sequence[_Sentence], theirs: _SentenceIndex) -> tuple[list[str], list[str]]:
    left: dict[str, None] = {}
    right: dict[str, None] = {}
    for sentence in mine:
        if not sentence.values or not sentence.terms:
            continue
        match = theirs.best(sentence.terms)
        if match is None:
            continue
        other = theirs.sentences[match].values
        own, their = sentence.values - other, other - sentence.values
        if own and their:
            left.update(dict.fromkeys(sorted(own)))
            right.update(dict.fromkeys(sorted(their)))
    return list(left), list(right)


def _shingles(text: str) -> set[str]:
    squashed = re.sub(r"\s+", " ", normalize_text(text))
    return {squashed[i:i + _SHINGLE] for i in range(max(1, len(squashed) - _SHINGLE + 1))}


def near_duplicate_pairs(corpus: Iterable[Document], threshold: float = CONFLICT_NEAR_DUPLICATE) -> set[tuple[str, str]]:
    """Doc id pairs (sorted) whose texts' estimated Jaccard similarity of character 4-grams is at least ``threshold``."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=64)
    hashes: dict[str, MinHash] = {}
    for doc in corpus:
        minhash = MinHash(num_perm=64, seed=1)
        minhash.update_batch([s.encode("utf-8") for s in _shingles(doc.text)])
        hashes[doc.doc_id] = minhash
        lsh.insert(doc.doc_id, minhash)
    pairs: set[tuple[str, str]] = set()
    for doc_id, minhash in hashes.items():
        for other in lsh.query(minhash):
            if other != doc_id:
                pairs.add((min(doc_id, other), max(doc_id, other)))
    return pairs


def dense_pairs(kb: Dataset, threshold: float, *, encoder: CachedEncoder | None = None,
                reporter: Reporter | None = None) -> dict[tuple[str, str], float]:
    """Doc id pairs (sorted) of the corpus with a chunk of one among the :data:`DENSE_NEIGHBOURS` nearest chunks of a
    chunk of the other at a cosine of at least ``threshold``, with the highest such cosine. Chunks and vectors are
    those a study uses (default chunking, the models ``dataset.yaml`` names, the embedding store)."""
    import faiss

    from tuner.chunking import CORPUS as CORPUS_CHUNK
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import settings_from_mapping

    kb = _keyed(kb)
    settings = settings_from_mapping({}, "conflict settings", kb.model_defaults)
    table = RetrievalPipeline(kb, reporter=reporter or SilentReporter(), encoder=encoder).table(settings)
    rows = [i for i, c in enumerate(table.chunks) if c.source == CORPUS_CHUNK]
    vectors = np.ascontiguousarray(table.embeddings()[rows], dtype=np.float32)
    doc_ids = [table.chunks[i].doc_id for i in rows]
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    scores, neighbours = index.search(vectors, min(DENSE_NEIGHBOURS + 1, len(rows)))
    pairs: dict[tuple[str, str], float] = {}
    for i, (row_scores, row_neighbours) in enumerate(zip(scores, neighbours)):
        for score, j in zip(row_scores, row_neighbours):
            if j < 0 or score < threshold or doc_ids[j] == doc_ids[i]:
                continue
            pair = (min(doc_ids[i], doc_ids[j]), max(doc_ids[i], doc_ids[j]))
            pairs[pair] = max(pairs.get(pair, -1.0), float(score))
    return pairs


def find_conflicts(kb: Dataset, *, near_duplicates: bool = True, dense: float | None = None, encoder: CachedEncoder | None = None,
                   reporter: Reporter | None = None) -> list[ConflictCandidate]:
    """Candidates of ``kb``'s corpus, most disagreeing values first; ``dense`` is the cosine from which dense
    neighbours are paired too (``None``: not at all)."""
    corpus = {doc.doc_id: doc for doc in kb.corpus}
    families: dict[str, list[str]] = {}
    for doc in kb.corpus:
        family = doc.metadata.get("family")
        if isinstance(family, str) and family:
            families.setdefault(family, []).append(doc.doc_id)
    pairs: dict[tuple[str, str], str] = {}
    for members in families.values():
        for a, b in combinations(sorted(members), 2):
            pairs[(a, b)] = "family"
    if near_duplicates:
        for pair in near_duplicate_pairs(kb.corpus):
            pairs.setdefault(pair, "near-duplicate")
    if dense is not None:
        for pair, cosine in dense_pairs(kb, dense, encoder=encoder, reporter=reporter).items():
            pairs.setdefault(pair, f"similar:{cosine:.2f}")
    found: list[ConflictCandidate] = []
    sentences: dict[str, list[_Sentence]] = {}  # each document read once, however many pairs it is in
    indexes: dict[str, _SentenceIndex] = {}
    shown = reporter or SilentReporter()
    with shown.task("comparing the sentences of candidate pairs", len(pairs)) as bar:
        task = LoggedTask(bar, shown, lambda done: f"comparing the sentences of candidate pairs: {done} of {len(pairs)}")
        for (a, b), reason in sorted(pairs.items()):
            date_a, date_b = (str(corpus[d].metadata.get("date") or "") for d in (a, b))
            dated = bool(date_a and date_b and date_a != date_b)
            old, new = (b, a) if dated and date_b < date_a else (a, b)
            for doc_id in (old, new):
                if doc_id not in sentences:
                    sentences[doc_id] = _sentences(corpus[doc_id].text)
            if new not in indexes:
                indexes[new] = _SentenceIndex(sentences[new])
            wrong, right = _disagreements(sentences[old], indexes[new])
            task.advance()
            # outside a version family, two documents whose matched sentences carry different dates tell of different
            # events (a market report of each day; one article republished on two days), not of one fact that changed
            dated_events = any(map(_is_date, wrong)) and any(map(_is_date, right))
            if wrong and (reason == "family" or not dated_events):
                found.append(ConflictCandidate(old, new, tuple(wrong), tuple(right), reason, dated))
    return sorted(found, key=lambda c: (-len(c.wrong_values), c.doc_id, c.conflicts_with))


def answer_value(question: str, text: str) -> str | None:
    """What ``text`` answers to ``question`` when it asks a date, number or name: the span of the sentence sharing the
    most question terms (at least :data:`QUESTION_TERMS`), compared as a year, a number or normalized text; None when
    the question asks none of those or no sentence answers it.

    >>> answer_value("When was the Aurora A48 released?", "The Aurora A48 was released in March 2019. It sold well.")
    '2019'
    >>> answer_value("When was the Aurora A48 released?", "Aurora was first shown at a fair in 1998 by Dean Hernandez.") is None
    True
    """
    from tuner.generation import answer_type, extract_span

    kind = answer_type(question)
    if kind == "sentence":
        return None
    asked = set(bm25_tokens(question))
    best: tuple[int, str] | None = None
    for sentence in split_sentences(text):
        shared = len(asked & set(bm25_tokens(sentence)))
        span = extract_span(question, sentence, kind) if shared >= QUESTION_TERMS and (best is None or shared > best[0]) else None
        if span:
            best = (shared, span)
    if best is None:
        return None
    span = best[1]
    if kind == "date":
        dates = find_dates(span)
        year = re.search(r"\d{4}", dates[0].iso if dates else span)
        return year.group() if year else normalize_text(span)
    number = NUMBER.search(span) if kind == "number" else None
    value = parse_number(number.group("number")) if number and number.group("number") else None
    return format_number(value) if value is not None else normalize_text(span)


def question_conflicts(kb: Dataset, questions: Sequence[str], *, depth: int = QUESTION_DEPTH,
                       reporter: Reporter | None = None) -> list[ConflictCandidate]:
    """Pairs of documents among the BM25 top ``depth`` of one question whose answers to it differ
    (:func:`answer_value`), reason ``question:N`` (N: the question's index in ``questions``), ordered as
    :func:`find_conflicts` orders them."""
    from tuner.golden._pool import _pools
    from tuner.retrieval import RetrievalPipeline

    if not questions:
        return []
    corpus = {doc.doc_id: doc for doc in kb.corpus}
    pipeline = RetrievalPipeline(_keyed(kb), reporter=reporter or SilentReporter())
    found: dict[tuple[str, str], ConflictCandidate] = {}
    for number, (question, pool) in enumerate(zip(questions, _pools(pipeline, questions, 4 * depth, ("bm25",), scored_only=True))):
        read = list(dict.fromkeys(entry["doc_id"] for entry in pool))[:depth]
        answers = {doc_id: value for doc_id in read if (value := answer_value(question, corpus[doc_id].text)) is not None}
        for a, b in combinations(sorted(answers), 2):
            if answers[a] == answers[b] or (a, b) in found:
                continue
            date_a, date_b = (str(corpus[d].metadata.get("date") or "") for d in (a, b))
            dated = bool(date_a and date_b and date_a != date_b)
            old, new = (b, a) if dated and date_b < date_a else (a, b)
            found[(a, b)] = ConflictCandidate(old, new, (answers[old],), (answers[new],), f"question:{number}", dated)
    return sorted(found.values(), key=lambda c: (-len(c.wrong_values), c.doc_id, c.conflicts_with))


def _keyed(kb: Dataset) -> Dataset:
    """``kb`` with a content hash: one built in memory has none, and its chunks are cached under a key of its own."""
    if kb.content_hash:
        return kb
    digest = hashlib.sha256(json.dumps([(d.doc_id, d.title, d.text) for d in kb.corpus], ensure_ascii=False).encode()).hexdigest()
    return replace(kb, content_hash=digest)


def family_summary(candidates: list[ConflictCandidate], kb: Dataset) -> list[tuple[str, int, int]]:
    """``(label, pairs, disagreeing values)`` per version family in conflict, worst (most values) first; the label is
    ``family NAME`` for a family of two or more documents, else ``document DOC_ID`` (the older document of the pairs):
    a family inferred from one file's name is no family."""
    corpus = {doc.doc_id: doc for doc in kb.corpus}
    sizes: dict[str, int] = {}
    for doc in kb.corpus:
        family = doc.metadata.get("family")
        if isinstance(family, str) and family:
            sizes[family] = sizes.get(family, 0) + 1
    totals: dict[str, list[int]] = {}
    for candidate in candidates:
        family = str(corpus[candidate.doc_id].metadata.get("family") or "")
        label = f"family {family}" if sizes.get(family, 0) > 1 else f"document {candidate.doc_id}"
        entry = totals.setdefault(label, [0, 0])
        entry[0] += 1
        entry[1] += len(candidate.wrong_values)
    return sorted(((f, p, v) for f, (p, v) in totals.items()), key=lambda item: (-item[2], -item[1], item[0]))
