from __future__ import annotations

import argparse

HELP = "Validate a dataset folder (corpus.jsonl, golden.jsonl, optional conflicts.jsonl)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="DIR", help="dataset folder")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import load_dataset

    dataset = load_dataset(args.dataset)
    print(f"{args.dataset}: ok: {dataset.summary()}")
    if dataset.retrieval_only:
        print(f"{args.dataset}: no keypoints: supports retrieval-only studies (no faithfulness objective)")
    return 0
