"""Command line (**CLI** → tuner.llm): the chat-model arguments of the golden-set commands that ask a model
(``tuner golden synth``, ``tuner golden keypoints --mode llm``): the endpoint, a dry run, a token budget and how many
requests are in flight, and the one-line refusal when no model is configured."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.llm import LLMConfig

CONCURRENCY = 4
NO_MODEL = ("{command} needs a chat model: pass --llm-config FILE, a YAML file with base_url, model and api_key_env "
            "(the name of the environment variable holding the key)")


def add_chat_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llm-config", metavar="FILE", help="YAML of an OpenAI-compatible endpoint: base_url, model, api_key_env, ...")
    parser.add_argument("--dry-run", action="store_true", help="print the planned requests and their estimated tokens; send nothing")
    parser.add_argument("--budget", type=int, metavar="TOKENS", help="stop before a batch of requests once this run has spent this many "
                                                                       "tokens; re-run the same command to continue")
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY, metavar="N",
                        help=f"requests in flight at once (default {CONCURRENCY}); the output does not depend on it")


def chat_config(args: argparse.Namespace, command: str) -> LLMConfig:
    """The endpoint ``--llm-config`` names, checked; without it, one line saying what to set (exit 2)."""
    from tuner.errors import UserError
    from tuner.llm import load_llm_config

    if not args.llm_config:
        raise UserError(NO_MODEL.format(command=command))
    if args.budget is not None and args.budget < 1:
        raise UserError(f"command line: --budget must be at least 1 token, not {args.budget}")
    if not 1 <= args.concurrency <= 64:
        raise UserError(f"command line: --concurrency must be between 1 and 64, not {args.concurrency}")
    return load_llm_config(args.llm_config)
