"""Command line (``tuner run`` → tuner.study): run or resume a tuning study and write its outputs."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from tuner.commands._study_args import add_study_arguments, loaded_study

if TYPE_CHECKING:
    from tuner.study import StudyRun

HELP = "Run (or resume) a tuning study: recall@k vs v3 Δfaithful, with noise-floor-aware pruning."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_study_arguments(parser)
    parser.add_argument("--trials", type=int, metavar="N", help="finished trials to reach (default: budget.trials)")
    parser.add_argument("--dry-run", action="store_true", help="estimate generator/judge calls, tokens and (with pricing) cost, spend nothing")
    parser.add_argument("--pick", help="pick rule for the exported config: knee, min-delta or cheapest (default: the study file's pick)")
    parser.add_argument("--min-recall", type=float, metavar="X", help="recall floor for --pick min-delta")
    parser.add_argument("--no-report", action="store_true", help="skip the HTML report")
    parser.add_argument("--compare", metavar="OTHER.yaml",
                        help="show this study's front beside another study's in the report (e.g. the same study without the version knobs)")
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout (progress stays on stderr)")


def run(args: argparse.Namespace) -> int:
    import optuna

    from tuner.errors import NothingScored, UserError
    from tuner.pareto import PICK_RULES
    from tuner.progress import RichReporter
    from tuner.report import finish
    from tuner.study import FAULT_RESUME, InterruptGuard, dry_run, run_study, storage_fault

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # progress comes from the reporter, one line per trial
    loaded = loaded_study(args)
    rule = args.pick or loaded.config.pick.rule
    min_recall = args.min_recall if args.min_recall is not None else loaded.config.pick.min_recall
    if rule not in PICK_RULES or (rule == "min-delta" and min_recall is None):
        raise UserError(f"--pick {rule}: choose knee, cheapest, or min-delta with --min-recall X")
    reporter = RichReporter()
    if args.dry_run:
        estimate = dry_run(loaded, args.trials, reporter)
        if args.json:
            print(json.dumps(estimate, indent=2))
        return 0
    # Ctrl-C: the first stops the run cleanly and still writes what is done; the second exits at once. A storage
    # fault stops it the same way, with exit 2 (run_study reads the study again for the report, if it can)
    compare = None
    if args.compare and not args.no_report:
        from tuner.study import load_study, load_study_file

        compare = load_study(load_study_file(args.compare))
    with InterruptGuard() as guard:
        try:
            result = run_study(loaded, args.trials, reporter, guard=guard)
        except KeyboardInterrupt:
            # before any trial (calibrating, waiting for another worker): nothing to report; the calibration's worker
            # thread may still be inside a call, and waiting for it at interpreter exit would delay the exit
            print("tuner: interrupted", file=sys.stderr)
            _exit_interrupted()
        try:
            outputs = finish(result, rule, min_recall, reporter, report=not args.no_report, compare=compare)
        except Exception as exc:
            cause = storage_fault(exc, loaded.storage)
            if cause is None:
                raise
            first = f"{result.fault}; " if result.fault is not None else ""
            raise UserError(f"{first}no report could be written ({cause}); the study is saved: fix it and run the same "
                            "command to resume and write it") from exc
    if args.json:
        print(json.dumps(run_summary(result, rule, outputs), indent=2))
    if result.fault is not None:
        written = ", ".join(f"{name} {outputs[name]}" for name in ("config", "report") if name in outputs) or "nothing to export"
        raise UserError(f"{result.fault}; stopped as Ctrl-C does, the report of what is done written ({written}); "
                        f"{FAULT_RESUME}")
    if result.interrupted:
        # everything is written; a thread may still be inside an answer the interrupt stopped waiting for, and
        # waiting for it at interpreter exit is where a second Ctrl-C would land: leave now
        _exit_interrupted()
    if "unscored" in outputs:
        written = f"; the report says what was done ({outputs['report']})" if "report" in outputs else ""
        raise NothingScored("trial", outputs["unscored"], f"{written}; nothing exported")
    return 0


def _exit_interrupted() -> NoReturn:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)  # the exit code of an interrupt (README: exit codes)


def run_summary(result: StudyRun, rule: str, outputs: dict[str, Any]) -> dict[str, Any]:
    """What ``tuner run --json`` prints: counts, calls, time, the texts this worker embedded (not read from the
    embedding store), the front with intervals (as ``finish`` read it), the pick with its runner-up and the files."""
    from tuner.front import study_summary

    return {
        "study": result.study.study_name,
        "summary": study_summary(result.study).to_json(),
        "elapsed_s": round(result.elapsed, 3),
        "texts_embedded": result.texts_embedded,
        "interrupted": result.interrupted,
        "budget_ended": result.budget_ended,
        "fault": result.fault,
        "front": outputs.get("front", []),
        "pick": {"rule": rule, "trial": outputs.get("picked"), "unmet": outputs.get("pick_unmet"), "notes": outputs.get("notes", []),
                 "runner_up": outputs.get("runner_up")},
        "outputs": {key: outputs[key] for key in ("storage", "config", "report") if key in outputs},
    }
