from __future__ import annotations

import argparse

from tuner.commands._common import (
    add_backend_arguments,
    add_dataset_argument,
    add_noise_arguments,
    add_settings_arguments,
    backend_configs_from_args,
    noise_from_args,
    settings_from_args,
)

HELP = "Measure the noise floor of one configuration: run-to-run (judge vs generator) and case-sampling noise."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_argument(parser)
    add_settings_arguments(parser)
    add_backend_arguments(parser)
    add_noise_arguments(parser)
    parser.add_argument("--runs", type=int, default=3, metavar="R", help="regenerate and re-judge runs (default 3, at least 2)")
    parser.add_argument("--out", default="noise_floor.json", metavar="FILE", help="where to write the noise floor (JSON)")


def run(args: argparse.Namespace) -> int:
    from tuner.calibration import calibrate
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.evaluation.render import noise_floor_table
    from tuner.llm import BackendResources
    from tuner.progress import RichReporter
    from tuner.retrieval import RetrievalPipeline

    settings = settings_from_args(args)
    noise = noise_from_args(args)
    generator_config, judge_config = backend_configs_from_args(args)
    dataset = load_dataset(resolve_dataset(args.dataset))
    reporter = RichReporter()
    if dataset.retrieval_only:
        reporter.stage("dataset has no keypoints: noise floor of the retrieval metrics only")
    pipeline = RetrievalPipeline(dataset, reporter=reporter)
    floor = calibrate(pipeline, settings, generator_config, judge_config, noise, args.runs, BackendResources(), reporter)
    floor.write(args.out)
    reporter.console.print(noise_floor_table(floor), soft_wrap=True)
    reporter.stage(f"wrote {args.out}")
    return 0
