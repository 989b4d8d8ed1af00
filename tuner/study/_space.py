"""Study (**study file** → trials → trial record): search spaces: YAML files mapping retrieval settings to Optuna
distributions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Union

import optuna
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from tuner.errors import UserError, describe_validation_error
from tuner.io import read_yaml_mapping
from tuner.settings import RetrievalSettings


class IntParam(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
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


class FloatParam(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
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


class CategoricalParam(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["categorical"]
    choices: list[Union[int, float, str, bool]] = Field(min_length=1)

    def suggest(self, trial: optuna.Trial, name: str) -> Any:
        return trial.suggest_categorical(name, self.choices)

    def grid(self) -> list[Any]:
        return list(self.choices)


Param = Annotated[Union[IntParam, FloatParam, CategoricalParam], Field(discriminator="type")]
_PARAM: TypeAdapter[Any] = TypeAdapter(Param)


class SearchSpace:
    """Named parameters (retrieval settings fields) with their distributions."""

    def __init__(self, params: dict[str, IntParam | FloatParam | CategoricalParam], source: str) -> None:
        self.params = params
        self.source = source

    def suggest(self, trial: optuna.Trial) -> dict[str, Any]:
        return {name: param.suggest(trial, name) for name, param in self.params.items()}

    def grid(self) -> dict[str, list[Any]]:
        return {name: p.grid() for name, p in self.params.items()}


def load_search_space(path: Path) -> SearchSpace:
    """Read and validate a search space; every key must be a retrieval setting, every value a distribution."""
    data = read_yaml_mapping(path, "a search space")
    if not data:
        raise UserError(f"{path}: a search space is a non-empty mapping of setting name to distribution")
    params: dict[str, IntParam | FloatParam | CategoricalParam] = {}
    for name, spec in data.items():
        if name not in RetrievalSettings.model_fields:
            raise UserError(f"{path}: {name}: not a retrieval setting (known: {', '.join(RetrievalSettings.model_fields)})")
        try:
            params[name] = _PARAM.validate_python(spec)
        except ValidationError as exc:
            raise UserError(f"{path}: {name}.{describe_validation_error(exc, skip=1)}") from None
    return SearchSpace(params, str(path))
