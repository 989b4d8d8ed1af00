"""Study (search space → **sampler** → trials): Optuna samplers by the name used in study files."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import optuna

from tuner.study._config import SamplerConfig
from tuner.study._space import SearchSpace

def _tpe(config: SamplerConfig, space: SearchSpace) -> optuna.samplers.BaseSampler:
    """TPE; over a conditional space multivariate TPE on the group-decomposed space (Optuna's ``multivariate=True,
    group=True``, which ``options`` may override): it models the knobs trials sample together jointly, and a knob only
    some trials sample (``hybrid_weight``) within the trials that have it, where independent TPE fits each knob alone."""
    wanted = space.conditional and config.options.get("multivariate", True) is not False
    defaults: dict[str, Any] = {"multivariate": True, "group": True} if wanted else {}
    with warnings.catch_warnings():  # both options are still marked experimental in Optuna
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=config.seed, **{**defaults, **config.options})


SAMPLERS: dict[str, Callable[[SamplerConfig, SearchSpace], optuna.samplers.BaseSampler]] = {
    "tpe": _tpe,
    "nsga2": lambda c, _s: optuna.samplers.NSGAIISampler(seed=c.seed, **c.options),
    "gp": lambda c, _s: optuna.samplers.GPSampler(seed=c.seed, **c.options),
    "random": lambda c, _s: optuna.samplers.RandomSampler(seed=c.seed, **c.options),
    "grid": lambda c, s: optuna.samplers.GridSampler(s.grid(), seed=c.seed, **c.options),
}
"""Samplers by the name used in study files. TPE is multi-objective (MOTPE) when the study has several.
TPE, NSGA-II and GP read the constraints trials set with ``Trial.set_constraint`` (e.g. ``min_recall``)."""


def build_sampler(config: SamplerConfig, space: SearchSpace) -> optuna.samplers.BaseSampler:
    return SAMPLERS[config.name](config, space)
