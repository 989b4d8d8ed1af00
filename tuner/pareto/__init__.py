"""Front (trial record → **front** → report/export): Pareto fronts with uncertainty: exact and ε-dominance, ties within
the noise floor, hypervolume, pick rules.

Every function is pure (numpy only); see docs/report.md for how to read ε-ties.
"""

from __future__ import annotations

from tuner.errors import PickUnmet
from tuner.pareto._dominance import epsilon_front, front_entries, pareto_front, tie_groups, ties_of
from tuner.pareto._hypervolume import (
    DEFAULT_REFERENCE,
    default_reference,
    hypervolume,
    hypervolume_2d,
    hypervolume_history,
)
from tuner.pareto._pick import PICK_RULES, PickRule, cheapest, knee, min_delta, pick, runner_up
from tuner.objectives import CONTEXT_WORDS, DELTA, RECALL, Direction
from tuner.pareto._types import FrontEntry, PairedMargins, Point

__all__ = [
    "CONTEXT_WORDS",
    "DEFAULT_REFERENCE",
    "DELTA",
    "PICK_RULES",
    "RECALL",
    "Direction",
    "FrontEntry",
    "PairedMargins",
    "PickRule",
    "PickUnmet",
    "Point",
    "cheapest",
    "default_reference",
    "epsilon_front",
    "front_entries",
    "hypervolume",
    "hypervolume_2d",
    "hypervolume_history",
    "knee",
    "min_delta",
    "pareto_front",
    "pick",
    "runner_up",
    "tie_groups",
    "ties_of",
]
