"""Answers (variants → **answers** → verdicts): an offline stand-in for an LLM that reads the context sentences
best matching the question (and, with ``reader: span``, the typed span in the best one the question asks for).

This is NOT a model of any particular LLM. It exists so that demos, tests and retrieval-side
comparisons run without an endpoint, while keeping the two behaviours that make injected chunks matter:
it adopts whatever on-topic sentence it is handed (a conflicting chunk that matches the question
better wins, as with real models), and it is swayed by where a passage sits in the context.
With ``reader: span`` it commits to one value, like a model asked for a short answer: it answers a
date, number or name question with that span of the best sentence (see :mod:`tuner.generation._span`);
``reader: sentence`` (the default) answers with at most two whole sentences.
Use an LLM generator for any claim about how a deployed model behaves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence, Set
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import Field

from tuner.cache import content_key
from tuner.embedding import Encoder
from tuner.generation._base import ABSTAIN, Answer
from tuner.generation._span import answer_type, extract_span, question_parts
from tuner.llm import RequestCount
from tuner.backends import BackendResources
from tuner.settings import DEFAULT_EMBEDDING_MODEL
from tuner.strict import StrictModel
from tuner.text import bm25_tokens, split_sentences


@lru_cache(maxsize=65536)  # every trial reads sentences that repeat across trials (Chinese ones go through the segmenter)
def _terms(text: str) -> frozenset[str]:
    """The distinct BM25 terms of ``text``."""
    return frozenset(bm25_tokens(text))


def _idf(terms: Set[str], sentences: Sequence[Set[str]]) -> dict[str, float]:
    """idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)) of each term, N = len(sentences), n_t = sentences holding t."""
    count = len(sentences)
    return {t: math.log(1 + (count - n + 0.5) / (n + 0.5)) for t in terms for n in [sum(t in s for s in sentences)]}


def position_bonus(index: int, count: int, primacy: float, recency: float) -> float:
    """Score bonus of the context at ``index`` (0-based) among ``count``: a U-shaped position prior.

    bonus(i, n) = primacy · (1 − i/(n−1)) + recency · [i = n−1]   (for n = 1: primacy + recency)

    The first passage gets the full primacy bonus, decaying linearly to 0 at the last one, which
    gets the recency bonus instead: passages in the middle are favoured least, the "lost in the
    middle" pattern reported for long-context LLMs. Set both to 0 for an order-blind generator.
    """
    if count <= 1:
        return primacy + recency
    return primacy * (1.0 - index / (count - 1)) + (recency if index == count - 1 else 0.0)


class ExtractiveGeneratorConfig(StrictModel):
    """``generator: {backend: extractive}`` (the default).

    ``similarity_floor``: abstain ("I don't know.") when no sentence has a cosine similarity to the
    question at least this high. ``primacy_bonus``/``recency_bonus``: see :func:`position_bonus`.
    ``reader``: both readers answer each part of the question (:func:`question_parts`) on its own,
    from its best sentence and, when more are allowed, the next best of the same context (one source
    per part, see :meth:`ExtractiveGenerator._choose`). ``sentence`` (default) answers with those
    sentences, ``max_sentences`` shared among the parts (at least one each); ``span`` with the
    date / number / name span that the part asks for, nearest the question's words
    (:func:`extract_span`), or, when it asks for none or the sentence holds none, the
    ``span_fallback_sentences`` best sentences, shared the same way.
    ``word_match``: weight of the idf-weighted share of the question's words a sentence holds in its
    score (see :meth:`ExtractiveGenerator.score`), so the sentence that names what the question asks
    about wins over one that is merely on topic, and an English embedder still finds it for a Chinese
    question. ``type_match``: score bonus of a sentence that holds a date / number / name when the
    question asks for one (:func:`answer_type`). Defaults (``max_sentences`` 2, ``word_match`` 0.6,
    ``type_match`` 0) were chosen on the demo and demo-zh datasets only; ConflictNQ stays held out
    (bench/reader.py, bench/HISTORY.md "Offline reader").
    ``temperature`` > 0 samples among the ``sample_pool`` best sentences with probability
    ∝ exp(score / temperature), using an RNG seeded from ``seed`` and the input, so a run is
    reproducible and a different ``seed`` is a new sample.
    """

    backend: Literal["extractive"] = "extractive"
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    similarity_floor: float = Field(0.30, ge=-1.0, le=1.0)
    primacy_bonus: float = Field(0.03, ge=0.0, le=1.0)
    recency_bonus: float = Field(0.02, ge=0.0, le=1.0)
    reader: Literal["span", "sentence"] = "sentence"
    span_fallback_sentences: int = Field(2, ge=1, le=2)
    word_match: float = Field(0.6, ge=0.0, le=1.0)
    type_match: float = Field(0.0, ge=0.0, le=1.0)
    max_sentences: int = Field(2, ge=1, le=20)
    temperature: float = Field(0.0, ge=0.0, le=10.0)
    seed: int = 0
    sample_pool: int = Field(5, ge=1, le=100)


@dataclass(frozen=True)
class ScoredSentence:
    text: str
    context_index: int
    similarity: float
    score: float


class ExtractiveGenerator:
    """Embed the question and every context sentence; answer each question part with the best-scored sentence
    (cosine + position bonus + question-word match, see :meth:`score`) and the next best of its context."""

    name = "extractive"
    concurrency = 1

    def __init__(self, config: ExtractiveGeneratorConfig, encoder: Encoder) -> None:
        self.config = config
        self.encoder = encoder
        self.requests_made = RequestCount()

    def score(self, question: str, contexts: Sequence[str]) -> list[ScoredSentence]:
        """Every distinct sentence, best first (ties keep context order); a repeated sentence keeps its best score.

        score = cosine(question, sentence) + position bonus + word_match · share + type_match · [typed], where
        share = Σ_{t ∈ Q ∩ S} idf(t) / Σ_{t ∈ Q} idf(t) over the BM25 terms Q of the question and S of the sentence,
        idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)) with N the distinct sentences of the contexts and n_t
        those holding t (words every sentence shares count little), and typed = the question asks for a date,
        number or name (:func:`answer_type`) and the sentence holds one it does not repeat (:func:`extract_span`).
        The similarity floor applies to the cosine alone.
        """
        located = [(s, i) for i, text in enumerate(contexts) for s in split_sentences(text)]
        if not located:
            return []
        vectors = self.encoder.encode([question, *(s for s, _ in located)])
        similarities = vectors[1:] @ vectors[0]
        words = {text: _terms(text) for text, _ in located}
        idf = _idf(_terms(question), list(words.values()))
        kind = answer_type(question)
        best: dict[str, ScoredSentence] = {}
        for (text, index), similarity in zip(located, similarities):
            bonus = position_bonus(index, len(contexts), self.config.primacy_bonus, self.config.recency_bonus)
            if idf and self.config.word_match:
                bonus += self.config.word_match * sum(w for t, w in idf.items() if t in words[text]) / sum(idf.values())
            if self.config.type_match and extract_span(question, text, kind) is not None:
                bonus += self.config.type_match
            scored = ScoredSentence(text, index, float(similarity), float(similarity) + bonus)
            if text not in best or scored.score > best[text].score:
                best[text] = scored
        return sorted(best.values(), key=lambda s: -s.score)

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        self.requests_made.add()
        parts = question_parts(question)
        size = self.config.max_sentences if self.config.reader == "sentence" else self.config.span_fallback_sentences
        pieces = [self._read(part, contexts, max(1, size // len(parts))) for part in parts]
        answer = "; ".join(dict.fromkeys(p for p in pieces if p))
        return Answer(answer or ABSTAIN)

    def _read(self, question: str, contexts: Sequence[str], sentences: int) -> str:
        """The answer to one part: with ``reader: span`` the typed span of its best sentence, else (or when
        there is none) its ``sentences`` best sentences ("" if none)."""
        chosen = self._choose(question, contexts, sentences)
        if not chosen:
            return ""
        span = extract_span(question, chosen[0].text, answer_type(question)) if self.config.reader == "span" else None
        return span if span is not None else " ".join(s.text for s in chosen)

    def _choose(self, question: str, contexts: Sequence[str], size: int) -> list[ScoredSentence]:
        """Up to ``size`` sentences at or above the similarity floor, all from one context: the best (or, when
        temperature > 0, the best-scored of a sample) and the next best of the same context.

        One context, so an answer commits to one source: a reader handed two passages that disagree states
        one of them, not both.
        """
        eligible = [s for s in self.score(question, contexts) if s.similarity >= self.config.similarity_floor]
        if self.config.temperature > 0 and eligible:
            eligible = self._sample(eligible[: self.config.sample_pool], size, question, contexts)
        return [s for s in eligible if s.context_index == eligible[0].context_index][:size]

    def _sample(
        self, pool: list[ScoredSentence], size: int, question: str, contexts: Sequence[str]
    ) -> list[ScoredSentence]:
        """``size`` sentences drawn without replacement ∝ exp(score / temperature), best-scored first."""
        # Seeded from the input too, so the draw does not depend on call order or concurrency.
        seed = int(content_key(self.config.seed, question, list(contexts))[:16], 16)
        rng = np.random.default_rng(seed)
        scores = np.array([s.score for s in pool]) / self.config.temperature
        weights = np.exp(scores - scores.max())
        picks = rng.choice(len(pool), size=min(size, len(pool)), replace=False, p=weights / weights.sum())
        return [pool[i] for i in sorted(picks)]


def build_extractive(config: ExtractiveGeneratorConfig, resources: BackendResources) -> ExtractiveGenerator:
    encoder = resources.encoder if resources.encoder is not None else resources.embeddings.encoder(config.embedding_model)
    return ExtractiveGenerator(config, encoder)
