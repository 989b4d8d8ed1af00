"""Command line (``tuner stress`` → tuner.stress): the RAGStress conditions of one configuration, or Γ between two."""

from __future__ import annotations

import argparse

from tuner.commands._common import add_backend_arguments, add_embedding_arguments

HELP = "Accuracy, Δ, ρ and misled rate per RAGStress condition (one index, metadata views); Γ between two configurations."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="settings file, e.g. written by 'tuner export' (required unless --compare)")
    parser.add_argument("--dataset", required=True, metavar="DIR", help="dataset folder with conflicts.jsonl")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"),
                        help="two settings files: run both and report Γ_t(A, B) per corruption type")
    parser.add_argument("--compare-generators", dest="compare_generators", nargs=2, metavar=("A", "B"),
                        help="two generator YAML files: run --config with each and report Γ_t(A, B)")
    parser.add_argument("--clean-plus-type", dest="clean_plus_type", action="store_true",
                        help="also run the extra clean+type conditions (the clean corpus plus one type and severity)")
    parser.add_argument("--injected", "--noise-n", dest="injected_conflicts", type=int, default=2, metavar="N",
                        help="conflicting chunks injected per case for the position effect (default 2; --noise-n is its old "
                        "spelling)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--out", metavar="DIR", help="folder for stress.md, stress.html and stress.json (default: the folder "
                                                     "of --config, or of the first --compare file: beside the study output)")
    add_backend_arguments(parser)
    add_embedding_arguments(parser)


def _labels(a: str, b: str) -> tuple[str, str]:
    """File names, or the paths when the names are the same."""
    from pathlib import Path

    names = Path(a).name, Path(b).name
    return names if names[0] != names[1] else (a, b)


def output_folder(args: argparse.Namespace) -> str:
    """``--out``, else the folder of the settings file (the first of ``--compare``): an export lives in its study's
    output folder, so the stress report lands beside the study's report rather than in the current folder."""
    from pathlib import Path

    return str(args.out or Path((args.compare or [args.config])[0]).parent)


def run(args: argparse.Namespace) -> int:
    import json

    from tuner.commands._common import embeddings_from_args, load_backend_config
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.errors import NothingScored, UserError
    from tuner.evaluation import Responder
    from tuner.generation import GENERATORS, build_generator
    from tuner.judging import JUDGES, build_judge
    from tuner.backends import BackendResources
    from tuner.progress import RichReporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import load_settings_file
    from tuner.stats import unscored
    from tuner.stress import StressComparison, StressEvaluator, StressReport, stress_json, write_stress_outputs

    if not 1 <= args.injected_conflicts <= 50:
        raise UserError(f"command line: --injected: must be between 1 and 50, got {args.injected_conflicts}")
    if args.compare and (args.config or args.compare_generators):
        raise UserError("command line: --compare: give the two settings files instead of --config and --compare-generators")
    if not args.compare and not args.config:
        raise UserError("command line: --config: required (or --compare A B)")
    if args.compare_generators and args.generator:
        raise UserError("command line: --compare-generators: give the two generator files instead of --generator")
    configs = args.compare or [args.config]
    settings = [load_settings_file(path) for path in configs]
    generator_files = args.compare_generators or [args.generator]
    generator_configs = [load_backend_config(path, GENERATORS) for path in generator_files]
    judge_config = load_backend_config(args.judge, JUDGES)
    embeddings = embeddings_from_args(args)
    dataset = load_dataset(resolve_dataset(args.dataset))

    resources = BackendResources(embeddings=embeddings)
    judge = build_judge(judge_config, resources)
    pipeline = RetrievalPipeline(dataset, reporter=RichReporter(), embeddings=embeddings)
    if args.compare:
        labels = _labels(*args.compare)
        runs = [(label, s, generator_configs[0]) for label, s in zip(labels, settings)]
    elif args.compare_generators:
        labels = _labels(*args.compare_generators)
        runs = [(label, settings[0], g) for label, g in zip(labels, generator_configs)]
    else:
        runs = [(args.config, settings[0], generator_configs[0])]
    reports: list[StressReport] = []
    for label, chosen, generator_config in runs:
        evaluator = StressEvaluator(pipeline, Responder(build_generator(generator_config, resources), judge), args.injected_conflicts)
        reports.append(evaluator.run(chosen, label, args.clean_plus_type))
    for report in reports:
        reason = unscored({name: result.accuracy for name, result in report.conditions.items()})
        if reason is not None:
            raise NothingScored("case", f"{report.label}: {reason}", "; nothing written")
    subject = reports[0] if len(reports) == 1 else StressComparison(reports[0], reports[1])
    paths = write_stress_outputs(subject, output_folder(args))
    if args.json:
        print(json.dumps(stress_json(subject), indent=2, ensure_ascii=False))
    else:
        print(f"tuner stress: {len(reports[0].conditions)} conditions × {len(reports)} configuration(s); wrote "
              + ", ".join(str(p) for p in paths))
    return 0
