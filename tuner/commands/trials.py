"""Command line (``tuner trials`` → tuner.study): every trial of a study as one table (pandas), to the terminal,
CSV, Parquet or JSON."""

from __future__ import annotations

import argparse

from tuner.commands._study_args import add_study_arguments, loaded_study

HELP = "One row per trial: params, values with intervals, n/N, state, prune evidence, calls (CSV, Parquet or JSON)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_study_arguments(parser)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--csv", metavar="FILE", help="write the table as CSV")
    target.add_argument("--parquet", metavar="FILE", help="write the table as Parquet (needs pyarrow)")
    target.add_argument("--json", action="store_true", help="print the rows as a JSON list on stdout")


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    import pandas as pd

    from tuner.errors import UserError
    from tuner.io import atomic_write_bytes, atomic_write_text
    from tuner.study import load_study, trial_rows

    rows = trial_rows(load_study(loaded_study(args)))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    frame = pd.DataFrame(rows)
    if args.csv:
        atomic_write_text(Path(args.csv), frame.to_csv(index=False))
        print(f"{args.csv}: {len(frame)} trials")
    elif args.parquet:
        try:
            data = frame.to_parquet(index=False)
        except ImportError as exc:
            raise UserError(f"--parquet needs pyarrow: pip install 'tuner[tables]' ({exc})") from None
        atomic_write_bytes(Path(args.parquet), data)
        print(f"{args.parquet}: {len(frame)} trials")
    else:
        with pd.option_context("display.max_columns", None, "display.width", 200):
            print(frame.to_string(index=False))
    return 0
