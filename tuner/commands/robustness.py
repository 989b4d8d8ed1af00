"""Command line (``tuner robustness`` → tuner.evaluation): one configuration under variants v0–v4."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tuner.commands._common import (
    add_backend_arguments,
    add_dataset_argument,
    add_embedding_arguments,
    add_engine_arguments,
    add_variant_arguments,
    add_settings_arguments,
    backends_from_args,
    embeddings_from_args,
    evaluate_with_progress,
    pipeline_from_args,
    variants_from_args,
    settings_from_args,
)
from tuner.errors import UserError

if TYPE_CHECKING:
    from rich.table import Table

    from tuner.llm import LLMConfig
    from tuner.stats import Estimate

HELP = "Evaluate one configuration under variants v0–v4: faithfulness, Δfaithful, misled and rejection rates."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_argument(parser)
    add_settings_arguments(parser)
    add_embedding_arguments(parser)
    add_engine_arguments(parser, collections=True)
    add_backend_arguments(parser)
    add_variant_arguments(parser)
    parser.add_argument(
        "--variants", default="v0,v1,v2,v3,v4", metavar="LIST", help="comma-separated variants (v0 is always included)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument(
        "--ragas",
        metavar="FILE",
        help="YAML LLM endpoint config (base_url, model, api_key_env, ...): also score ragas Faithfulness and "
        "NoiseSensitivity on the same samples (needs tuner[ragas]; see docs/backends.md)",
    )


def parse_variants(text: str) -> tuple[str, ...]:
    """``"v1,v3"`` → ``("v0", "v1", "v3")``: the baseline is always evaluated, since Δ is relative to it."""
    from tuner.variants import VARIANTS

    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in VARIANTS]
    if unknown:
        raise UserError(f"command line: --variants: unknown variant '{unknown[0]}'; choose from {', '.join(VARIANTS)}")
    return tuple(dict.fromkeys(["v0", *names]))


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.commands._render import robustness_buckets_table, robustness_table
    from tuner.evaluation import Responder, RobustnessEvaluator, evaluate_retrieval, ragas_scores, summarize
    from tuner.backends import BackendResources
    from tuner.progress import RichReporter
    from tuner.errors import NothingScored
    from tuner.stats import unscored

    settings = settings_from_args(args)
    variant_config = variants_from_args(args)
    embeddings = embeddings_from_args(args)
    variants = parse_variants(args.variants)
    ragas_config = _ragas_config(args.ragas)
    dataset = load_dataset(resolve_dataset(args.dataset))
    if dataset.retrieval_only:
        raise UserError(
            f"{args.dataset}: robustness needs keypoints in golden.jsonl to judge answers; "
            "this dataset has none (use 'tuner eval' for retrieval metrics)"
        )
    resources = BackendResources(embeddings=embeddings)
    generator, judge = backends_from_args(args, resources)
    reporter = RichReporter()
    pipeline = pipeline_from_args(args, dataset, reporter, embeddings)
    retrieval = evaluate_retrieval(pipeline, settings)
    responder = Responder(generator, judge)
    outcomes = evaluate_with_progress(RobustnessEvaluator(pipeline, responder, variant_config), settings, variants, reporter)
    report = summarize(outcomes, variants, responder.calls())
    ragas = None
    if ragas_config is not None:
        ragas = ragas_scores(outcomes, variants, ragas_config, resources, reporter)
    if args.json:
        payload = report.to_dict()
        payload.update(
            retrieval={name: est.to_dict() for name, est in retrieval.overall.items()},
            usage=resources.usage.snapshot().as_dict(),
            settings=settings.model_dump(mode="json"),
            variant_config=variant_config.model_dump(mode="json"),
        )
        if ragas is not None:
            payload["ragas"] = {v: {name: est.to_dict() for name, est in per.items()} for v, per in ragas.items()}
        print(json.dumps(payload, indent=2))
    else:
        reporter.console.print(robustness_table(report, retrieval, variant_config), soft_wrap=True)
        reporter.console.print(robustness_buckets_table(report), soft_wrap=True)
        if ragas is not None:
            reporter.console.print(_ragas_table(ragas), soft_wrap=True)
    reason = unscored({variant: summary.faithful for variant, summary in report.variants.items()})
    if reason is not None:
        raise NothingScored("case", reason)
    return 0


def _ragas_config(path: str | None) -> LLMConfig | None:
    """The ragas judge's endpoint from ``--ragas FILE``, checked (and ragas importable) before any work starts."""
    if path is None:
        return None
    from tuner.evaluation import require_ragas
    from tuner.llm import ChatClient, load_llm_config

    config = load_llm_config(path)
    try:
        ChatClient(config)  # reads the API key now, so a missing variable fails before the evaluation
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None
    require_ragas()
    return config


def _ragas_table(scores: dict[str, dict[str, Estimate]]) -> Table:
    from rich.table import Table

    table = Table(title="ragas on the same samples (faithfulness: higher is better; noise sensitivity: lower is better)")
    table.add_column("variant")
    table.add_column("faithfulness")
    table.add_column("noise sensitivity")
    for variant, per in scores.items():
        table.add_row(variant, per["faithfulness"].describe(), per["noise_sensitivity"].describe())
    return table
