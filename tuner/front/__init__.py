"""Front (study → **front** → report/export): what reads a study's records: the study and trial records (the typed
form of Optuna's user attributes), the summary by outcome, the Pareto front with paired ε-ties, the front's figures
on the confirmation cases, the pick notes and label caveats, and the trials table. Nothing here evaluates anything:
running a study is ``tuner.study``."""

from __future__ import annotations

from tuner.front._confirm import confirmed_entries, optimism
from tuner.front._front import (
    directions_of,
    entry_json,
    feasible,
    front_trials,
    points_of,
    study_comparisons,
    study_front,
    study_margins,
    trial_point,
)
from tuner.front._honest import compared_figures, pick_notes, runner_up_comparison
from tuner.front._labels import entry_caveat, front_labels, study_labels, trial_caveats
from tuner.front._paired import NeighbourComparison, PairedComparisons, separating_cases
from tuner.front._record import (
    TRIAL_COLUMNS, Column, Confirmation, PruneEvidence, StudyRecord, TrialCalls, TrialRecord, shown_columns,
)
from tuner.front._summary import StudySummary, SummaryTracker, study_summary, unscored_reason
from tuner.front._table import trial_rows
from tuner.front._texts import REPORT_LANGUAGES, REPORT_TEXTS, ReportLanguage, report_texts

__all__ = [
    "REPORT_LANGUAGES",
    "REPORT_TEXTS",
    "TRIAL_COLUMNS",
    "Column",
    "Confirmation",
    "NeighbourComparison",
    "PairedComparisons",
    "PruneEvidence",
    "ReportLanguage",
    "StudyRecord",
    "StudySummary",
    "SummaryTracker",
    "TrialCalls",
    "TrialRecord",
    "compared_figures",
    "confirmed_entries",
    "directions_of",
    "entry_caveat",
    "entry_json",
    "feasible",
    "front_trials",
    "front_labels",
    "optimism",
    "pick_notes",
    "points_of",
    "report_texts",
    "runner_up_comparison",
    "separating_cases",
    "shown_columns",
    "study_comparisons",
    "study_front",
    "study_labels",
    "study_margins",
    "study_summary",
    "trial_caveats",
    "trial_point",
    "trial_rows",
    "unscored_reason",
]
