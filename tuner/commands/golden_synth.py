"""Command line (``tuner golden synth`` → tuner.golden): draft cases synthesized from the corpus by a chat model."""

from __future__ import annotations

import argparse
from pathlib import Path

from tuner.commands._chat import add_chat_arguments, chat_config
from tuner.commands.golden_from_log import add_pool_argument

HELP = "Synthesize questions, short answers and verbatim keypoints from the corpus with a chat model: writes DST/review.jsonl."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="KB", help="knowledge base folder (corpus.jsonl; golden.jsonl not needed)")
    parser.add_argument("destination", metavar="DST", help="folder to write review.jsonl (and the progress file) into")
    parser.add_argument("--n", type=int, default=100, help="questions to keep (default 100)")
    add_chat_arguments(parser)
    parser.add_argument("--closed-book", action="store_true", help="also ask each question without its passage and drop it when "
                                                                    "that answer states every keypoint")
    parser.add_argument("--multi-hop-share", type=float, default=0.3, help="share of multi-hop questions (default 0.3)")
    parser.add_argument("--long-tail-share", type=float, default=0.2, help="share of long-tail questions (default 0.2)")
    parser.add_argument("--depth", type=int, default=10, help="pool depth of each question for review (default 10)")
    add_pool_argument(parser)
    parser.add_argument("--near", type=float, default=0.7, help="MinHash similarity from which a question duplicates an earlier one")
    parser.add_argument("--seed", type=int, default=0, help="seed of the chunk sampling (default 0)")


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from tuner.dataset import load_knowledge_base
    from tuner.errors import UserError, describe_validation_error
    from tuner.golden import (
        CATEGORIES, DRAFT, PROGRESS, SYNTH_FILTERS, SynthPlan, Synthesizer, choose_pool, embedding_model, estimate_tokens, plan_sources,
        read_draft, synth_drafts, synth_prompt, write_draft,
    )
    from tuner.backends import BackendResources
    from tuner.progress import RichReporter

    config = chat_config(args, "tuner golden synth")
    try:
        plan = SynthPlan(n=args.n, multi_hop_share=args.multi_hop_share, long_tail_share=args.long_tail_share, closed_book=args.closed_book,
                         budget=args.budget, depth=args.depth, near_duplicate=args.near, seed=args.seed, concurrency=args.concurrency)
    except ValidationError as exc:
        raise UserError(f"command line: {describe_validation_error(exc)}") from None
    destination = Path(args.destination)
    kb = load_knowledge_base(Path(args.dataset))
    try:
        pool, left_out = choose_pool(kb, args.pool)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    reporter = RichReporter()
    resources = BackendResources()
    encoder = resources.embeddings.encoder(embedding_model(kb))  # the sources' and the pools' vectors: one model load
    sources = plan_sources(kb, plan, encoder, reporter)
    if args.dry_run:
        planned = [s for name in CATEGORIES for s in sources[name][: plan.targets()[name]]]
        prompt_tokens = 0
        for number, source in enumerate(planned, start=1):
            tokens = estimate_tokens(synth_prompt(source))
            prompt_tokens += tokens
            print(f"request {number}: {source.category} ({source.language}) {' + '.join(c.chunk_id for c in source.chunks)}"
                  f"{' [' + source.link + ']' if source.link else ''}: ~{tokens} prompt tokens")
        closed = f"; --closed-book adds up to {len(planned)} shorter requests" if plan.closed_book else ""
        print(f"dry run: {len(planned)} requests to {config.model} ({', '.join(f'{n} {plan.targets()[n]}' for n in CATEGORIES)}), "
              f"~{prompt_tokens} prompt tokens + at most {len(planned) * config.max_tokens} completion tokens "
              f"(max_tokens {config.max_tokens}){closed}; questions the filters drop take further requests; nothing was sent")
        return 0
    client = resources.chat_client(config)
    destination.mkdir(parents=True, exist_ok=True)
    outcome = Synthesizer(kb, plan, client, destination / PROGRESS).run(sources, reporter)
    if left_out is not None:
        reporter.stage(left_out)
    rows = synth_drafts(kb, outcome.cases, plan.depth, encoder, reporter=reporter, retrievers=pool)
    target = destination / DRAFT
    if target.is_file():  # keep the reviews already made on an earlier run's drafts
        earlier = read_draft(target)
        known = {row["id"] for row in earlier}
        rows = earlier + [row for row in rows if row["id"] not in known]
    write_draft(target, rows)
    per_category = ", ".join(f"{name} {sum(c['category'] == name for c in outcome.cases)}" for name in CATEGORIES)
    dropped = ", ".join(f"{name} {outcome.dropped[name]}" for name in SYNTH_FILTERS)
    failed = f"; {sum(outcome.failed.values())} failed requests ({', '.join(sorted(outcome.failed))}), asked again on a re-run" if outcome.failed else ""
    print(f"{target}: {len(outcome.cases)} questions kept ({per_category}); dropped: {dropped}")
    print(f"{config.model}: {outcome.requests} requests, {outcome.tokens} tokens spent in this run"
          f"{f', {outcome.resumed} sources resumed from {PROGRESS}' if outcome.resumed else ''}{failed}")
    if outcome.stopped_by_budget:
        print(f"stopped: the token budget of {plan.budget} is reached; run the same command again to continue")
    elif len(outcome.cases) < plan.n:
        print(f"only {len(outcome.cases)} of {plan.n} questions: the knowledge base ran out of sources for the filters")
    return 0
