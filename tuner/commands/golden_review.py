"""Command line (``tuner golden review`` → tuner.golden): the local review app over a draft file."""

from __future__ import annotations

import argparse
from pathlib import Path

from tuner.commands._common import port_number

HELP = "Review draft cases (or conflict candidates) in a browser on 127.0.0.1; every action is saved at once."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("draft", metavar="DRAFT", help="review.jsonl from 'golden from-log' or 'golden synth', or conflict candidates")
    parser.add_argument("--port", type=port_number, default=8765, help="port on 127.0.0.1 (default 8765; 0: any free port)")
    parser.add_argument("--dataset", metavar="KB", help="knowledge base the export writes into (default: the one the draft names, "
                                                        "else the draft's folder)")
    parser.add_argument("--lang", choices=("en", "zh"), help="language of the interface (default: the drafts' language)")


def run(args: argparse.Namespace) -> int:
    from tuner.extras import extra_needed
    from tuner.golden import ReviewStore
    from tuner.http_guard import listen, serve_on, url_of

    with extra_needed("golden review"):
        import uvicorn  # noqa: F401 (serve_on runs it)

        from tuner.golden.review_app import build_review_app
    store = ReviewStore(Path(args.draft), Path(args.dataset) if args.dataset else None)
    sock = listen("127.0.0.1", args.port, f"--port {args.port}")
    progress = store.progress()
    print(f"{args.draft}: {progress['total']} rows, {progress['reviewed']} reviewed; open {url_of(sock)} "
          f"(Ctrl-C stops; every action is already saved, the log is {store.log_path})", flush=True)
    serve_on(build_review_app(store, args.lang), sock)
    return 0
