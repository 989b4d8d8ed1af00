"""Command line (``tuner golden conflicts`` → tuner.golden): candidate stale versions of a knowledge base."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = ("Find documents of one family, near duplicates or (--similar) dense neighbours that disagree on a number, date or name; "
        "write conflict candidates.")
CANDIDATES = "conflicts.candidates.jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kb", metavar="KB", help="knowledge base folder (corpus.jsonl; golden.jsonl optional)")
    parser.add_argument("--out", metavar="FILE", help=f"where to write the candidates (default KB/{CANDIDATES})")
    parser.add_argument("--no-near-duplicates", action="store_true", help="do not pair MinHash near duplicates")
    parser.add_argument("--similar", type=float, metavar="COSINE",
                        help="also pair documents whose chunks are dense neighbours (FAISS, the knowledge base's embedding model) "
                             "at this cosine or more, e.g. 0.85; off by default")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import load_knowledge_base
    from tuner.golden import family_summary, find_conflicts
    from tuner.io import atomic_write_text, jsonl_text

    from tuner.errors import UserError
    from tuner.progress import RichReporter

    if args.similar is not None and not 0.0 < args.similar <= 1.0:
        raise UserError(f"command line: --similar must be a cosine in (0, 1], not {args.similar}")
    kb = load_knowledge_base(Path(args.kb))
    candidates = find_conflicts(kb, near_duplicates=not args.no_near_duplicates, dense=args.similar,
                                reporter=RichReporter() if args.similar is not None else None)
    corpus = {doc.doc_id: doc for doc in kb.corpus}
    out = Path(args.out) if args.out else Path(args.kb) / CANDIDATES
    atomic_write_text(out, jsonl_text(c.row(corpus) for c in candidates))
    summary = family_summary(candidates, kb)
    families = sum(1 for label, _, _ in summary if label.startswith("family "))
    print(f"{out}: {len(candidates)} candidate pairs: {families} version families and {len(summary) - families} "
          "documents outside a family in conflict")
    for family, pairs, values in summary[:20]:
        print(f"  {family}: {pairs} pairs, {values} disagreeing values")
    for c in candidates[:20]:
        newer = f"{c.conflicts_with} is newer" if c.dated else "no dates: which is newer is unknown"
        print(f"  {c.doc_id} says {', '.join(c.wrong_values)}; {c.conflicts_with} says {', '.join(c.right_values)} ({c.reason}; {newer})")
    return 0
