from __future__ import annotations

import argparse

HELP = "Write the built-in demo knowledge base (a fictional company with stale document versions) into a folder."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("destination", metavar="DIR", help="folder to create")
    parser.add_argument("--seed", type=int, default=0, help="random seed; the same seed gives byte-identical files (default 0)")
    parser.add_argument("--force", action="store_true", help="replace a dataset already in DIR")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import generate_demo

    dataset = generate_demo(args.destination, args.seed, force=args.force)
    words = sum(len(d.text.split()) for d in dataset.corpus) + sum(len(c.text.split()) for c in dataset.conflicts)
    print(f"{args.destination}: demo (seed {args.seed}): {dataset.summary()}, {words} words")
    return 0
