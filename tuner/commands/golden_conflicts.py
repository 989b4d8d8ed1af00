"""Command line (``tuner golden conflicts`` → tuner.golden): candidate stale versions of a knowledge base."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = ("Find documents of one family, near duplicates, (--similar) dense neighbours or (--questions) answers to one golden "
        "question that disagree on a number, date or name; write conflict candidates.")
CANDIDATES = "conflicts.candidates.jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kb", metavar="KB", help="knowledge base folder (corpus.jsonl; golden.jsonl optional)")
    parser.add_argument("--out", metavar="FILE", help=f"where to write the candidates (default KB/{CANDIDATES})")
    parser.add_argument("--no-near-duplicates", action="store_true", help="do not pair MinHash near duplicates")
    parser.add_argument("--similar", type=float, metavar="COSINE",
                        help="also pair documents whose chunks are dense neighbours (FAISS, the knowledge base's embedding model) "
                             "at this cosine or more, e.g. 0.85; off by default")
    parser.add_argument("--questions", action="store_true",
                        help="also pair documents that answer one question of KB/golden.jsonl differently (a date, number or "
                             "name read as the span reader reads it, BM25's top 5 documents per question): finds rewritten or "
                             "fabricated versions that share no family and no text; off by default")


def looked_for(args: argparse.Namespace) -> str:
    """What this run compared, and what no run of it can find: printed with the result, so 0 pairs is read right."""
    how = ["documents of one version family (metadata.family)"]
    if not args.no_near_duplicates:
        how.append("near duplicates (MinHash)")
    if args.similar is not None:
        how.append(f"dense neighbours at cosine >= {args.similar:g}")
    if args.questions:
        how.append("documents answering one golden question")
    missed = ["contradictions without a number, date or name (a negation, a claim changed in words)"]
    if not args.questions:
        missed.append("documents written apart about one fact (a rewritten or fabricated version sharing no family and "
                      "little text: try --questions with a golden set, or --similar)")
    else:
        missed.append("questions that ask no date, number or name")
    return (f"looked for: {', '.join(how)} whose matching sentences carry different numbers, dates or names; "
            f"not found by this run: {'; '.join(missed)}")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import load_knowledge_base
    from tuner.golden import family_summary, find_conflicts, question_conflicts
    from tuner.io import atomic_write_text, jsonl_text

    from tuner.errors import UserError
    from tuner.progress import RichReporter

    if args.similar is not None and not 0.0 < args.similar <= 1.0:
        raise UserError(f"command line: --similar must be a cosine in (0, 1], not {args.similar}")
    kb = load_knowledge_base(Path(args.kb))
    if args.questions and not kb.golden:
        raise UserError(f"{args.kb}: --questions reads the questions of golden.jsonl, and this knowledge base has none")
    reporter = RichReporter()  # a bar over the pairs compared, and a line per stage (minutes for large documents)
    candidates = find_conflicts(kb, near_duplicates=not args.no_near_duplicates, dense=args.similar, reporter=reporter)
    if args.questions:
        known = {(c.doc_id, c.conflicts_with) for c in candidates} | {(c.conflicts_with, c.doc_id) for c in candidates}
        candidates += [c for c in question_conflicts(kb, [case.question for case in kb.golden], reporter=reporter)
                       if (c.doc_id, c.conflicts_with) not in known]
    corpus = {doc.doc_id: doc for doc in kb.corpus}
    out = Path(args.out) if args.out else Path(args.kb) / CANDIDATES
    atomic_write_text(out, jsonl_text(c.row(corpus) for c in candidates))
    summary = family_summary(candidates, kb)
    families = sum(1 for label, _, _ in summary if label.startswith("family "))
    print(f"{out}: {len(candidates)} candidate pairs: {families} version families and {len(summary) - families} "
          "documents outside a family in conflict")
    print(looked_for(args))
    for family, pairs, values in summary[:20]:
        print(f"  {family}: {pairs} pairs, {values} disagreeing values")
    for c in candidates[:20]:
        newer = f"{c.conflicts_with} is newer" if c.dated else "no dates: which is newer is unknown"
        print(f"  {c.doc_id} says {', '.join(c.wrong_values)}; {c.conflicts_with} says {', '.join(c.right_values)} ({c.reason}; {newer})")
    return 0
