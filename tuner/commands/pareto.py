"""Command line (``tuner pareto`` → tuner.front, tuner.pareto): print a study's Pareto front."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

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
    from tuner.front import TRIAL_COLUMNS, StudyRecord, TrialRecord, compared_figures, entry_caveat, entry_json, front_labels
    from tuner.front import shown_columns
    from tuner.front import runner_up_comparison, study_comparisons, study_front, study_labels, study_summary
    from tuner.pareto import PickUnmet, pick, runner_up
    from tuner.study import load_study

    loaded = loaded_study(args)
    study = load_study(loaded)
    comparisons = study_comparisons(study)
    directions, floor, entries = study_front(study, comparisons)
    confirmed = StudyRecord.from_study(study).confirm
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}
    front = [entry_json(e, trials[e.number], directions, confirmed.get(e.number)) for e in entries]
    records = {t.number: TrialRecord.from_trial(t) for t in study.get_trials(deepcopy=False)}
    if args.json:
        paired = comparisons.neighbours(entries, records, list(directions))
        chosen = runner = None
        if entries:
            # the study file's pick rule, on the figures it uses (held out with confirm:), against its runner-up
            figures, _, where = compared_figures(study, entries)
            rule, min_recall = loaded.config.pick.rule, loaded.config.pick.min_recall
            try:
                chosen = pick(rule, figures, directions, floor, min_recall=min_recall)
                runner = runner_up(rule, chosen, figures, directions, floor, min_recall=min_recall)
            except PickUnmet:
                chosen = None
        versus = None if chosen is None or runner is None else runner_up_comparison(
            study, chosen.number, runner.number, comparisons).to_json()
        print(json.dumps({"front": front, **study_summary(study).to_json(), "noise_floor": floor, "labels": front_labels(study, entries),
                          "neighbours": [row.to_json() for row in paired],
                          "pick": None if chosen is None else {
                              "rule": loaded.config.pick.rule, "trial": chosen.number, "figures": where,
                              "runner_up": versus}}, indent=2))
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
    # a study without conflicts in its index has no exposure to show: its columns would only hold "—"
    beside = [column for column in exposure_columns(list(directions))
              if any(exposure_cells(row, [column]) != ["—"] for row in front)]
    columns = shown_columns(records[e.number] for e in entries)  # the record fields a front table shows
    for column in ("trial", *directions, *beside, *(f"{name} held out (optimism)" for name in held_out), "context words",
                   *(TRIAL_COLUMNS[name].header["en"] for name in columns), "n/N", "tie"):
        table.add_column(column)
    table.add_column("params" if not common else "params (differing)", overflow="fold",
                     min_width=max((len(line) for cell in params for line in cell.split("\n")), default=6))
    for entry, row, settings in zip(entries, front, params):
        cells = [
            f"{row['values'][name]:.3f}" + (f" [{row['ci'][name][0]:.3f}, {row['ci'][name][1]:.3f}]" if name in row["ci"] else "")
            for name in directions
        ]
        held = [
            "—" if row.get("confirm", {}).get(name) is None
            else f"{row['confirm'][name]:.3f}{_interval(row['confirm_ci'].get(name))} ({row['optimism'][name]:+.3f})"
            for name in held_out
        ]
        table.add_row(
            str(row["trial"]), *cells, *exposure_cells(row, beside), *held, f"{row['context_words']:.0f}",
            *(records[entry.number].cell(name) for name in columns), f"{row['n']}/{row['n_total']}",
            "" if row["tie_group"] is None else f"group {row['tie_group']}",
            settings,
        )
    Console(width=None if sys.stdout.isatty() else 260).print(table)  # piped output keeps whole rows
    if common:
        print(f"every front entry has {format_settings(common)}")
    if held_out:
        print("held out: on the confirmation cases the search never saw; optimism: how much better the tuning figure "
              "looked, in the objective's direction (positive: the search's figure did not hold)")
    provenance = study_labels(study)
    print(f"labels: {labels_line(provenance)}")
    for entry in entries:
        caveat = entry_caveat(provenance, entry, study.trials[entry.number])
        if caveat is not None:
            print(f"  trial {entry.number}: {caveat.line()}")
    return 0


def exposure_columns(objectives: list[str]) -> list[str]:
    """What a front table shows beside Δ: conflict exposure (unless it is an objective), the measured Δ (when exposure
    is the objective instead) and the reader's susceptibility."""
    from tuner.objectives import EXPOSURE

    return [*(["conflict exposure"] if EXPOSURE not in objectives else ["v3 Δ (measured)"]), "susceptibility"]


def exposure_cells(row: dict[str, Any], columns: list[str]) -> list[str]:
    """The cells of :func:`exposure_columns` for one ``entry_json`` row: exposure as value [interval] (n/N), Δ and
    susceptibility to three places, — where undefined (susceptibility with no case exposed)."""
    cells = []
    for column in columns:
        if column == "conflict exposure":
            share = row["exposure"]
            cells.append("—" if share is None or share["value"] is None else
                         f"{share['value']:.3f} [{share['ci'][0]:.3f}, {share['ci'][1]:.3f}] ({row['exposed']})")
        else:
            value = row["delta"] if column.startswith("v3") else row["susceptibility"]
            cells.append("—" if value is None else f"{value:.3f}")
    return cells


def _interval(bounds: list[float | None] | None) -> str:
    """`` [low, high]``, or nothing when a bound is undefined."""
    if not bounds or bounds[0] is None or bounds[1] is None:
        return ""
    return f" [{bounds[0]:.3f}, {bounds[1]:.3f}]"
