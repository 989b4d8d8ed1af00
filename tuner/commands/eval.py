"""Command line (``tuner eval`` → tuner.evaluation): retrieval metrics of one configuration."""

from __future__ import annotations

import argparse
import json

from tuner.commands._common import (
    add_dataset_argument, add_embedding_arguments, add_settings_arguments, embeddings_from_args, settings_from_args,
)

HELP = "Evaluate retrieval for one configuration: hit@k, MRR, recall@k, context precision (no LLM)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_argument(parser)
    add_settings_arguments(parser)
    add_embedding_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import labels_json, labels_line, load_dataset, resolve_dataset
    from tuner.evaluation import evaluate_retrieval, label_caveat
    from tuner.commands._render import retrieval_table
    from tuner.progress import RichReporter
    from tuner.retrieval import RetrievalPipeline

    settings = settings_from_args(args)
    embeddings = embeddings_from_args(args)
    dataset = load_dataset(resolve_dataset(args.dataset))
    reporter = RichReporter()
    if dataset.retrieval_only:
        reporter.stage("dataset has no keypoints: retrieval-only (no faithfulness metrics)")
    report = evaluate_retrieval(RetrievalPipeline(dataset, reporter=reporter, embeddings=embeddings), settings)
    recall = report.overall["recall_at_k"]
    caveat = None if recall.value is None else label_caveat(dataset.provenance, settings.retriever, settings.top_k, recall.value, recall.ci)
    if args.json:
        print(json.dumps({**report.to_dict(), "labels": {**labels_json(dataset.provenance), **(caveat.to_dict() if caveat else {})}},
                         indent=2))
    else:
        reporter.console.print(retrieval_table(report), soft_wrap=True)
        print(f"labels: {labels_line(dataset.provenance)}")
        if caveat is not None:
            print(f"labels: {caveat.line()}")
    return 0
