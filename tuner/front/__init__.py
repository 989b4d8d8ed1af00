"""Front (study → **front** → report/export): what reads a study's records: the study and trial records (the typed
form of Optuna's user attributes), the summary by outcome, the Pareto front with paired ε-ties, the front's figures
on the confirmation cases, the pick notes and label caveats, and the trials table. Nothing here evaluates anything:
running a study is ``tuner.study``."""

from __future__ import annotations

from tuner.front._confirm import confirmed_entries, held_out_record
from tuner.front._front import directions_of, entry_json, feasible, points_of, study_front, study_margins, trial_point
from tuner.front._honest import pick_notes
from tuner.front._labels import entry_caveat, front_labels, study_labels, trial_caveats
from tuner.front._paired import NeighbourComparison, compare_trials, neighbour_comparisons
from tuner.front._record import PruneEvidence, StudyRecord, TrialCalls, TrialRecord
from tuner.front._summary import StudySummary, SummaryTracker, study_summary, unscored_reason
from tuner.front._table import trial_rows

__all__ = [
    "NeighbourComparison",
    "PruneEvidence",
    "StudyRecord",
    "StudySummary",
    "SummaryTracker",
    "TrialCalls",
    "TrialRecord",
    "compare_trials",
    "confirmed_entries",
    "directions_of",
    "entry_caveat",
    "entry_json",
    "feasible",
    "front_labels",
    "held_out_record",
    "neighbour_comparisons",
    "pick_notes",
    "points_of",
    "study_front",
    "study_labels",
    "study_margins",
    "study_summary",
    "trial_caveats",
    "trial_point",
    "trial_rows",
    "unscored_reason",
]
