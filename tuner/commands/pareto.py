"""Command line (``tuner pareto`` → tuner.front, tuner.pareto): print a study's Pareto front."""

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

    from tuner.settings import format_settings, shared_settings
    from tuner.dataset import labels_line
    from tuner.front import StudyRecord, TrialRecord, entry_caveat, entry_json, front_labels, neighbour_comparisons
    from tuner.front import study_front, study_labels, study_summary
    from tuner.study import load_study

    study = load_study(loaded_study(args))
    directions, floor, entries = study_front(study)
    confirmed = StudyRecord.from_study(study).confirm
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}
    front = [entry_json(e, trials[e.number], confirmed.get(str(e.number))) for e in entries]
    if args.json:
        records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
        paired = neighbour_comparisons(entries, records, list(directions), StudyRecord.from_study(study).pruning_margin)
        print(json.dumps({"front": front, **study_summary(study).to_json(), "noise_floor": floor, "labels": front_labels(study, entries),
                          "neighbours": [row.to_json() for row in paired]}, indent=2))
        return 0
    summary = study_summary(study)
    floor_text = ", ".join(f"{name} ±{value:.3f}" for name, value in floor.items())
    table = Table(title=f"study '{study.study_name}': front of {len(front)} "
                  f"({summary.n_complete} complete, {summary.pruned_on_evidence} pruned, "
                  f"{summary.n_duplicates} repeated configurations not evaluated again); noise floor {floor_text}")
    held_out = [name for name in directions if any(name in row.get("confirm", {}) for row in front)]
    # the params are what gets deployed: one setting per line, only those that differ between entries, never cut
    common = shared_settings([row["params"] for row in front])
    params = [format_settings({k: v for k, v in row["params"].items() if k not in common}, "\n") for row in front]
    for column in ("trial", *directions, *(f"{name} held out (optimism)" for name in held_out), "context words", "n/N", "tie"):
        table.add_column(column)
    table.add_column("params" if not common else "params (differing)", overflow="fold",
                     min_width=max((len(line) for cell in params for line in cell.split("\n")), default=6))
    for row, settings in zip(front, params):
        cells = [
            f"{row['values'][name]:.3f}" + (f" [{row['ci'][name][0]:.3f}, {row['ci'][name][1]:.3f}]" if name in row["ci"] else "")
            for name in directions
        ]
        held = [
            "—" if row.get("confirm", {}).get(name) is None
            else f"{row['confirm'][name]:.3f} ({row['optimism'][name]:+.3f})"
            for name in held_out
        ]
        table.add_row(
            str(row["trial"]), *cells, *held, f"{row['context_words']:.0f}", f"{row['n']}/{row['n_total']}",
            "" if row["tie_group"] is None else f"group {row['tie_group']}",
            settings,
        )
    Console(width=None if sys.stdout.isatty() else 200).print(table)  # piped output keeps whole rows
    if common:
        print(f"every front entry has {format_settings(common)}")
    provenance = study_labels(study)
    print(f"labels: {labels_line(provenance)}")
    for entry in entries:
        caveat = entry_caveat(provenance, entry, study.trials[entry.number])
        if caveat is not None:
            print(f"  trial {entry.number}: {caveat.line()}")
    return 0
