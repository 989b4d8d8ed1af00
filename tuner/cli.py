"""Command line (**CLI** → public package names): the ``tuner`` entry point. Each sub-command lives in
``tuner.commands.<name>`` and is listed in COMMANDS."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from tuner.errors import BackendError, DatasetError, UserError, disk_fault
from tuner.extras import missing_extra_line
from tuner.redaction import redact

COMMANDS: dict[str, str] = {
    "validate": "tuner.commands.validate",
    "demo-data": "tuner.commands.demo_data",
    "import": "tuner.commands.import_",
    "eval": "tuner.commands.eval",
    "corrupt": "tuner.commands.corrupt",
    "run": "tuner.commands.run",
    "pareto": "tuner.commands.pareto",
    "trials": "tuner.commands.trials",
    "export": "tuner.commands.export",
    "robustness": "tuner.commands.robustness",
    "calibrate": "tuner.commands.calibrate",
    "gate": "tuner.commands.gate",
    "stress": "tuner.commands.stress",
    "canary": "tuner.commands.canary",
    "serve": "tuner.commands.serve",
    "engine": "tuner.commands.engine",
    "golden": "tuner.commands.golden",
}


EXIT_USER_ERROR = 2
"""Bad input, configuration or environment: one line naming the file, line or key."""
EXIT_INTERNAL = 3
"""A bug in tuner: one line on stderr, the traceback with ``--debug``. Never 1, which ``tuner gate`` uses for a
regression (the README lists every exit code)."""
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    from tuner import __version__

    parser = argparse.ArgumentParser(prog="tuner", description="Tune RAG retrieval settings for recall@k and robustness to conflicting content.")
    parser.add_argument("--version", action="version", version=f"tuner {__version__}")
    parser.add_argument("--debug", action="store_true", help="on an internal error, show the traceback")
    volume = parser.add_mutually_exclusive_group()
    volume.add_argument("-v", "--verbose", action="store_true", help="also log debug details (logger 'tuner', stderr)")
    volume.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors: no progress lines or bars")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(handler=module.run)
    return parser


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]  # generic in the stubs only
    """Writes to whatever ``sys.stderr`` is at the time of the record (test runners and wrappers swap it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        return None


class _RedactingFormatter(logging.Formatter):
    """Log lines with credentials redacted (:func:`tuner.redaction.redact`), whatever a message quotes."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class _LibraryFilter(logging.Filter):
    """Passes every record of the ``tuner`` loggers (their own level decides) and other libraries' records from
    ``level`` up: ``bm25s`` and ``jieba`` set their loggers to DEBUG, which would otherwise reach stderr."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name == "tuner" or record.name.startswith("tuner.") or record.levelno >= self.level


def configure_logging(verbose: bool, quiet: bool) -> None:
    """Log records to stderr through one handler on the root logger: tuner's from INFO by default (progress lines
    are INFO), from DEBUG with ``-v``, from WARNING with ``-q`` (which also silences progress, see
    :class:`tuner.progress.RichReporter`); other libraries' from WARNING, from DEBUG with ``-v``. With a handler on
    the root logger, a library's ``logging.basicConfig()`` adds none, so no line is printed twice."""
    logging.getLogger("tuner").setLevel(logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
    root = logging.getLogger()
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    handler = next((h for h in root.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:  # repeated main() calls keep one handler
        handler = _StderrHandler()
        handler.setFormatter(_RedactingFormatter("tuner: %(levelname)s: %(name)s: %(message)s"))
        root.addHandler(handler)
    handler.filters = [_LibraryFilter(logging.DEBUG if verbose else logging.WARNING)]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:  # Ctrl-C while the commands are still being loaded: nothing started
        print("tuner: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    configure_logging(args.verbose, args.quiet)
    try:
        return int(args.handler(args))
    except DatasetError as exc:
        for line in exc.problems:
            print(line, file=sys.stderr)
        print(f"tuner: {len(exc.problems)} problem(s) in the dataset; nothing was written", file=sys.stderr)
        return EXIT_USER_ERROR
    except (UserError, BackendError) as exc:  # a backend that kept failing past its retries stops a command as one line too
        print(redact(f"tuner: error: {exc}"), file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("tuner: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (``tuner eval --json | head``): stop quietly, as a SIGPIPE'd program does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        missing = missing_extra_line(args.command, exc) if isinstance(exc, ModuleNotFoundError) else None
        if missing is not None and not args.debug:  # a module of an extra the install lacks: which extra, not a bug
            print(f"tuner: error: {missing}", file=sys.stderr)
            return EXIT_USER_ERROR
        fault = disk_fault(exc)
        if fault is not None and not args.debug:  # a full disk or a read-only folder is the environment, not a bug
            print(redact(f"tuner: error: {fault}"), file=sys.stderr)
            return EXIT_USER_ERROR
        if args.debug:
            raise
        print(redact(f"tuner: internal error: {type(exc).__name__}: {exc} (a bug in tuner; run with --debug for the traceback)"),
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
