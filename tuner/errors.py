"""Errors a user can cause. The CLI prints them as one line each and exits 2; bugs still raise."""

from __future__ import annotations

from collections.abc import Sequence


class UserError(Exception):
    """Bad input, configuration or environment: reported as one clear line, never a traceback."""


class DatasetError(UserError):
    """A dataset folder failed validation; ``problems`` holds one ``file:line: what`` line each."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))
