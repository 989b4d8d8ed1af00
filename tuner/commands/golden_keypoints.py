"""Command line (``tuner golden keypoints`` → tuner.golden): fill missing keypoints of a golden set by offline rules or
with a chat model."""

from __future__ import annotations

import argparse
from pathlib import Path

from tuner.commands._chat import add_chat_arguments, chat_config

HELP = ("Fill missing keypoints in DATASET/golden.jsonl from the reference answers, by offline rules (dates, numbers with units, percentages, "
        "《》/quotes, names) or with a chat model (--mode llm); backup beside it.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="DATASET", help="dataset folder with corpus.jsonl and golden.jsonl")
    parser.add_argument("--mode", choices=("rules", "llm"), default="rules",
                        help="rules (offline, the default) or llm: a chat model splits each answer into facts with verbatim aliases")
    add_chat_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from tuner.errors import UserError
    from tuner.golden import estimate_tokens, fill_keypoints, pending_cases
    from tuner.backends import BackendResources
    from tuner.text import plural

    if args.mode == "rules":
        if args.llm_config or args.dry_run or args.budget is not None:
            raise UserError("command line: --llm-config, --dry-run and --budget need --mode llm")
        report = fill_keypoints(Path(args.dataset))
    else:
        config = chat_config(args, "tuner golden keypoints --mode llm")
        if args.dry_run:
            pending = pending_cases(Path(args.dataset))
            prompt_tokens = 0
            for case in pending:
                tokens = estimate_tokens(case.prompt)
                prompt_tokens += tokens
                print(f"request {case.case_id}: {len(case.documents)} documents: ~{tokens} prompt tokens")
            print(f"dry run: {len(pending)} requests to {config.model}, ~{prompt_tokens} prompt tokens + at most "
                  f"{len(pending) * config.max_tokens} completion tokens (max_tokens {config.max_tokens}); nothing was sent")
            return 0
        report = fill_keypoints(Path(args.dataset), BackendResources().chat_client(config), budget=args.budget, concurrency=args.concurrency)
    for case_id, keypoints in report.filled.items():
        print(f"filled {case_id}: " + "; ".join(" | ".join(aliases) for aliases in keypoints))
    reason = "no date, number with unit, percentage, title, quote or name found" if report.spend is None else \
        "no fact of the reply has an alias found verbatim in a relevant document"
    for case_id in report.unmatched:
        print(f"could not fill {case_id}: {reason}")
    for case_id in report.unparseable:
        print(f"could not fill {case_id}: the reply holds no JSON object with a list of keypoints (nothing was guessed)")
    for case_id in report.failed:
        print(f"could not fill {case_id}: the request failed; a re-run asks again")
    for case_id in report.reviewed:
        print(f"left {case_id}: keypoints reviewed by a person")
    backup = f"; backup {report.backup}" if report.backup else ""
    could_not = len(report.unmatched) + len(report.unparseable) + len(report.failed)
    hint = " (listed above: write theirs in the review app, or try --mode llm)" if could_not and report.spend is None else ""
    print(f"{args.dataset}: {plural(len(report.filled), 'case')} filled, {could_not} got no keypoint{hint}, "
          f"{len(report.reviewed)} reviewed left alone{backup}")
    if report.spend is not None:
        print(f"{report.dropped_facts} facts dropped: no alias found verbatim in a relevant document; "
              f"{len(report.unparseable)} malformed replies, {len(report.failed)} failed requests")
        print(f"{config.model}: {report.spend.requests} requests, {report.spend.tokens} tokens spent in this run")
        if report.spend.stopped_by_budget:
            print(f"stopped: the token budget of {args.budget} is reached with {len(report.not_reached)} cases left; "
                  "run the same command again to continue")
    return 0
