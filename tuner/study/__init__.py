"""Tuning studies (study → front → report/export): study files, search spaces, the trial objective with
noise-floor-aware pruning, runs with their workers, interrupts and storage faults, the confirmation split and the
dry-run estimate. What reads a finished study (its records, the front, the trials table) is ``tuner.front``."""

from tuner.objectives import OBJECTIVES
from tuner.study._config import ConfirmConfig, LoadedStudy, PruningConfig, StudyConfig, load_study_file
from tuner.study._confirm import MIN_CONFIRM_CASES, confirmation_split, split_cases
from tuner.study._dry_run import dry_run
from tuner.study._interrupt import InterruptGuard
from tuner.study._objective import trial_profile
from tuner.study._pruning import Look, TrialProfile, plan_looks, should_prune
from tuner.study._faults import storage_fault
from tuner.study._run import FAULT_RESUME, StudyRun, case_order, load_study, open_storage, run_study
from tuner.study._samplers import SAMPLERS, build_sampler
from tuner.study._space import SearchSpace, load_search_space

__all__ = [
    "FAULT_RESUME",
    "MIN_CONFIRM_CASES",
    "OBJECTIVES",
    "SAMPLERS",
    "ConfirmConfig",
    "InterruptGuard",
    "LoadedStudy",
    "Look",
    "PruningConfig",
    "SearchSpace",
    "StudyConfig",
    "StudyRun",
    "TrialProfile",
    "build_sampler",
    "case_order",
    "confirmation_split",
    "dry_run",
    "load_search_space",
    "load_study",
    "load_study_file",
    "open_storage",
    "plan_looks",
    "run_study",
    "should_prune",
    "split_cases",
    "storage_fault",
    "trial_profile",
]
