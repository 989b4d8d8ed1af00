"""Command line (``tuner golden`` → tuner.golden): build a golden set: questions from logs or synthesized from the
corpus, reviewed in a browser. Each sub-command lives in its own module, listed in SUBCOMMANDS."""

from __future__ import annotations

import argparse
import importlib

HELP = "Build a golden set: questions from a query log (from-log) or synthesized (synth), reviewed in a browser (review)."

SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("from-log", "tuner.commands.golden_from_log"),
    ("synth", "tuner.commands.golden_synth"),
    ("review", "tuner.commands.golden_review"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    for name, module_name in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        command = steps.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(step_handler=module.run)


def run(args: argparse.Namespace) -> int:
    return int(args.step_handler(args))
