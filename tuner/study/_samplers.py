"""Study (search space → **sampler** → trials): Optuna samplers by the name used in study files."""

from __future__ import annotations

from collections.abc import Callable

import optuna

from tuner.study._config import SamplerConfig
from tuner.study._space import SearchSpace

SAMPLERS: dict[str, Callable[[SamplerConfig, SearchSpace], optuna.samplers.BaseSampler]] = {
    "tpe": lambda c, _s: optuna.samplers.TPESampler(seed=c.seed, **c.options),
    "nsga2": lambda c, _s: optuna.samplers.NSGAIISampler(seed=c.seed, **c.options),
    "gp": lambda c, _s: optuna.samplers.GPSampler(seed=c.seed, **c.options),
    "random": lambda c, _s: optuna.samplers.RandomSampler(seed=c.seed, **c.options),
    "grid": lambda c, s: optuna.samplers.GridSampler(s.grid(), seed=c.seed, **c.options),
}
"""Samplers by the name used in study files. TPE is multi-objective (MOTPE) when the study has several.
TPE, NSGA-II and GP read the constraints trials set with ``Trial.set_constraint`` (e.g. ``min_recall``)."""


def build_sampler(config: SamplerConfig, space: SearchSpace) -> optuna.samplers.BaseSampler:
    return SAMPLERS[config.name](config, space)
