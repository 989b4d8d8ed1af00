"""Command line (``tuner demo-data`` → tuner.dataset): write the built-in demo knowledge base."""

from __future__ import annotations

import argparse

HELP = ("Write the built-in demo knowledge base (a fictional company with stale document versions) into a folder, with "
        "the dataset.yaml that declares its language.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("destination", metavar="DIR", help="folder to create")
    parser.add_argument("--seed", type=int, default=0, help="random seed; the same seed gives byte-identical files (default 0)")
    # Checked when the command runs, so building the parser does not import the dataset package.
    parser.add_argument("--lang", default="en", metavar="LANG", help="language of the documents and questions: en (default) or zh")
    parser.add_argument("--force", action="store_true", help="replace a dataset already in DIR")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import generate_demo
    from tuner.dataset.demo import demo_language

    phrasing = demo_language(args.lang).phrasing
    dataset = generate_demo(args.destination, args.seed, language=args.lang, force=args.force, manifest=True)
    size = sum(phrasing.length(d.text) for d in dataset.corpus) + sum(phrasing.length(c.text) for c in dataset.conflicts)
    name = "demo" if args.lang == "en" else f"demo-{args.lang}"
    print(f"{args.destination}: {name} (seed {args.seed}): {dataset.summary()}, {size} {phrasing.length_unit}; "
          f"language and models in {args.destination}/dataset.yaml")
    return 0
