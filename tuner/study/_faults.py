"""Study (**trials**, storage faults): a study's storage or output folder failing under a run — a PostgreSQL connection
lost, a folder made read-only or deleted, a full disk — as one line naming the storage or path and the cause.

The cause is looked for along the exception's chain (``__cause__`` / ``__context__``): Optuna wraps SQLAlchemy's
errors (``StorageInternalError``), which wrap the driver's, which may wrap the operating system's.
"""

from __future__ import annotations

import sqlalchemy.exc

from tuner.errors import disk_fault, exception_chain
from tuner.redaction import redact
from tuner.study._workers import sqlite_path

_SQLITE_CAUSES = (
    ("readonly database", "read-only: cannot write the study database"),
    ("disk is full", "no space left on device"),
    ("unable to open database file", "cannot open the study database (its folder deleted or not writable)"),
    ("disk I/O error", "disk I/O error (the study database or its folder removed or failing)"),
)


def storage_fault(exc: BaseException, storage: str) -> str | None:
    """One line for a fault of the study's storage ``storage`` (URL, printed redacted) or of a file it writes,
    or None when ``exc`` is not one (a bug keeps its traceback)."""
    disk = disk_fault(exc)
    if disk is not None:
        return disk
    database = sqlite_path(storage)
    for link in exception_chain(exc):
        if not isinstance(link, sqlalchemy.exc.DBAPIError):
            continue
        text = str(link.orig).splitlines()[0] if link.orig is not None else str(link).splitlines()[0]
        if database is not None:
            if not database.exists():  # SQLite calls a database deleted under it "readonly" (SQLITE_READONLY_DBMOVED)
                return f"storage {database}: deleted or moved while the run used it (its folder removed?)"
            cause = next((cause for needle, cause in _SQLITE_CAUSES if needle in text), None)
            if cause is not None:
                return f"storage {database}: {cause}"
        elif link.connection_invalidated or isinstance(link, (sqlalchemy.exc.OperationalError, sqlalchemy.exc.InterfaceError)):
            return redact(f"storage {storage}: connection lost ({text})")
    return None
