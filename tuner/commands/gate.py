"""Command line (``tuner gate`` → tuner.gate): the CI regression gate for one configuration."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.commands._common import add_backend_arguments, add_embedding_arguments, add_variant_arguments
from tuner.errors import UserError

if TYPE_CHECKING:
    from tuner.judging import JudgeConfig

HELP = "CI regression gate: compare one configuration with a baseline (exit 0 pass, 1 regression, 2 bad input)."


def _at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="FILE", help="settings file, e.g. written by 'tuner export'")
    parser.add_argument("--dataset", required=True, metavar="DIR", help="dataset folder")
    parser.add_argument("--baseline", metavar="FILE", help="baseline JSON to compare with (or to write)")
    parser.add_argument("--write-baseline", action="store_true", help="measure and write --baseline, then exit 0")
    parser.add_argument("--history", type=_at_least(1), default=1, metavar="N",
                        help="compare trends with the mean of the last N accepted runs (needs --noise-floor; default 1)")
    parser.add_argument("--sample", type=_at_least(0), metavar="N", help="run the variant matrix on a fixed-seed sample of N cases")
    parser.add_argument("--sample-seed", type=int, default=0, metavar="S", help="seed of --sample (default 0)")
    parser.add_argument("--always-include", metavar="FILE", help="case ids (one per line) always in the sample")
    parser.add_argument("--noise-floor", metavar="FILE", help="noise-floor JSON written by 'tuner calibrate'")
    parser.add_argument("--thresholds", metavar="FILE", help="YAML thresholds (see docs/gate.md)")
    parser.add_argument("--full-matrix", action="store_true", help="run v0-v4 instead of v0 and v3")
    parser.add_argument("--out", default="tuner-gate", metavar="DIR",
                        help="folder for gate-summary.md and gate-junit.xml (default ./tuner-gate, created if needed)")
    add_variant_arguments(parser)
    add_backend_arguments(parser)
    add_embedding_arguments(parser)


def _without_cache(config: JudgeConfig) -> JudgeConfig:
    """The judge config with its reply cache off, so the self-check asks the judge again."""
    if "cache" in type(config).model_fields:
        return config.model_copy(update={"cache": False})
    return config


def run(args: argparse.Namespace) -> int:
    from tuner.noisefloor import NoiseFloor
    from tuner.commands._common import backend_configs_from_args, embeddings_from_args, variants_from_args
    from tuner.dataset import labels_line, load_dataset, resolve_dataset
    from tuner.evaluation import label_caveat
    from tuner.export import read_export
    from tuner.gate import (
        GateThresholds,
        RobustnessSetup,
        evaluate_gate,
        load_baseline,
        load_thresholds,
        measure,
        read_case_list,
        select_cases,
        write_baseline,
        write_gate_outputs,
    )
    from tuner.generation import build_generator
    from tuner.judging import build_judge
    from tuner.backends import BackendResources
    from tuner.errors import NothingScored
    from tuner.progress import RichReporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.stats import unscored

    if args.write_baseline and not args.baseline:
        raise UserError("--write-baseline needs --baseline FILE (where to write it)")
    if args.history > 1 and not args.noise_floor:
        raise UserError("--history N > 1 needs --noise-floor: past means have no cases to pair for an interval")
    exported = read_export(args.config)
    settings = exported.settings
    embeddings = embeddings_from_args(args)
    dataset = load_dataset(resolve_dataset(args.dataset))
    thresholds = load_thresholds(args.thresholds) if args.thresholds else GateThresholds()
    noise_floor = NoiseFloor.from_file(args.noise_floor) if args.noise_floor else None
    floors = None if noise_floor is None else noise_floor.objectives
    baseline_path = Path(args.baseline) if args.baseline else None
    previous = None
    if baseline_path is not None and (not args.write_baseline or baseline_path.exists()):
        previous = load_baseline(baseline_path)
    known = [case.id for case in dataset.golden]
    always = read_case_list(args.always_include, known) if args.always_include else []
    case_ids = select_cases(known, args.sample, args.sample_seed, always)
    generator_config, judge_config = backend_configs_from_args(args)
    resources = BackendResources(embeddings=embeddings)
    setup = RobustnessSetup(
        generator=build_generator(generator_config, resources),
        judge=build_judge(judge_config, resources),
        variant_config=variants_from_args(args),
        variants=("v0", "v1", "v2", "v3", "v4") if args.full_matrix else ("v0", "v3"),
        recheck=None if args.write_baseline else build_judge(_without_cache(judge_config), resources),
        judge_cases=thresholds.judge_check.cases,
    )
    reporter = RichReporter()
    measurement = measure(RetrievalPipeline(dataset, reporter=reporter, embeddings=embeddings), settings, case_ids, setup)
    answered = measurement.robustness
    reason = None if answered is None else unscored({v: summary.faithful for v, summary in answered.variants.items()})
    if reason is not None:  # a gate whose generator or judge gave nothing checked nothing: neither pass nor a baseline
        raise NothingScored("case", reason, "; no baseline or gate result written")
    if args.write_baseline:
        baseline_path = Path(args.baseline)
        written = write_baseline(baseline_path, measurement.to_baseline(), previous)
        print(f"{baseline_path}: wrote baseline of {len(known)} cases ({len(measurement.outcomes)} with variants "
              f"{', '.join(measurement.variants) or 'none'}); history of {len(written.history)} earlier run(s)")
        return 0
    provenance_hash = exported.provenance.get("dataset_hash")
    split = exported.provenance.get("confirm_split")
    held_out = split.get("held_out_cases") if isinstance(split, dict) else None
    result = evaluate_gate(measurement, thresholds, previous, floors, args.history, str(baseline_path or "baseline"),
                           provenance_hash if isinstance(provenance_hash, str) else None,
                           None if noise_floor is None else noise_floor.run_sd(),
                           held_out if isinstance(held_out, int) else None)
    header = [f"config: `{args.config}`", f"dataset: `{args.dataset}`", f"baseline: `{baseline_path or 'none'}`"]
    recall = measurement.retrieval.overall["recall_at_k"]
    caveat = None if recall.value is None else label_caveat(dataset.provenance, settings.retriever, settings.top_k, recall.value, recall.ci)
    labels = [f"labels: {labels_line(dataset.provenance)}", *([f"labels: {caveat.line()}"] if caveat else [])]
    header += labels
    paths = write_gate_outputs(result, previous, args.out, header)
    print(f"tuner gate: {result.verdict} ({len(result.failures)} failed, {len(result.warnings)} warning(s))")
    for line in result.failure_lines():
        print(f"  FAIL {line}")
    for check in result.warnings:
        print(f"  WARN {check.group}.{check.name}: {check.message}")
    for note in result.notes:
        print(f"  note: {note}")
    for line in labels:
        print(f"  {line}")
    print("  wrote " + ", ".join(str(p) for p in paths))
    return result.exit_code
