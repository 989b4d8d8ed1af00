"""Command line (``tuner calibrate`` → tuner.noisefloor): measure and write one configuration's noise floor."""

from __future__ import annotations

import argparse
import os
import sys

from tuner.commands._common import (
    add_backend_arguments,
    add_dataset_argument,
    add_embedding_arguments,
    add_variant_arguments,
    add_settings_arguments,
    backend_configs_from_args,
    embeddings_from_args,
    variants_from_args,
    settings_from_args,
)

HELP = "Measure the noise floor of one configuration: run-to-run (judge vs generator) and case-sampling noise."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_argument(parser, optional=True)
    parser.add_argument(
        "--study", metavar="STUDY.yaml",
        help="take dataset, baseline settings (first enqueued trial), backends and variants from a study file",
    )
    add_settings_arguments(parser)
    add_embedding_arguments(parser)
    add_backend_arguments(parser)
    add_variant_arguments(parser)
    parser.add_argument("--runs", type=int, default=3, metavar="R", help="regenerate and re-judge runs (default 3, at least 2)")
    parser.add_argument(
        "--out", metavar="FILE", help="where to write the noise floor (JSON; default noise_floor.json, or in the study's output folder)"
    )


def run(args: argparse.Namespace) -> int:
    from tuner.noisefloor import calibrate
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.errors import NothingScored, UserError
    from tuner.commands._render import noise_floor_table
    from tuner.backends import BackendResources
    from tuner.progress import RichReporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.study import InterruptGuard

    if args.study:
        from tuner.study import load_study_file

        loaded = load_study_file(args.study, dataset=args.dataset)
        loaded.check_backends()
        settings, variant_config = loaded.baseline_settings(), loaded.config.variants
        generator_config, judge_config = loaded.generator, loaded.judge
        dataset_spec, out = loaded.dataset, args.out or str(loaded.output / "noise_floor.json")
        embeddings = embeddings_from_args(args, loaded.config.embedding, loaded.embedding_cache_url)
    elif args.dataset:
        settings, variant_config = settings_from_args(args), variants_from_args(args)
        generator_config, judge_config = backend_configs_from_args(args)
        dataset_spec, out = args.dataset, args.out or "noise_floor.json"
        embeddings = embeddings_from_args(args)
    else:
        raise UserError("give a DATASET (with settings flags) or --study STUDY.yaml")
    dataset = load_dataset(resolve_dataset(dataset_spec))
    reporter = RichReporter()
    if dataset.retrieval_only:
        reporter.stage("dataset has no keypoints: noise floor of the retrieval metrics only")
    pipeline = RetrievalPipeline(dataset, reporter=reporter, embeddings=embeddings)
    # the Ctrl-C rules of tuner run: the first stops the calibration at once (nothing is written), the second exits
    # even while the first waits for answers in flight
    with InterruptGuard() as guard:
        try:
            with guard.interruptible():
                floor = guard.call(calibrate, pipeline, settings, generator_config, judge_config, variant_config, args.runs,
                                   BackendResources(embeddings=embeddings), reporter)
        except KeyboardInterrupt:
            reporter.stage(f"interrupted: no noise floor was written to {out}")
            # worker threads may still be inside an answer; waiting for them at exit is where a second Ctrl-C lands
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)  # the exit code of an interrupt (README: exit codes)
    reason = floor.unscored()
    if reason is not None:
        # a floor without faithfulness would pass for a measured one in a study or a gate: write nothing
        raise NothingScored("case", reason, f"; no noise floor written to {out}")
    floor.write(out)
    reporter.console.print(noise_floor_table(floor), soft_wrap=True)
    reporter.stage(f"wrote {out}" + (f" (use it in the study file: noise_floor: {out})" if args.study else ""))
    return 0
