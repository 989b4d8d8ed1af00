"""Study (search space → **sampler** → trials): Optuna samplers by the name used in study files."""

from __future__ import annotations

import difflib
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal

import optuna
from pydantic import Field, ValidationInfo, field_validator

from tuner.study._space import SearchSpace
from tuner.strict import StrictModel

def _tpe(config: SamplerConfig, space: SearchSpace) -> optuna.samplers.BaseSampler:
    """TPE; over a conditional space multivariate TPE on the group-decomposed space (Optuna's ``multivariate=True,
    group=True``, which ``options`` may override): it models the knobs trials sample together jointly, and a knob only
    some trials sample (``hybrid_weight``) within the trials that have it, where independent TPE fits each knob alone."""
    wanted = space.conditional and config.options.get("multivariate", True) is not False
    defaults: dict[str, Any] = {"multivariate": True, "group": True} if wanted else {}
    with warnings.catch_warnings():  # both options are still marked experimental in Optuna
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=config.seed, **{**defaults, **config.options})


SAMPLER_CLASSES: dict[str, type[optuna.samplers.BaseSampler]] = {
    "tpe": optuna.samplers.TPESampler, "nsga2": optuna.samplers.NSGAIISampler, "gp": optuna.samplers.GPSampler,
    "random": optuna.samplers.RandomSampler, "grid": optuna.samplers.GridSampler,
}
_SET_BY_TUNER = ("seed", "search_space")
"""Constructor arguments tuner passes itself: ``sampler.seed``, and the grid of the search space."""


def option_problem(name: str, options: Mapping[str, Any]) -> str | None:
    """What is wrong with ``sampler.options`` for sampler ``name``, as one line naming the first bad key: a key the
    sampler's constructor does not take (a typo: ``n_startup_trial``) or one tuner sets itself; None when all is well.
    Checked when the study file is read, so ``--dry-run`` catches it and a run never starts with it.

    >>> option_problem("tpe", {"n_startup_trial": 5})
    "unknown option 'n_startup_trial' for the tpe sampler (did you mean 'n_startup_trials'?)"
    >>> option_problem("random", {"seed": 1})
    "'seed' is set by tuner: write sampler.seed"
    """
    parameters = inspect.signature(SAMPLER_CLASSES[name].__init__).parameters
    accepted = [key for key in list(parameters)[1:] if key not in _SET_BY_TUNER]
    for key in options:
        if key in _SET_BY_TUNER:
            return f"'{key}' is set by tuner" + (": write sampler.seed" if key == "seed" else " (the grid of the search space)")
        if key not in accepted:
            close = difflib.get_close_matches(str(key), accepted, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(accepted) or 'none'}"
            return f"unknown option '{key}' for the {name} sampler ({hint})"
    return None


class SamplerConfig(StrictModel):
    """``sampler:`` of a study file: the sampler by name (:data:`SAMPLERS`), its seed, its constructor's options
    (checked when the file is read: :func:`option_problem`) and conditional sampling."""

    name: Literal["tpe", "nsga2", "gp", "random", "grid"] = "tpe"
    seed: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    conditional: bool = Field(True, description="sample a knob only when the trial's other choices let it act "
                              "(tuner.settings.ACTS_WHEN) and top_k within candidate_depth; false samples every knob "
                              "on every trial")

    @field_validator("options")
    @classmethod
    def _known_options(cls, options: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        problem = option_problem(info.data["name"], options) if "name" in info.data else None
        if problem is not None:
            raise ValueError(problem)
        return options


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
