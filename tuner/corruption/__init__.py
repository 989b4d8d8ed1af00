"""Conflicts (dataset → **corruption** → dataset): knowledge-base corruption: conflicting copies of relevant documents
for datasets that have none.

Four corruption types on two axes (see docs/corruption.md), each at three severities:

- semantic fidelity, actively misleading: ``factual_corruption``, ``contradiction_injection``;
- signal utility, withholding information: ``numeric_typo``, ``relevance_poisoning``.

>>> import random
>>> from tuner.dataset import Document
>>> doc = Document("d1", "The X100 costs $1,299 and ships in 3 days.")
>>> facts = CaseFacts(keypoints=(("$1,299",),))
>>> out = CORRUPTORS["factual_corruption"].corrupt(doc, facts, "subtle", random.Random(0))
>>> "$1,299" in out.text, out.wrong_values[0] in out.text
(False, True)
"""

from __future__ import annotations

from tuner.errors import CorruptionFailed
from tuner.corruption._base import CaseFacts, CorruptedDoc, Corruptor
from tuner.corruption._generate import (
    NOTHING_TO_CORRUPT,
    CorruptionRun,
    conflict_id,
    conflict_record,
    conflicts_jsonl,
    corpus_entities,
    corrupt_dataset,
    relevant_facts,
    with_wrong_answers,
    wrong_answers_by_case,
)
from tuner.corruption._perturb import SEVERITIES
from tuner.corruption._rules import ContradictionInjection, FactualCorruption, NumericTypo, RelevancePoisoning

CORRUPTORS: dict[str, Corruptor] = {
    c.kind: c for c in (FactualCorruption(), ContradictionInjection(), NumericTypo(), RelevancePoisoning())
}
"""The rule-based corruptors, keyed by the kind name written to conflicts.jsonl."""

__all__ = [
    "CORRUPTORS",
    "NOTHING_TO_CORRUPT",
    "SEVERITIES",
    "CaseFacts",
    "ContradictionInjection",
    "CorruptedDoc",
    "CorruptionFailed",
    "CorruptionRun",
    "Corruptor",
    "FactualCorruption",
    "NumericTypo",
    "RelevancePoisoning",
    "conflict_id",
    "conflict_record",
    "conflicts_jsonl",
    "corpus_entities",
    "corrupt_dataset",
    "relevant_facts",
    "with_wrong_answers",
    "wrong_answers_by_case",
]
