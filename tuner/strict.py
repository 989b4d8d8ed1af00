"""Beside the flows (configuration as validated data): the one base of every configuration model tuner reads from a
file or a flag, so each is validated the same way once, at the edge."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, model_validator


@cache
def _word_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of ``model`` whose values are words among which are ``on`` and ``off`` (``Literal["auto", "on",
    "off"]``, optional or not)."""
    def words(annotation: Any) -> set[Any]:
        if get_origin(annotation) is Literal:
            return set(get_args(annotation))
        return set().union(*(words(arg) for arg in get_args(annotation)))

    return frozenset(name for name, info in model.model_fields.items() if {"on", "off"} <= words(info.annotation))


def yaml_words(model: type[BaseModel], data: Any) -> Any:
    """``data`` for ``model`` with the words YAML 1.1 reads as booleans given back: PyYAML, like every YAML 1.1 loader,
    reads ``on``/``yes`` as true and ``off``/``no`` as false, so ``chat: on`` (as the docs write it) arrives as True.
    A boolean given to a field whose values are words including ``on`` and ``off`` is read as ``on`` / ``off``.

    >>> class Reader(StrictModel):
    ...     chat: Literal["auto", "on", "off"] = "auto"
    >>> Reader.model_validate({"chat": True}).chat, Reader.model_validate({"chat": False}).chat
    ('on', 'off')
    """
    if not isinstance(data, dict):
        return data
    fields = _word_fields(model)
    return {key: ("on" if value else "off") if key in fields and isinstance(value, bool) else value
            for key, value in data.items()}


class StrictModel(BaseModel):
    """A pydantic model that refuses unknown keys (a misspelt key is an error, never silently ignored), is frozen
    (validated once, then passed around as a value) and reads YAML's on/off as the words (:func:`yaml_words`).

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

    @model_validator(mode="before")
    @classmethod
    def _yaml_words(cls, data: Any) -> Any:
        return yaml_words(cls, data)
