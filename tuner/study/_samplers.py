from __future__ import annotations

from collections.abc import Callable

import optuna

from tuner.study._config import SamplerConfig
from tuner.study._space import SearchSpace

Constraints = Callable[[optuna.trial.FrozenTrial], list[float]] | None


def _constraint_values(trial: optuna.trial.FrozenTrial) -> list[float]:
    return list(trial.user_attrs.get("constraint", [0.0]))


SAMPLERS: dict[str, Callable[[SamplerConfig, SearchSpace, Constraints], optuna.samplers.BaseSampler]] = {
    "tpe": lambda c, _s, cons: optuna.samplers.TPESampler(seed=c.seed, constraints_func=cons, **c.options),
    "nsga2": lambda c, _s, cons: optuna.samplers.NSGAIISampler(seed=c.seed, constraints_func=cons, **c.options),
    "gp": lambda c, _s, cons: optuna.samplers.GPSampler(seed=c.seed, constraints_func=cons, **c.options),
    "random": lambda c, _s, _cons: optuna.samplers.RandomSampler(seed=c.seed, **c.options),
    "grid": lambda c, s, _cons: optuna.samplers.GridSampler(s.grid(), seed=c.seed, **c.options),
}
"""Samplers by the name used in study files. TPE is multi-objective (MOTPE) when the study has several."""


def build_sampler(config: SamplerConfig, space: SearchSpace, constrained: bool) -> optuna.samplers.BaseSampler:
    return SAMPLERS[config.name](config, space, _constraint_values if constrained else None)


def grid_size(space: SearchSpace) -> int:
    size = 1
    for values in space.grid().values():
        size *= len(values)
    return size


