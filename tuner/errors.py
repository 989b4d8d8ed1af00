"""Beside the flows (user errors at every edge): every exception tuner raises on purpose, in one place (as Optuna keeps
``optuna/exceptions.py``), each a :class:`TunerError`, so ``except TunerError`` catches what tuner raised on purpose
and nothing else (a bug raises whatever it raises).

- Errors a user can cause (:class:`UserError` and its subclasses): the CLI prints them as one line each and exits 2;
  :class:`NothingScored` is the one of a command that ran and could score nothing.
- Failures of a model backend: :class:`BackendError` (a request failed) in two branches besides itself:
  :class:`TransientBackendError` (a timeout, a rate limit, a server error, a failed connection, a malformed 200 reply:
  retried, and once the retries run out the item is recorded as missing) and :class:`FatalBackendError`, also a
  :class:`UserError` (an unreachable endpoint, a rejected key, an unknown model: the user's to fix, so the run stops); and
  :class:`BackendFailure` (a generator or judge raised on one item: the trial fails, the study goes on). The CLI
  prints every one of them that reaches it as one line.
- Signals between tuner's own modules: :class:`BudgetSpent`, :class:`CorruptionFailed`, :class:`ReplyParseError`,
  :class:`MalformedReply`, :class:`MalformedLine`, :class:`ConversionError`, :class:`StaleVersion`,
  :class:`EngineCorpus`, :class:`NotStarted`.

The modules that raised these before keep importing them from here under the same names (``tuner.io.MalformedLine``,
``tuner.deploy.EngineCorpus``).

>>> all(issubclass(e, TunerError) for e in (UserError, BackendError, FatalBackendError, BackendFailure, MalformedLine))
True
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

if TYPE_CHECKING:
    from pydantic import ValidationError

ErrorKind = Literal["timeout", "rate_limit", "server", "connection", "malformed", "auth", "not_found", "request", "bad_response"]
TRANSIENT_KINDS: frozenset[ErrorKind] = frozenset({"timeout", "rate_limit", "server", "connection", "malformed"})
"""Backend error kinds another attempt may not meet: what clients retry."""
FATAL_KINDS: frozenset[ErrorKind] = frozenset({"connection", "auth", "not_found"})
"""Backend error kinds no later request can recover from once the retries are spent: the user's to fix."""


class TunerError(Exception):
    """The root of every exception tuner raises on purpose."""


class UserError(TunerError):
    """Bad input, configuration or environment: reported as one clear line, never a traceback."""


class NothingScored(UserError):
    """A command that measured and scored nothing (no trial of ``tuner run``, no case of ``tuner robustness`` or
    ``tuner eval``): after printing or writing what was done, it exits 2 with the reason, one line.

    >>> str(NothingScored("case", "every score is missing: v0 malformed_reply 8"))
    'no case could be scored (every score is missing: v0 malformed_reply 8)'
    """

    def __init__(self, what: str, reason: str, then: str = "") -> None:
        super().__init__(f"no {what} could be scored ({reason}){then}")


class BackendFailure(TunerError):
    """A generator or judge raised while answering or judging one item (not a configuration error).

    A study records the trial as failed with this message and goes on with the next trial.
    """


class BackendError(TunerError):
    """A model request failed; ``kind`` says why, the message is one line and never holds the API key.

    Raised as this class, the failure concerns one request (a rejected request, an unusable reply) and callers
    record that item as missing. :class:`TransientBackendError` and :class:`FatalBackendError` say more; build one
    with :func:`backend_error`. ``fatal``: callers stop, since no later request can succeed either.
    """

    fatal = False

    def __init__(self, kind: ErrorKind, message: str) -> None:
        self.kind = kind
        super().__init__(message)


class TransientBackendError(BackendError):
    """A failure another attempt may not meet (``TRANSIENT_KINDS``: a timeout, a rate limit, a server error, a failed
    connection, a 200 reply that is not the protocol's — a truncated body, a proxy's HTML page). Clients retry these and nothing else, waiting at least ``retry_after`` seconds (what the server asked
    for; 0: nothing). Once the retries run out the last one reaches the caller, which records the item as missing;
    a connection that never succeeded is a :class:`FatalBackendError` by then."""

    def __init__(self, kind: ErrorKind, message: str, retry_after: float = 0.0) -> None:
        super().__init__(kind, message)
        self.retry_after = retry_after


class FatalBackendError(BackendError, UserError):
    """No later request can succeed either (``FATAL_KINDS``: an unreachable endpoint, a rejected key, an unknown model
    or path): the user's to fix, so callers stop, and the CLI prints it as one line like any user error."""

    fatal = True


