"""Ranking (candidates → **ranking** → variants): the reranker interface, its implementations and their registry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from tuner.embedding import CachedEncoder, quiet_model_loading, resolve_model_path
from tuner.errors import UserError
from tuner.progress import Task
from tuner.text import split_sentences


class Reranker(Protocol):
    model_id: str

    def prepare(self, passages: Sequence[str], task: Task | None = None) -> None:
        """Do ahead, once over every passage ``score`` will be given, the work it would otherwise repeat per query
        (``task`` advances per passage); a reranker with no such work does nothing."""
        ...

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """Scores in [0, 1], one per passage."""
        ...


class EmbeddingMaxSimReranker:
    """Max over sentences of cosine(question, sentence), with the embedding model already in use.

    Sentences are encoded like the chunks they come from (``encoder``, with its document prompt), the
    question with ``query_prompt``. The sentence vectors of every passage :meth:`prepare` (or an earlier
    :meth:`score`) saw are kept in memory, so scoring a passage again costs one product per sentence and no
    store read: a question's scoring embeds only the question."""

    def __init__(self, encoder: CachedEncoder, query_prompt: str = "") -> None:
        self._encoder = encoder
        self._query_encoder = encoder.with_prompt(query_prompt)
        self.model_id = f"embedding-maxsim:{encoder.model_id}"
        # passage → its sentences' vectors; only ever added to, so threads that score read it without a lock
        self._sentence_vectors: dict[str, np.ndarray] = {}

    def prepare(self, passages: Sequence[str], task: Task | None = None, group: int = 2048) -> None:
        """Embed the sentences of ``passages`` not prepared yet (each distinct sentence once, read from the store when
        it has them), ``group`` passages at a time, each group's sentences shortest first: the model pads a batch to
        its longest text, so batches of like lengths cost less than the mixed lengths of one query's candidates."""
        distinct = [p for p in dict.fromkeys(passages) if p not in self._sentence_vectors]
        if task is not None:
            task.advance(len(set(passages)) - len(distinct))
        for start in range(0, len(distinct), group):
            part = {passage: _sentences(passage) for passage in distinct[start : start + group]}
            sentences = sorted({s for of_passage in part.values() for s in of_passage}, key=lambda s: (len(s), s))
            vector_of = dict(zip(sentences, self._encoder.encode(sentences)))
            for passage, of_passage in part.items():
                self._sentence_vectors[passage] = np.stack([vector_of[s] for s in of_passage])
            if task is not None:
                task.advance(len(part))

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0, dtype=np.float32)
        self.prepare(passages)
        query_vector = self._query_encoder.encode([query])[0]
        best = [(self._sentence_vectors[p] @ query_vector).max() for p in passages]
        return np.asarray(best, dtype=np.float32).clip(0.0, 1.0)


def _sentences(passage: str) -> list[str]:
    """What maxsim compares a question with: the passage's sentences (the passage itself when it has none)."""
    return split_sentences(passage) or [passage]


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder loaded from a local folder or the local Hugging Face cache.

    The sigmoid is set explicitly so models whose default head returns raw logits also land in [0, 1].
    """

    def __init__(self, name: str) -> None:
        from sentence_transformers import CrossEncoder

        self.model_id = f"cross-encoder:{name}"
        quiet_model_loading()
        self._model = CrossEncoder(resolve_model_path(name), device="cpu")

    def prepare(self, passages: Sequence[str], task: Task | None = None) -> None:
        """Nothing to do ahead: a cross-encoder reads each passage together with its question."""
        if task is not None:
            task.advance(len(passages))

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0, dtype=np.float32)
        import torch

        scores = self._model.predict(
            [(query, p) for p in passages], activation_fn=torch.nn.Sigmoid(), show_progress_bar=False
        )
        scores = np.asarray(scores, dtype=np.float32)
        return scores[:, -1] if scores.ndim > 1 else scores


RERANKERS: dict[str, Callable[[str, CachedEncoder, str], Reranker]] = {
    "embedding-maxsim": lambda _arg, encoder, query_prompt: EmbeddingMaxSimReranker(encoder, query_prompt),
    "cross-encoder": lambda arg, _encoder, _query_prompt: CrossEncoderReranker(arg),
}


def check_reranker_spec(spec: str) -> None:
    """Raise ``ValueError`` unless ``spec`` is ``embedding-maxsim`` or ``cross-encoder:NAME_OR_PATH`` (a registered name,
    with the model a cross-encoder needs); ``RetrievalSettings`` runs it on every configuration it validates."""
    name, _, arg = spec.partition(":")
    if name not in RERANKERS:
        raise ValueError(f"unknown reranker '{spec}' (known: {', '.join(sorted(RERANKERS))})")
    if name == "cross-encoder" and not arg:
        raise ValueError("reranker 'cross-encoder' needs a model: cross-encoder:NAME_OR_PATH")


def build_reranker(spec: str, encoder: CachedEncoder, query_prompt: str = "") -> Reranker:
    """``embedding-maxsim`` or ``cross-encoder:NAME_OR_PATH``; ``encoder`` is the pipeline's document
    encoder (model and document prompt) and ``query_prompt`` the prompt its questions are encoded with."""
    try:
        check_reranker_spec(spec)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    name, _, arg = spec.partition(":")
    return RERANKERS[name](arg, encoder, query_prompt)
