"""Command line (``tuner trials`` → tuner.front): every trial of a study as one table (pandas), to the terminal,
CSV, Parquet or JSON."""

from __future__ import annotations

import argparse

from tuner.commands._study_args import add_study_arguments, loaded_study

HELP = ("One row per trial: params, values with intervals, n/N, state, prune evidence, calls, recall's lower bound "
        "(CSV, Parquet or JSON), and where the golden set's labels came from.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_study_arguments(parser)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--csv", metavar="FILE", help="write the table as CSV")
    target.add_argument("--parquet", metavar="FILE", help="write the table as Parquet (needs the 'tables' extra)")
    target.add_argument("--json", action="store_true", help="print the rows as a JSON list on stdout")


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    import pandas as pd

    from tuner.dataset import labels_line
    from tuner.errors import UserError
    from tuner.extras import extra_line
    from tuner.io import atomic_write_bytes, atomic_write_text
    from tuner.objectives import RECALL
    from tuner.front import study_labels, trial_caveats, trial_rows
    from tuner.study import load_study

    study = load_study(loaded_study(args))
    rows = trial_rows(study)
    provenance = study_labels(study)
    caveats = trial_caveats(study, provenance)
    pooled: dict[str, list[str]] = {}
    for row in rows:
        caveat = caveats.get(row["trial"])
        bounds = (None, None) if caveat is None or caveat.lower_bound_ci is None else caveat.lower_bound_ci
        row.update({f"{RECALL}.lower_bound": None if caveat is None else caveat.lower_bound,
                    f"{RECALL}.lower_bound.low": bounds[0], f"{RECALL}.lower_bound.high": bounds[1],
                    "labels.pooled": None if caveat is None else caveat.pooled})
        if caveat is not None and caveat.pooled is not None:
            pooled.setdefault(caveat.pooled, []).append(str(row["trial"]))
    # the labels lines go where the table is not: stdout after a table or a written file, stderr beside --json
    labels = [f"labels: {labels_line(provenance)}", *(f"  trials {', '.join(numbers)}: {note}" for note, numbers in pooled.items())]
    if args.json:
        print(json.dumps(rows, indent=2))
        print("\n".join(labels), file=sys.stderr)
        return 0
    frame = pd.DataFrame(rows)
    if args.csv:
        atomic_write_text(Path(args.csv), frame.to_csv(index=False))
        print(f"{args.csv}: {len(frame)} trials")
    elif args.parquet:
        try:
            data = frame.to_parquet(index=False)
        except ImportError as exc:
            raise UserError(extra_line("tuner trials --parquet", "tables", [exc.name or "pyarrow"])) from None
        atomic_write_bytes(Path(args.parquet), data)
        print(f"{args.parquet}: {len(frame)} trials")
    else:
        with pd.option_context("display.max_columns", None, "display.width", 200):
            print(frame.drop(columns="labels.pooled", errors="ignore").to_string(index=False))  # the notes follow, one line per configuration
    print("\n".join(labels))
    return 0