def backend_error(kind: ErrorKind, message: str, retry_after: float = 0.0, retries_spent: bool = False) -> BackendError:
    """The exception of a request that failed for ``kind``: transient while a retry may still help, fatal for a
    kind no retry helps (a failed connection too once ``retries_spent``), else the plain :class:`BackendError`.

    >>> type(backend_error("server", "HTTP 502")).__name__, type(backend_error("connection", "refused")).__name__
    ('TransientBackendError', 'TransientBackendError')
    >>> type(backend_error("connection", "refused", retries_spent=True)).__name__, backend_error("auth", "401").fatal
    ('FatalBackendError', True)
    >>> type(backend_error("request", "HTTP 400")).__name__
    'BackendError'
    """
    if kind in FATAL_KINDS and (kind not in TRANSIENT_KINDS or retries_spent):
        return FatalBackendError(kind, message)
    if kind in TRANSIENT_KINDS:
        return TransientBackendError(kind, message, retry_after)
    return BackendError(kind, message)


class ReplyParseError(TunerError):
    """A reply that does not hold a JSON object valid for the requested response model."""


class MalformedReply(TunerError):
    """An HTTP 200 reply whose body is not what the protocol sends (truncated JSON, an HTML page, no ``choices``): the
    server's or a proxy's failure, which clients turn into a transient ``malformed`` :class:`BackendError`."""


class MalformedLine(TunerError, ValueError):
    """One JSON Lines line that does not parse; the message says why, without the file and line (the caller's)."""


class BudgetSpent(TunerError):
    """The study's spending reached ``budget.max_cost`` or ``budget.max_tokens``; the message says which."""


class CorruptionFailed(TunerError):
    """One document could not be corrupted (an unusable model reply, say); the message is the reason recorded."""


class ConversionError(TunerError):
    """A file that cannot be imported; the message is the reason shown after ``path:``."""


class NotATransformer(TunerError):
    """A loaded embedding model's first module is not a Hugging Face transformer (the message: its class), so no
    inference backend can stand in for it; ``embedding.backend`` turns it into its one line."""


class StaleVersion(TunerError):
    """A write named a version of the row older than the saved one: another tab or window changed it first."""

    def __init__(self, case_id: str, current: int, given: int) -> None:
        self.current = current
        super().__init__(f"case {case_id} was changed elsewhere (saved version {current}, this page has version {given}): "
                         "nothing was saved; reload to see the current version")


class EngineCorpus(TunerError):
    """A write to a retriever whose first stage runs in an engine collection: that collection is the corpus, built
    from the served dataset and named by its content, so documents are added and removed where it is built."""


class NotStarted(TunerError):
    """A call :func:`tuner.llm.map_concurrent` skipped because an earlier one failed (never the exception it
    raises)."""


Closest = TypeVar("Closest")
"""What :class:`PickUnmet` carries as the nearest entry (``tuner.pareto.FrontEntry``): a parameter, so this module,
the ground floor, imports nothing of the layers above it."""


class PickUnmet(UserError, Generic[Closest]):
    """No front entry meets the rule's floor; ``closest`` is the entry nearest to meeting it."""

    def __init__(self, message: str, closest: Closest) -> None:
        super().__init__(message)
        self.closest = closest


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


_UNION_MEMBER = re.compile(r"^(str|int|float|bool|none|bytes|[a-z][a-z-]*\[.*\])$")
"""How pydantic names the member of a union it tried in an error's location (``str``, ``dict[str,float]``,
``literal['auto']``, ``function-after[...]``): its own path, never a key of the user's file."""


def describe_validation_error(exc: ValidationError, skip: int = 0) -> str:
    """``key.path: message`` for the first error of a pydantic ValidationError (``skip`` drops leading
    location parts, e.g. a union tag); an unexpected key reads "unknown key". A value no member of a union accepts
    reads as each member's message under the user's key, never pydantic's member paths.

    >>> from pydantic import BaseModel, ValidationError
    >>> class Study(BaseModel):
    ...     noise_floor: str | dict[str, float] = "auto"
    >>> try:
    ...     Study(noise_floor=False)
    ... except ValidationError as exc:
    ...     print(describe_validation_error(exc))
    noise_floor: Input should be a valid string, or Input should be a valid dictionary
    """
    errors = exc.errors()

    def key(error: Any) -> str:
        return ".".join(str(part) for part in error["loc"][skip:] if not _UNION_MEMBER.match(str(part)))

    first = errors[0]
    if first["type"] == "extra_forbidden":
        message = "unknown key"
    else:
        union = any(_UNION_MEMBER.match(str(part)) for part in first["loc"][skip:])
        same = [e["msg"].removeprefix("Value error, ") for e in (errors if union else [first]) if key(e) == key(first)]
        message = ", or ".join(dict.fromkeys(same))
    return f"{key(first)}: {message}" if key(first) else message
