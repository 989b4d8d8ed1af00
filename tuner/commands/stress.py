"""Command line (``tuner stress`` → tuner.stress): the corruption stress matrix of one configuration."""

from __future__ import annotations

import argparse

from tuner.commands._common import add_backend_arguments

HELP = "Accuracy per corruption type x severity (one index, metadata views) and per noise position."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="FILE", help="settings file, e.g. written by 'tuner export'")
    parser.add_argument("--dataset", required=True, metavar="DIR", help="dataset folder with conflicts.jsonl")
    parser.add_argument("--noise-n", dest="noise_n", type=int, default=2, metavar="N",
                        help="conflicting chunks injected per case for the position effect (default 2)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--out", default=".", metavar="DIR", help="folder for stress.md and stress.html (default .)")
    add_backend_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import json

    from tuner.commands._common import backends_from_args
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.errors import UserError
    from tuner.evaluation import Responder
    from tuner.llm import BackendResources
    from tuner.progress import RichReporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import load_settings_file
    from tuner.stress import StressEvaluator, write_stress_outputs

    if not 1 <= args.noise_n <= 50:
        raise UserError(f"command line: --noise-n: must be between 1 and 50, got {args.noise_n}")
    settings = load_settings_file(args.config)
    dataset = load_dataset(resolve_dataset(args.dataset))
    generator, judge = backends_from_args(args, BackendResources())
    reporter = RichReporter()
    report = StressEvaluator(RetrievalPipeline(dataset, reporter=reporter), Responder(generator, judge), args.noise_n).run(settings)
    paths = write_stress_outputs(report, args.out)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(f"tuner stress: {len(report.conditions)} conditions; wrote " + ", ".join(str(p) for p in paths))
    return 0
