"""Command line (``tuner golden from-log`` → tuner.golden): draft cases from a query log, each with its candidate pool."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

HELP = "Sample questions from a query log (CSV/JSONL/Parquet) and pool candidate chunks for review: writes DST/review.jsonl."


def _sizes(text: str | None) -> dict[str, int] | None:
    from tuner.errors import UserError

    if text is None:
        return None
    sizes: dict[str, int] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        try:
            sizes[name.strip()] = int(value)
        except ValueError:
            raise UserError(f"--strata: expected head=N,torso=N,tail=N, got {part.strip()!r}") from None
    return sizes


def add_pool_argument(parser: argparse.ArgumentParser) -> None:
    """``--pool``, shared with ``tuner golden synth`` (:func:`tuner.golden.choose_pool`)."""
    parser.add_argument("--pool", metavar="NAMES", help="pool retrievers, comma-separated among bm25,dense,hybrid (default: all three, "
                        "without dense when the embedding model does not cover the knowledge base's language)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", help="query log: .csv, .tsv, .jsonl or .parquet with a query (or question) column")
    parser.add_argument("destination", metavar="DST", help="folder to write review.jsonl into")
    parser.add_argument("--dataset", metavar="KB", required=True, help="knowledge base folder (corpus.jsonl; golden.jsonl not needed)")
    parser.add_argument("--n", type=int, default=100, help="questions to draw, split over head/torso/tail (default 100)")
    parser.add_argument("--depth", type=int, default=10, help="pool depth: top chunks taken from each pool retriever (default 10)")
    add_pool_argument(parser)
    parser.add_argument("--strata", metavar="head=N,torso=N,tail=N", help="questions per frequency stratum (overrides --n)")
    parser.add_argument("--include", metavar="FILE", help="known bad cases, always drawn: one question per line")
    parser.add_argument("--map", metavar="FIELD=COLUMN,...", help="log columns: query, count, timestamp, feedback (e.g. query=q,count=hits)")
    parser.add_argument("--near", type=float, default=0.7, help="MinHash similarity (0..1) from which two questions are merged (default 0.7)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw; the same seed draws the same questions (default 0)")
    parser.add_argument("--force", action="store_true", help="replace an existing DST/review.jsonl")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import load_knowledge_base
    from tuner.errors import UserError
    from tuner.golden import DRAFT, choose_pool, drafts_from_log, parse_columns, sampling_from, write_draft
    from tuner.progress import RichReporter

    target = Path(args.destination) / DRAFT
    if target.exists() and not args.force:
        raise UserError(f"{target}: already exists (it may hold reviews); pass --force to replace it")
    if not 0.0 < args.near <= 1.0:
        raise UserError(f"--near: must be in (0, 1], got {args.near}")
    if args.depth < 1:
        raise UserError(f"--depth: must be at least 1, got {args.depth}")
    sampling = sampling_from({"n": args.n, "sizes": _sizes(args.strata), "seed": args.seed}, "command line")
    known_bad: list[str] = []
    if args.include:
        try:
            known_bad = [line.strip() for line in Path(args.include).read_text("utf-8").splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{args.include}: cannot read the known bad cases: {exc}") from None
    kb = load_knowledge_base(Path(args.dataset))
    try:
        pool, left_out = choose_pool(kb, args.pool)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    reporter = RichReporter()
    drafts = drafts_from_log(Path(args.log), kb, sampling, columns=parse_columns(args.map), known_bad=known_bad,
                             depth=args.depth, threshold=args.near, reporter=reporter, retrievers=pool)
    if left_out is not None:
        reporter.stage(left_out)
    write_draft(target, drafts.rows)
    strata = ", ".join(f"{name} {count}" for name, count in drafts.strata.items())
    drawn = ", ".join(f"{name} {count}" for name, count in drafts.drawn.items() if count)
    used = ", ".join(f"{name} from {column!r}" for name, column in drafts.columns.items() if column is not None)
    unused = [name for name, column in drafts.columns.items() if column is None]
    print(f"{args.log}: columns: {used}" + (f" ({', '.join(unused)}: no such column)" if unused else "")
          + (f"; {drafts.blank} rows with a blank query skipped" if drafts.blank else ""))
    print(f"{args.log}: {drafts.read} rows, {drafts.exact} distinct after normalizing, {drafts.merged} after merging near duplicates "
          f"(strata: {strata})")
    print(f"{target}: wrote {len(drafts.rows)} draft cases ({drawn}); pool of "
          f"{statistics.median(drafts.pool_sizes):g} chunks per question (median, depth {args.depth}, {'+'.join(pool)})")
    return 0
