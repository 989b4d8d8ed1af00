"""Stress (ranking → answers → verdicts → **stress matrix**): ``tuner stress``, accuracy per corruption type × severity,
from one index.

Conditions are metadata views of a single chunk table — ``clean``, ``unfiltered`` (the mixed index)
and each (kind, severity) of the dataset's conflicts on its own — so differences come from the
content, not from building different indexes. Plus the position effect of the same injected
conflicts at the front, middle and end of the context. See docs/gate.md.
"""

from tuner.stress._evaluate import (
    CLEAN,
    POSITIONS,
    UNFILTERED,
    UNFILTERED_NOTE,
    CaseResult,
    Condition,
    ConditionResult,
    PositionResult,
    StressEvaluator,
    StressReport,
    compare_with_clean,
    stress_conditions,
)
from tuner.stress._render import HTML_FILE, MARKDOWN_FILE, stress_html, stress_markdown, write_stress_outputs

__all__ = [
    "CLEAN",
    "HTML_FILE",
    "MARKDOWN_FILE",
    "POSITIONS",
    "UNFILTERED",
    "UNFILTERED_NOTE",
    "CaseResult",
    "Condition",
    "ConditionResult",
    "PositionResult",
    "StressEvaluator",
    "StressReport",
    "compare_with_clean",
    "stress_conditions",
    "stress_html",
    "stress_markdown",
    "write_stress_outputs",
]
