"""Ranking (candidates → **ranking** → variants): rerankers: second-stage scores in [0, 1] for a query and candidate
passages, chosen by name.

- ``embedding-maxsim`` (default, offline, no extra weights): the passage is split into sentences and
  scored by the highest cosine similarity between the question and any one sentence (clipped to
  [0, 1]). A chunk whose single sentence answers the question outranks a chunk that is only broadly
  on topic — the precision a cross-encoder adds, approximated with the bi-encoder already loaded.
- ``cross-encoder:NAME_OR_PATH``: a sentence-transformers ``CrossEncoder`` found locally (never
  downloaded); logits are mapped to [0, 1] with a sigmoid.

``rerank_strength`` s blends the two stages: ``final = (1 − s) · first_stage + s · rerank``.
"""

from tuner.rerank._rerankers import (
    RERANKERS,
    CrossEncoderReranker,
    EmbeddingMaxSimReranker,
    Reranker,
    build_reranker,
    check_reranker_spec,
)

__all__ = ["RERANKERS", "CrossEncoderReranker", "EmbeddingMaxSimReranker", "Reranker", "build_reranker", "check_reranker_spec"]
