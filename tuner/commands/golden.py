"""Command line (``tuner golden`` → tuner.golden): build a golden set: keypoints from reference answers, stale
versions in a knowledge base. Each sub-command lives in its own module, listed in SUBCOMMANDS."""

from __future__ import annotations

import argparse
import importlib

HELP = "Build a golden set: keypoints from reference answers (keypoints), stale versions in a knowledge base (conflicts)."

SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("keypoints", "tuner.commands.golden_keypoints"),
    ("conflicts", "tuner.commands.golden_conflicts"),
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
