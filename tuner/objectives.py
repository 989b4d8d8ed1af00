"""The objectives a study optimizes (study → trial record → front): their names and directions, in one place.

Every module that stores, reads or prints an objective uses these names; a study stores the list it
optimizes in its ``objectives`` user attribute, in the order of ``trial.values``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

Direction = Literal["maximize", "minimize"]

RECALL: Final = "recall_at_k"
"""recall@k on the clean index: deterministic, from labeled relevant documents (maximize)."""
DELTA: Final = "v3_delta_faithful"
"""Δfaithful of the v3 (relevant-hard, conflicting) variant against the clean baseline (minimize)."""
DELTA_CORRECT: Final = "v3_delta_correct"
"""Δcorrect of the v3 variant: the relative loss of *correct* keypoints (stated or not contradicted), the
lenient counterpart of DELTA; it moves only when the conflict makes answers wrong, not when they say less
(minimize)."""
ROBUSTNESS_OBJECTIVES: dict[str, Direction] = {DELTA: "minimize", DELTA_CORRECT: "minimize"}
"""The robustness objectives a study may optimize beside RECALL (which one it is, its name says)."""
EXPOSURE: Final = "conflict_exposure"
"""The share of cases whose final context over the index with its conflicting documents holds a conflicting chunk:
exact, from retrieval alone, like RECALL (minimize). The part of v3 Δ a retrieval setting acts on directly; a study
that optimizes it still measures Δfaithful beside it."""
SECOND_OBJECTIVES: dict[str, Direction] = {**ROBUSTNESS_OBJECTIVES, EXPOSURE: "minimize"}
"""What a study may optimize second, after RECALL."""
CONTEXT_WORDS: Final = "context_words"
"""Mean words of context handed to the generator per case: an optional cost objective (minimize)."""

OBJECTIVES: dict[str, Direction] = {RECALL: "maximize", **SECOND_OBJECTIVES, CONTEXT_WORDS: "minimize"}
"""Objectives a study can optimize, with their direction: RECALL first, then one of SECOND_OBJECTIVES, then
optionally CONTEXT_WORDS."""
REQUIRED: Final = (RECALL, DELTA)
"""The objectives of a study file that names none."""


def robustness_objective(names: Iterable[str]) -> str:
    """The robustness objective among a study's objectives ``names`` (one of SECOND_OBJECTIVES: a Δ, or conflict
    exposure): the axis pick rules, pick notes and confirmation trade against RECALL, named rather than taken from its
    position.

    >>> robustness_objective([RECALL, DELTA_CORRECT, CONTEXT_WORDS]), robustness_objective([RECALL, EXPOSURE])
    ('v3_delta_correct', 'conflict_exposure')
    """
    found = [name for name in names if name in SECOND_OBJECTIVES]
    if len(found) != 1:
        raise ValueError(f"a study optimizes one robustness objective ({', '.join(SECOND_OBJECTIVES)}), got {found}")
    return found[0]
