"""Command line (``tuner eval`` → tuner.evaluation): retrieval metrics of one configuration, or of a retrieval service
that speaks Dify's External Knowledge API (``--external``)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from tuner.commands._common import (
    add_dataset_argument, add_embedding_arguments, add_engine_arguments, add_settings_arguments, embeddings_from_args,
    pipeline_from_args, settings_from_args,
)

if TYPE_CHECKING:
    from tuner.dataset import Dataset
    from tuner.embedding import EmbeddingContext
    from tuner.external import ExternalPipeline
    from tuner.progress import Reporter
    from tuner.settings import RetrievalSettings

HELP = "Evaluate retrieval for one configuration, or a service with --external: hit@k, MRR, recall@k, context precision (no LLM)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_dataset_argument(parser)
    add_settings_arguments(parser)
    add_embedding_arguments(parser)
    add_engine_arguments(parser, collections=True)
    group = parser.add_argument_group("a retrieval service speaking Dify's External Knowledge API (docs/retrieval.md)")
    group.add_argument("--external", metavar="URL",
                       help="its endpoint, as Dify would be given it (/retrieval is appended); key in TUNER_EXTERNAL_API_KEY")
    group.add_argument("--knowledge-id", dest="knowledge_id", metavar="ID", help="the knowledge base there (with --external)")
    group.add_argument("--score-threshold", dest="score_threshold", type=float, metavar="T",
                       help="score_threshold sent with --external (default 0: off); the same as --relevance-threshold")
    group.add_argument("--deadline", type=float, metavar="S",
                       help="seconds one request may take, its retries and their waits included (default 60)")
    group.add_argument("--max-reply-mb", dest="max_reply_mb", type=float, metavar="MB",
                       help="the most of one reply read; a longer one stops the evaluation (default 8)")
    group.add_argument("--match", default="metadata.doc_id", metavar="FIELD",
                       help="how a record is matched to a golden document: metadata.<key> (default metadata.doc_id), "
                            "title, or content")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import labels_json, labels_line, load_dataset, resolve_dataset
    from tuner.evaluation import evaluate_retrieval, label_caveat
    from tuner.commands._render import retrieval_table
    from tuner.errors import UserError
    from tuner.progress import RichReporter
    from tuner.retrieval import RetrievalPipeline

    embeddings = embeddings_from_args(args)
    dataset = load_dataset(resolve_dataset(args.dataset))
    reporter = RichReporter()
    if dataset.retrieval_only:
        reporter.stage("dataset has no keypoints: retrieval-only (no faithfulness metrics)")
    external = None
    if args.external or args.knowledge_id:
        if args.engine not in (None, "memory"):
            raise UserError("command line: --external measures a service's own retrieval: no --engine")
        external, settings = _external(args, dataset, reporter, embeddings)
        pipeline: RetrievalPipeline = external
    else:
        settings = settings_from_args(args)
        pipeline = pipeline_from_args(args, dataset, reporter, embeddings)
    report = evaluate_retrieval(pipeline, settings)
    recall = report.overall["recall_at_k"]
    retriever = "external" if external is not None else settings.retriever
    caveat = None if recall.value is None else label_caveat(dataset.provenance, retriever, settings.top_k, recall.value, recall.ci)
    described = {} if external is None else {"settings": {knob: getattr(settings, knob) for knob in ("top_k", "relevance_threshold")},
                                             "external": _described(external)}
    if args.json:
        print(json.dumps({**report.to_dict(), **described,
                          "labels": {**labels_json(dataset.provenance), **(caveat.to_dict() if caveat else {})}}, indent=2))
    else:
        reporter.console.print(retrieval_table(report), soft_wrap=True)
        if external is not None:
            print(f"external: {_line(external)}")
        print(f"labels: {labels_line(dataset.provenance)}")
        if caveat is not None:
            print(f"labels: {caveat.line()}")
    return 0


def _external(args: argparse.Namespace, dataset: Dataset, reporter: Reporter,
              embeddings: EmbeddingContext) -> tuple[ExternalPipeline, RetrievalSettings]:
    """The pipeline of ``--external`` (the ``external`` engine's) and the settings it is asked with (``--top-k``,
    ``--score-threshold``)."""
    from pydantic import ValidationError

    from tuner.errors import UserError, describe_validation_error
    from tuner.engine import ExternalEngine
    from tuner.external import ExternalPipeline
    from tuner.llm import CallCache
    from tuner.settings import settings_from_mapping

    if not (args.external and args.knowledge_id):
        raise UserError("command line: --external and --knowledge-id go together")
    from tuner.commands._common import settings_flags

    ignored = [name for name, _, _ in settings_flags() if name not in ("top_k", "relevance_threshold")
               and getattr(args, name) is not None] + (["config"] if args.config else [])
    if ignored:
        raise UserError(f"command line: --{ignored[0].replace('_', '-')}: a service is asked only --top-k and "
                        "--score-threshold; its other settings are its own")
    if args.score_threshold is not None and args.relevance_threshold is not None:
        raise UserError("command line: --score-threshold: give it or --relevance-threshold, not both")
    given = {"deadline": args.deadline, "max_reply_mb": args.max_reply_mb}
    try:
        engine = ExternalEngine(url=args.external, knowledge_id=args.knowledge_id, match=args.match,
                                **{name: value for name, value in given.items() if value is not None})
    except ValidationError as exc:
        key, _, problem = describe_validation_error(exc).partition(": ")
        flag = {"url": "external", "max_reply_mb": "max-reply-mb"}.get(key, key)
        raise UserError(f"command line: --{flag} {problem}") from None
    top_k = 5 if args.top_k is None else args.top_k
    threshold = next((t for t in (args.score_threshold, args.relevance_threshold) if t is not None), 0.0)
    settings = settings_from_mapping({"top_k": top_k, "relevance_threshold": threshold, "candidate_depth": max(top_k, 50)},
                                     "command line")
    pipeline = engine.pipeline(dataset, reporter=reporter, embeddings=embeddings, calls=CallCache)
    assert isinstance(pipeline, ExternalPipeline), "the external engine's pipeline"
    return pipeline, settings


def _described(pipeline: ExternalPipeline) -> dict[str, Any]:
    """The service and how its records matched the golden documents, for the JSON (no key; credentials redacted)."""
    from tuner.redaction import redact

    config, usage = pipeline.client.config, pipeline.client.usage.snapshot()
    return {"url": redact(config.url), "knowledge_id": config.knowledge_id, "match": config.match,
            "records": pipeline.matching.records, "unmatched": pipeline.matching.unmatched,
            "dropped_beyond_top_k": {"records": pipeline.matching.dropped, "replies": pipeline.matching.dropped_replies},
            "requests": usage.calls, "cache_hits": usage.cache_hits}


def _line(pipeline: ExternalPipeline) -> str:
    d = _described(pipeline)
    dropped = d["dropped_beyond_top_k"]
    beyond = (f"; {dropped['records']} records beyond top_k dropped from {dropped['replies']} replies (the service sent "
              "more than asked; the top_k by score kept)" if dropped["records"] else "")
    return (f"{d['url']} knowledge {d['knowledge_id']}: {d['records']} records, {d['unmatched']} matched no golden "
            f"document by {d['match']}; {d['requests']} requests sent, {d['cache_hits']} from the cache{beyond}")
