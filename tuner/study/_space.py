"""Study (**study file** → trials → trial record): search spaces: YAML files mapping retrieval settings to Optuna
distributions, sampled define-by-run so that a trial samples only the knobs its other choices let act."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import optuna
from pydantic import Field, TypeAdapter, ValidationError, model_validator

from tuner.errors import UserError, describe_validation_error
from tuner.io import read_yaml_mapping
from tuner.settings import AT_MOST, DECIDERS, RetrievalSettings, acts
from tuner.strict import StrictModel


class IntParam(StrictModel):
    type: Literal["int"]
    low: int
    high: int
    step: int = 1
    log: bool = False

    @model_validator(mode="after")
    def _check(self) -> IntParam:
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) > high ({self.high})")
        if self.log and self.step != 1:
            raise ValueError("log and step cannot be combined")
        return self

    def suggest(self, trial: optuna.Trial, name: str) -> Any:
        return trial.suggest_int(name, self.low, self.high, step=self.step, log=self.log)

    def grid(self) -> list[Any]:
        return list(range(self.low, self.high + 1, self.step))


class FloatParam(StrictModel):
    type: Literal["float"]
    low: float
    high: float
    step: float | None = None
    log: bool = False

    @model_validator(mode="after")
    def _check(self) -> FloatParam:
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) > high ({self.high})")
        if self.log and (self.step is not None or self.low <= 0):
            raise ValueError("log needs low > 0 and no step")
        return self

    def suggest(self, trial: optuna.Trial, name: str) -> Any:
        return trial.suggest_float(name, self.low, self.high, step=self.step, log=self.log)

    def grid(self) -> list[Any]:
        if self.step is None:
            raise UserError("a grid search needs a step on every float parameter")
        count = int(round((self.high - self.low) / self.step))
        return [round(self.low + i * self.step, 10) for i in range(count + 1)]


class CategoricalParam(StrictModel):
    type: Literal["categorical"]
    choices: list[Union[int, float, str, bool]] = Field(min_length=1)

    def suggest(self, trial: optuna.Trial, name: str) -> Any:
        return trial.suggest_categorical(name, self.choices)

    def grid(self) -> list[Any]:
        return list(self.choices)


Param = Annotated[Union[IntParam, FloatParam, CategoricalParam], Field(discriminator="type")]
_PARAM: TypeAdapter[Any] = TypeAdapter(Param)
AnyParam = IntParam | FloatParam | CategoricalParam



def extremes(param: AnyParam) -> list[Any]:
    """The values that decide whether a distribution fits a setting: every choice, or its low and high."""
    return list(param.choices) if isinstance(param, CategoricalParam) else [param.low, param.high]


class SearchSpace:
    """Named parameters (retrieval settings fields) with their distributions, sampled define-by-run.

    ``conditional`` (the default): a trial samples a knob only when its other choices let it act
    (:data:`tuner.settings.ACTS_WHEN`: ``hybrid_weight`` only for hybrid with fusion blend, ``reranker`` only with
    ``rerank_strength`` > 0, ...), and ``top_k`` after ``candidate_depth`` with its ``high`` clipped to it, so no trial
    can end on ``top_k`` > ``candidate_depth``. A knob a trial does not sample is not one of its parameters; its
    settings take the study's value for it. ``conditional=False`` samples every knob on every trial (the behaviour
    before issue 29 §4, kept for comparison: ``sampler: {conditional: false}``)."""

    def __init__(self, params: dict[str, AnyParam], source: str, conditional: bool = True) -> None:
        self.params = params
        self.source = source
        self.conditional = conditional

    @property
    def order(self) -> list[str]:
        """The order parameters are sampled in: the deciders first (:data:`tuner.settings.DECIDERS`), then the file's order."""
        if not self.conditional:
            return list(self.params)
        return [name for name in DECIDERS if name in self.params] + [n for n in self.params if n not in DECIDERS]

    def effective(self, name: str, values: Mapping[str, Any]) -> AnyParam | None:
        """The distribution ``name`` is sampled from once the settings decided before it are ``values`` (settings by
        name, the study's base under the ones sampled so far); None when it cannot act there."""
        param = self.params[name]
        if not self.conditional:
            return param
        if not acts(name, values):
            return None
        bound = AT_MOST.get(name)
        if bound is not None and isinstance(param, IntParam) and param.high > values[bound]:
            high = param.low + (int(values[bound]) - param.low) // param.step * param.step
            return param.model_copy(update={"high": max(high, param.low)})
        return param

    def sample(self, draw: Callable[[str, AnyParam], Any], base: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters of one configuration: ``draw(name, distribution)`` gives each value, in :attr:`order`, over
        ``base`` (the settings every trial starts from)."""
        values, drawn = dict(base), {}
        for name in self.order:
            param = self.effective(name, values)
            if param is None:
                continue
            value = draw(name, param)
            bound = AT_MOST.get(name)
            if self.conditional and bound is not None and isinstance(value, int) and not isinstance(value, bool):
                value = min(value, int(values[bound]))  # the grid sampler proposes its grid values past the clipped high
            values[name] = drawn[name] = value
        return drawn

    def suggest(self, trial: optuna.Trial, base: Mapping[str, Any]) -> dict[str, Any]:
        """Sample ``trial``'s parameters (see :meth:`sample`)."""
        return self.sample(lambda name, param: param.suggest(trial, name), base)

    def corners(self, base: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], str | None, Any]]:
        """What the up-front check validates, walked as the sampler walks the space: per combination of the deciders'
        extremes (``(values, None, None)``, or with the bounded knob at its lowest), and per other active knob's
        extreme there (``(values, name, value)``). Settings validate each knob alone except through the deciders
        (``top_k`` ≤ ``candidate_depth``), so this covers every value a trial can get."""
        deciders = [name for name in self.order if name in DECIDERS]

        def walk(index: int, values: dict[str, Any]) -> Iterator[dict[str, Any]]:
            if index == len(deciders):
                yield values
                return
            param = self.effective(deciders[index], values)
            for value in [values[deciders[index]]] if param is None else extremes(param):
                yield from walk(index + 1, {**values, deciders[index]: value})

        for decided in walk(0, dict(base)):
            active = {name: param for name in self.order if name not in deciders
                      and (param := self.effective(name, decided)) is not None}
            # a bounded knob (top_k) is valid only with its bound: the combination is checked at its lowest value
            bounded = {name: extremes(param)[0] for name, param in active.items() if name in AT_MOST}
            values = {**decided, **bounded}
            yield values, *next(iter(bounded.items()), (None, None))
            for name, param in active.items():
                for value in extremes(param):
                    yield {**values, name: value}, name, value

    def grid(self) -> dict[str, list[Any]]:
        return {name: p.grid() for name, p in self.params.items()}


def load_search_space(path: Path, conditional: bool = True) -> SearchSpace:
    """Read and validate a search space; every key must be a retrieval setting, every value a distribution."""
    data = read_yaml_mapping(path, "a search space")
    if not data:
        raise UserError(f"{path}: a search space is a non-empty mapping of setting name to distribution")
    params: dict[str, AnyParam] = {}
    for name, spec in data.items():
        if name not in RetrievalSettings.model_fields:
            raise UserError(f"{path}: {name}: not a retrieval setting (known: {', '.join(RetrievalSettings.model_fields)})")
        try:
            params[name] = _PARAM.validate_python(spec)
        except ValidationError as exc:
            raise UserError(f"{path}: {name}.{describe_validation_error(exc, skip=1)}") from None
    return SearchSpace(params, str(path), conditional)
