"""Command line (**CLI** → public package names): the ``tuner`` entry point. Each sub-command lives in
``tuner.commands.<name>`` and is listed in COMMANDS."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from tuner.errors import DatasetError, UserError

COMMANDS: dict[str, str] = {
    "validate": "tuner.commands.validate",
    "demo-data": "tuner.commands.demo_data",
    "import": "tuner.commands.import_",
    "eval": "tuner.commands.eval",
    "corrupt": "tuner.commands.corrupt",
    "run": "tuner.commands.run",
    "pareto": "tuner.commands.pareto",
    "export": "tuner.commands.export",
    "robustness": "tuner.commands.robustness",
    "calibrate": "tuner.commands.calibrate",
    "gate": "tuner.commands.gate",
    "stress": "tuner.commands.stress",
    "canary": "tuner.commands.canary",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tuner", description="Tune RAG retrieval settings for recall@k and robustness to conflicting content.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(handler=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except DatasetError as exc:
        for line in exc.problems:
            print(line, file=sys.stderr)
        print(f"tuner: {len(exc.problems)} problem(s) in the dataset; nothing was written", file=sys.stderr)
        return 2
    except UserError as exc:
        print(f"tuner: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tuner: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``tuner eval --json | head``): stop quietly, as a SIGPIPE'd program does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
