"""Command line (``tuner golden`` → tuner.golden): build a golden set: questions from logs or synthesized from the
corpus, keypoints from reference answers, stale versions in a knowledge base, all reviewed in a browser. Each
sub-command lives in its own module, listed in SUBCOMMANDS."""

from __future__ import annotations

import argparse
import importlib

HELP = ("Build a golden set: questions from a query log (from-log) or synthesized (synth), keypoints from reference "
        "answers (keypoints), stale versions in a knowledge base (conflicts), reviewed in a browser (review).")

SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("from-log", "tuner.commands.golden_from_log"),
    ("synth", "tuner.commands.golden_synth"),
    ("keypoints", "tuner.commands.golden_keypoints"),
    ("conflicts", "tuner.commands.golden_conflicts"),
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
