from __future__ import annotations

import argparse

HELP = "Convert an outside dataset (BEIR folder, ConflictNQ file) into a tuner dataset folder."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    beir = formats.add_parser("beir", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv (retrieval-only)")
    beir.add_argument("source", metavar="SRC", help="BEIR dataset folder")
    beir.add_argument("destination", metavar="DST", help="dataset folder to create")
    beir.add_argument("--split", default="test", help="qrels split to use (default test)")
    beir.add_argument("--force", action="store_true", help="replace a dataset already in DST")
    nq = formats.add_parser("conflictnq", help="ConflictNQ jsonl: real passages as corpus, fake passages as conflicts")
    nq.add_argument("source", metavar="FILE", help="conflict_nq_*.jsonl file")
    nq.add_argument("destination", metavar="DST", help="dataset folder to create")
    nq.add_argument("--force", action="store_true", help="replace a dataset already in DST")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import write_dataset
    from tuner.dataset._beir import import_beir
    from tuner.dataset._conflictnq import import_conflictnq

    result = import_beir(args.source, args.split) if args.format == "beir" else import_conflictnq(args.source)
    dataset = write_dataset(args.destination, result.corpus, result.golden, result.conflicts, force=args.force)
    print(f"{args.destination}: imported {args.format}: {dataset.summary()}")
    for note in result.notes:
        print(f"{args.destination}: {note}")
    return 0
