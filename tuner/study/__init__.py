"""Tuning studies (trial record → front → report/export): study files, search spaces, the trial objective with
noise-floor-aware pruning, the trial and study records, runs, and what a run writes when it ends."""

from tuner.objectives import OBJECTIVES
from tuner.study._config import ConfirmConfig, LoadedStudy, PruningConfig, StudyConfig, load_study_file
from tuner.study._confirm import MIN_CONFIRM_CASES, confirmation_split, confirmed_entries, split_cases
from tuner.study._finish import dry_run, finish, trial_document
from tuner.study._honest import pick_notes
from tuner.study._interrupt import InterruptGuard
from tuner.study._labels import entry_caveat, front_labels, study_labels, trial_caveats
from tuner.study._front import directions_of, entry_json, feasible, points_of, study_front, study_margins, trial_point
from tuner.study._paired import NeighbourComparison, compare_trials, neighbour_comparisons
from tuner.study._objective import trial_profile
from tuner.study._pruning import Look, PruneEvidence, TrialProfile, plan_looks, should_prune
from tuner.study._record import StudyRecord, TrialCalls, TrialRecord
from tuner.study._faults import storage_fault
from tuner.study._run import FAULT_RESUME, StudyRun, case_order, load_study, open_storage, run_study
from tuner.study._samplers import SAMPLERS, build_sampler
from tuner.study._space import SearchSpace, load_search_space
from tuner.study._summary import StudySummary, study_summary
from tuner.study._table import trial_rows

__all__ = [
    "FAULT_RESUME",
    "MIN_CONFIRM_CASES",
    "OBJECTIVES",
    "SAMPLERS",
    "ConfirmConfig",
    "InterruptGuard",
    "LoadedStudy",
    "NeighbourComparison",
    "Look",
    "PruneEvidence",
    "PruningConfig",
    "SearchSpace",
    "StudyConfig",
    "StudyRecord",
    "StudyRun",
    "StudySummary",
    "TrialCalls",
    "TrialProfile",
    "TrialRecord",
    "build_sampler",
    "case_order",
    "compare_trials",
    "confirmation_split",
    "confirmed_entries",
    "directions_of",
    "dry_run",
    "entry_caveat",
    "entry_json",
    "feasible",
    "finish",
    "front_labels",
    "load_search_space",
    "load_study",
    "load_study_file",
    "neighbour_comparisons",
    "open_storage",
    "pick_notes",
    "plan_looks",
    "points_of",
    "run_study",
    "should_prune",
    "split_cases",
    "storage_fault",
    "study_front",
    "study_labels",
    "study_margins",
    "study_summary",
    "trial_caveats",
    "trial_document",
    "trial_point",
    "trial_profile",
    "trial_rows",
]
