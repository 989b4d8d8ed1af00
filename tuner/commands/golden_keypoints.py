"""Command line (``tuner golden keypoints`` → tuner.golden): fill missing keypoints of a golden set by offline rules."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "Fill missing keypoints in DATASET/golden.jsonl from the reference answers (dates, numbers with units, %, 《》/quotes, names); backup beside it."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="DATASET", help="dataset folder with corpus.jsonl and golden.jsonl")


def run(args: argparse.Namespace) -> int:
    from tuner.golden import fill_keypoints

    report = fill_keypoints(Path(args.dataset))
    for case_id, keypoints in report.filled.items():
        print(f"filled {case_id}: " + "; ".join(" | ".join(aliases) for aliases in keypoints))
    for case_id in report.unmatched:
        print(f"could not fill {case_id}: no date, number with unit, percentage, title, quote or name found")
    for case_id in report.reviewed:
        print(f"left {case_id}: keypoints reviewed by a person")
    backup = f"; backup {report.backup}" if report.backup else ""
    print(f"{args.dataset}: {len(report.filled)} cases filled, {len(report.unmatched)} could not be filled, "
          f"{len(report.reviewed)} reviewed left alone{backup}")
    return 0
