"""Beside the flows (configuration as validated data): the one base of every configuration model tuner reads from a
file or a flag, so each is validated the same way once, at the edge."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """A pydantic model that refuses unknown keys (a misspelt key is an error, never silently ignored) and is frozen
    (validated once, then passed around as a value).

    >>> class Limits(StrictModel):
    ...     top_k: int = 5
    >>> Limits.model_validate({"top_kk": 3})
    Traceback (most recent call last):
    pydantic_core._pydantic_core.ValidationError: 1 validation error for Limits
    top_kk
      Extra inputs are not permitted [type=extra_forbidden, input_value=3, input_type=int]
        For further information visit https://errors.pydantic.dev/.../v/extra_forbidden
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
