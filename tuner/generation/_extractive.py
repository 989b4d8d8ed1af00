"""Answers (variants → **answers** → verdicts): an offline stand-in for an LLM that reads the context sentence
best matching the question (and, with ``reader: span``, the typed span in it the question asks for).

This is NOT a model of any particular LLM. It exists so that demos, tests and retrieval-side
comparisons run without an endpoint, while keeping the two behaviours that make noise matter:
it adopts whatever on-topic sentence it is handed (a conflicting chunk that matches the question
better wins, as with real models), and it is swayed by where a passage sits in the context.
With ``reader: span`` it commits to one value, like a model asked for a short answer: it answers a
date, number or name question with that span of the best sentence (see :mod:`tuner.generation._span`);
``reader: sentence`` (the default) answers with whole sentences.
Use an LLM generator for any claim about how a deployed model behaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tuner.cache import content_key
from tuner.embedding import Encoder
from tuner.generation._base import ABSTAIN, Answer
from tuner.generation._span import answer_type, extract_span, question_parts
from tuner.llm import BackendResources, RequestCount
from tuner.settings import DEFAULT_EMBEDDING_MODEL
from tuner.text import bm25_tokens, split_sentences

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


class ExtractiveGeneratorConfig(BaseModel):
    """``generator: {backend: extractive}`` (the default).

    ``similarity_floor``: abstain ("I don't know.") when no sentence has a cosine similarity to the
    question at least this high. ``primacy_bonus``/``recency_bonus``: see :func:`position_bonus`.
    ``reader``: ``span`` answers each part of the question (:func:`question_parts`) from its
    best sentence: the date / number / name span that the question asks for, nearest the question's
    words (:func:`extract_span`), or, when it asks for none or the sentence holds none, the
    ``span_fallback_sentences`` best sentences shared among the parts (at least one each);
    ``sentence`` (default) answers with the ``max_sentences`` best sentences for the whole question.
    ``word_match`` (span reader only): weight of the share of the question's words a sentence holds
    in its score (see :meth:`ExtractiveGenerator.score`), so an English embedder still finds the
    sentence that names what a Chinese question asks about.
    ``temperature`` > 0 samples among the ``sample_pool`` best sentences with probability
    ∝ exp(score / temperature), using an RNG seeded from ``seed`` and the input, so a run is
    reproducible and a different ``seed`` is a new sample.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["extractive"] = "extractive"
    embedding_model: str = DEFAULT_EMBEDDING_MODEL
    similarity_floor: float = Field(0.30, ge=-1.0, le=1.0)
    primacy_bonus: float = Field(0.03, ge=0.0, le=1.0)
    recency_bonus: float = Field(0.02, ge=0.0, le=1.0)
    reader: Literal["span", "sentence"] = "sentence"
    span_fallback_sentences: int = Field(2, ge=1, le=2)
    word_match: float = Field(0.6, ge=0.0, le=1.0)
    max_sentences: int = Field(1, ge=1, le=20)
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
    """Embed the question and every context sentence; answer with the best ``score = cosine + position bonus``."""

    name = "extractive"
    concurrency = 1

    def __init__(self, config: ExtractiveGeneratorConfig, encoder: Encoder) -> None:
        self.config = config
        self.encoder = encoder
        self.requests_made = RequestCount()

    def score(self, question: str, contexts: Sequence[str]) -> list[ScoredSentence]:
        """Every distinct sentence, best first (ties keep context order); a repeated sentence keeps its best score.

        score = cosine(question, sentence) + position bonus [+ word_match · |Q ∩ S| / |Q| with ``reader: span``,
        Q and S the BM25 terms of question and sentence]; the similarity floor applies to the cosine alone.
        """
        located = [(s, i) for i, text in enumerate(contexts) for s in split_sentences(text)]
        if not located:
            return []
        vectors = self.encoder.encode([question, *(s for s, _ in located)])
        similarities = vectors[1:] @ vectors[0]
        weight = self.config.word_match if self.config.reader == "span" else 0.0
        asked = set(bm25_tokens(question)) if weight else set()
        best: dict[str, ScoredSentence] = {}
        for (text, index), similarity in zip(located, similarities):
            bonus = position_bonus(index, len(contexts), self.config.primacy_bonus, self.config.recency_bonus)
            if asked:
                bonus += weight * len(asked.intersection(bm25_tokens(text))) / len(asked)
            scored = ScoredSentence(text, index, float(similarity), float(similarity) + bonus)
            if text not in best or scored.score > best[text].score:
                best[text] = scored
        return sorted(best.values(), key=lambda s: -s.score)

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        self.requests_made.add()
        if self.config.reader == "sentence":
            pieces = [" ".join(s.text for s in self._choose(question, contexts, self.config.max_sentences))]
        else:
            parts = question_parts(question)
            share = max(1, self.config.span_fallback_sentences // len(parts))
            pieces = [self._read(part, contexts, share) for part in parts]
        answer = "; ".join(dict.fromkeys(p for p in pieces if p))
        return Answer(answer or ABSTAIN)

    def _read(self, question: str, contexts: Sequence[str], sentences: int) -> str:
        """The typed span of the best sentence for ``question``, else its ``sentences`` best sentences ("" if none)."""
        chosen = self._choose(question, contexts, sentences)
        if not chosen:
            return ""
        span = extract_span(question, chosen[0].text, answer_type(question))
        return span if span is not None else " ".join(s.text for s in chosen)

    def _choose(self, question: str, contexts: Sequence[str], size: int) -> list[ScoredSentence]:
        """Up to ``size`` sentences at or above the similarity floor: the best, or a sample when temperature > 0."""
        eligible = [s for s in self.score(question, contexts) if s.similarity >= self.config.similarity_floor]
        if self.config.temperature > 0 and eligible:
            return self._sample(eligible[: self.config.sample_pool], size, question, contexts)
        return eligible[:size]

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
    return ExtractiveGenerator(config, resources.encoder_for(config.embedding_model))
