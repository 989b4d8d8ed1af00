"""Command line (``tuner canary`` → tuner.canary): the online canary over a deployment's retrieval log."""

from __future__ import annotations

import argparse

HELP = "Online canary: share of retrieved chunks below the relevance threshold per time window, and its trend."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG.jsonl", help="production retrieval log (format: docs/gate.md)")
    parser.add_argument("--threshold", type=float, required=True, metavar="T", help="relevance threshold on the logged score")
    parser.add_argument("--window", default="1d", metavar="W", help="1d, 6h, 30m, 1w, or N retrievals per window (default 1d)")
    parser.add_argument("--margin", type=float, default=0.05, metavar="X",
                        help="alarm when the last window's below rate exceeds the first's by more than X (default 0.05)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the below rate did not rise beyond the margin, 1 when it did (the alarm), 2 on bad input."""
    import json
    import math

    from tuner.canary import canary_report, read_log
    from tuner.errors import UserError

    if not math.isfinite(args.threshold):
        raise UserError("--threshold: expected a finite number")
    if not 0 <= args.margin <= 1:
        raise UserError(f"--margin: expected a share between 0 and 1, got {args.margin}")
    report = canary_report(read_log(args.log), args.threshold, args.window, args.margin)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 1 if report.alarm else 0
    print(f"{'window start':<26} {'retrievals':>10} {'chunks':>8} {'below':>7} {'below rate':>10}")
    for w in report.windows:
        rate = "n/a" if w.below_rate is None else f"{w.below_rate:.1%}"
        print(f"{w.start.isoformat():<26} {w.retrievals:>10} {w.chunks:>8} {w.below:>7} {rate:>10}")
    slope = "n/a" if report.slope is None else f"{report.slope:+.2%} per window"
    rise = "n/a" if report.rise is None else f"{report.rise:+.1%}"
    verdict = "ALARM: below rate rising" if report.alarm else "ok"
    print(f"trend: {slope}; last − first window: {rise} (margin {report.margin:.1%}): {verdict}")
    return 1 if report.alarm else 0
