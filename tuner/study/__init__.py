"""Tuning studies: study files, search spaces, the trial objective with noise-floor-aware pruning, runs."""

from tuner.study._config import OBJECTIVES, LoadedStudy, StudyConfig, load_study_file
from tuner.study._front import directions_of, points_of, study_front
from tuner.study._pruning import TrialProfile, should_prune
from tuner.study._run import StudyRun, case_order, load_study, open_storage, run_study, study_summary
from tuner.study._samplers import SAMPLERS, build_sampler
from tuner.study._space import SearchSpace, load_search_space

__all__ = [
    "OBJECTIVES",
    "SAMPLERS",
    "LoadedStudy",
    "SearchSpace",
    "StudyConfig",
    "StudyRun",
    "TrialProfile",
    "build_sampler",
    "case_order",
    "directions_of",
    "load_search_space",
    "load_study",
    "load_study_file",
    "open_storage",
    "points_of",
    "run_study",
    "should_prune",
    "study_front",
    "study_summary",
]
