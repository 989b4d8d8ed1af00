"""Beside the flows (user errors at every edge): errors a user can cause. The CLI prints them as one line each and exits
2; bugs still raise."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
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


DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT, errno.EIO, errno.EDQUOT})
"""Operating-system errors a user fixes (space, permissions, a folder put back), not bugs of tuner."""


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it was raised from or during (``__cause__``, else ``__context__``), outermost first: a
    library's wrapper (Optuna's ``StorageInternalError``) hides the driver's or the operating system's error."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def disk_fault(exc: BaseException) -> str | None:
    """``path: cause`` (``out/report.html: no space left on device``) for an operating-system error a user fixes
    anywhere along ``exc``'s chain, or None."""
    for link in exception_chain(exc):
        if isinstance(link, OSError) and link.errno in DISK_ERRNOS:
            where = link.filename if link.filename is not None else "a file"
            return f"{where}: {os.strerror(link.errno).lower()}"
    return None


def describe_validation_error(exc: ValidationError, skip: int = 0) -> str:
    """``key.path: message`` for the first error of a pydantic ValidationError (``skip`` drops leading
    location parts, e.g. a union tag); an unexpected key reads "unknown key"."""
    first = exc.errors()[0]
    key = ".".join(str(part) for part in first["loc"][skip:])
    message = "unknown key" if first["type"] == "extra_forbidden" else first["msg"].removeprefix("Value error, ")
    return f"{key}: {message}" if key else message
