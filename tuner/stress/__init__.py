"""Stress (ranking → answers → verdicts → **stress matrix**): ``tuner stress``, the RAGStress conditions of one index.

The fifteen conditions are metadata views of a single chunk table: ``no_retrieval`` (no context),
``clean``, ``unfiltered`` (the mixed index) and each type × severity of corrupted documents on its
own, so differences come from the content, not from building different indexes; ``clean+type``
(the corpus plus one type and severity) on request. Per condition: accuracy, Δ, ρ, misled rate with
intervals; Γ between two configurations or generators; the paper's hypotheses as checks; the
position effect of the same injected conflicts. See docs/stress.md.
"""

from tuner.stress._checks import ORDER_CLAIMS, Hypotheses, StressComparison, check_hypotheses
from tuner.stress._evaluate import (
    CLEAN,
    CLEAN_PLUS,
    NO_RETRIEVAL,
    POSITIONS,
    TYPES,
    UNFILTERED,
    UNFILTERED_NOTE,
    CaseResult,
    Condition,
    ConditionResult,
    PositionResult,
    StressEvaluator,
    StressReport,
    compare_with_clean,
    matrix_pairs,
    stress_conditions,
)
from tuner.stress._metrics import (
    Difference,
    PairedTable,
    case_gamma,
    delta,
    empty_rate,
    gamma,
    gamma_with_interval,
    mean_over_severities,
    misled_rate,
    paired_table,
    severity_trend,
)
from tuner.stress._render import (
    HTML_FILE,
    JSON_FILE,
    MARKDOWN_FILE,
    stress_html,
    stress_json,
    stress_markdown,
    write_stress_outputs,
)

__all__ = [
    "CLEAN",
    "CLEAN_PLUS",
    "HTML_FILE",
    "JSON_FILE",
    "MARKDOWN_FILE",
    "NO_RETRIEVAL",
    "ORDER_CLAIMS",
    "POSITIONS",
    "TYPES",
    "UNFILTERED",
    "UNFILTERED_NOTE",
    "CaseResult",
    "Condition",
    "ConditionResult",
    "Difference",
    "Hypotheses",
    "PairedTable",
    "PositionResult",
    "StressComparison",
    "StressEvaluator",
    "StressReport",
    "case_gamma",
    "check_hypotheses",
    "compare_with_clean",
    "delta",
    "empty_rate",
    "gamma",
    "gamma_with_interval",
    "matrix_pairs",
    "mean_over_severities",
    "misled_rate",
    "paired_table",
    "severity_trend",
    "stress_conditions",
    "stress_html",
    "stress_json",
    "stress_markdown",
    "write_stress_outputs",
]
