"""Arguments shared by commands that evaluate one configuration on one dataset."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.settings import RetrievalSettings

_FLAGS: tuple[tuple[str, type, str], ...] = (
    ("top_k", int, "chunks in the final context"),
    ("relevance_threshold", float, "drop candidates whose normalized score is below this (0..1)"),
    ("rerank_strength", float, "blend of reranker and first-stage scores (0 = no reranking, 1 = reranker only)"),
    ("chunk_size", int, "chunk size in words"),
    ("chunk_overlap", float, "fraction of a chunk repeated in the next one (0..0.9)"),
    ("retriever", str, "bm25, dense or hybrid"),
    ("reranker", str, "embedding-maxsim (offline default) or cross-encoder:NAME_OR_PATH"),
    ("embedding_model", str, "sentence-transformers model name or local path"),
    ("candidate_depth", int, "first-stage candidates kept and reranked per question"),
)


def add_dataset_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="DATASET", help="dataset folder, or 'demo' for the built-in demo")


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("retrieval settings (defaults: see docs/retrieval.md)")
    group.add_argument("--config", metavar="FILE", help="YAML/JSON settings file, e.g. written by 'tuner export'")
    for name, kind, help_text in _FLAGS:
        group.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, help=help_text)


def settings_from_args(args: argparse.Namespace) -> RetrievalSettings:
    """``--config`` first, then any flag given on the command line overrides it."""
    from tuner.settings import RetrievalSettings, load_settings_file, settings_from_mapping

    base = load_settings_file(args.config) if args.config else RetrievalSettings()
    overrides = {name: getattr(args, name) for name, _, _ in _FLAGS if getattr(args, name) is not None}
    return settings_from_mapping({**base.model_dump(), **overrides}, "command line") if overrides else base
