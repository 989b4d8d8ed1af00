"""Command line (``tuner pareto`` → tuner.study, tuner.pareto): print a study's Pareto front."""

from __future__ import annotations

import argparse
import json
import sys

from tuner.commands._study_args import add_study_arguments, loaded_study

HELP = "Print a study's Pareto front (recall@k vs v3 Δfaithful) with intervals, ties and n/N."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_study_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from tuner.settings import format_settings
    from tuner.dataset import labels_line
    from tuner.study import entry_caveat, entry_json, front_labels, load_study, study_front, study_labels, study_summary

    study = load_study(loaded_study(args))
    directions, floor, entries = study_front(study)
    front = [entry_json(e, study.trials[e.number]) for e in entries]
    if args.json:
        print(json.dumps({"front": front, **study_summary(study), "noise_floor": floor, "labels": front_labels(study, entries)}, indent=2))
        return 0
    summary = study_summary(study)
    floor_text = ", ".join(f"{name} ±{value:.3f}" for name, value in floor.items())
    table = Table(title=f"study '{study.study_name}': front of {len(front)} "
                  f"({summary['n_complete']} complete, {summary['n_pruned']} pruned); noise floor {floor_text}")
    for column in ("trial", *directions, "context words", "n/N", "tie", "params"):
        table.add_column(column)
    for row in front:
        cells = [
            f"{row['values'][name]:.3f}" + (f" [{row['ci'][name][0]:.3f}, {row['ci'][name][1]:.3f}]" if name in row["ci"] else "")
            for name in directions
        ]
        table.add_row(
            str(row["trial"]), *cells, f"{row['context_words']:.0f}", f"{row['n']}/{row['n_total']}",
            "" if row["tie_group"] is None else f"group {row['tie_group']}",
            format_settings(row["params"]),
        )
    Console(width=None if sys.stdout.isatty() else 200).print(table)  # piped output keeps whole rows
    provenance = study_labels(study)
    print(f"labels: {labels_line(provenance)}")
    for entry in entries:
        caveat = entry_caveat(provenance, entry, study.trials[entry.number])
        if caveat is not None:
            print(f"  trial {entry.number}: {caveat.line()}")
    return 0
