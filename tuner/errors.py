"""Beside the flows (user errors at every edge): errors a user can cause. The CLI prints them as one line each and exits
2; bugs still raise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class UserError(Exception):
    """Bad input, configuration or environment: reported as one clear line, never a traceback."""


class BackendFailure(Exception):
    """A generator or judge raised while answering or judging one item (not a configuration error).

    A study records the trial as failed with this message and goes on with the next trial.
    """


class DatasetError(UserError):
    """A dataset folder failed validation; ``problems`` holds one ``file:line: what`` line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def describe_validation_error(exc: ValidationError, skip: int = 0) -> str:
    """``key.path: message`` for the first error of a pydantic ValidationError (``skip`` drops leading
    location parts, e.g. a union tag); an unexpected key reads "unknown key"."""
    first = exc.errors()[0]
    key = ".".join(str(part) for part in first["loc"][skip:])
    message = "unknown key" if first["type"] == "extra_forbidden" else first["msg"].removeprefix("Value error, ")
    return f"{key}: {message}" if key else message
