"""Command line (``tuner serve`` → tuner.deploy): the HTTP retrieval service of an exported configuration."""

from __future__ import annotations

import argparse
import os

from tuner.commands._common import add_embedding_arguments, configure_embeddings_from_args

HELP = "Serve an exported configuration over HTTP: POST /retrieve, GET /healthz, GET /config, POST /documents."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="FILE", help="export of tuner export (.yaml, .json or .env)")
    parser.add_argument("--dataset", required=True, metavar="DIR", help="dataset folder (or 'demo') whose corpus is served")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--max-body-mb", type=float, default=4.0, metavar="MB",
                        help="largest request body accepted; larger ones get 413 (default 4)")
    parser.add_argument("--batch-wait-ms", type=float, default=3.0, metavar="MS",
                        help="embed the questions of concurrent requests in one forward pass, waiting up to MS for them "
                             "(default 3; 0: each question alone)")
    add_embedding_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import signal
    import socket

    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.encoders import EmbeddingOptions
    from tuner.errors import UserError
    from tuner.export import read_export

    if args.batch_wait_ms < 0:
        raise UserError(f"--batch-wait-ms: must be 0 or more, got {args.batch_wait_ms:g}")

    try:
        import uvicorn

        from tuner.deploy.service import build_app
    except ImportError as exc:
        raise UserError(f"tuner serve needs the 'serve' extra ({exc.name} is missing): pip install 'tuner[serve]'") from None
    from tuner.deploy import Retriever

    exported = read_export(args.config)
    # the vectors the trial was measured with: an int8 trial is served with int8 vectors unless told otherwise
    measured = EmbeddingOptions(backend=exported.provenance.get("embedding_backend", "torch"))
    configure_embeddings_from_args(args, measured)
    dataset = load_dataset(resolve_dataset(args.dataset))
    with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as probe:
        try:
            probe.bind((args.host, args.port))
        except OSError as exc:
            raise UserError(f"--host {args.host} --port {args.port}: cannot listen there: {exc.strerror}") from None
    if args.max_body_mb <= 0:
        raise UserError(f"--max-body-mb: must be positive, got {args.max_body_mb:g}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    app = build_app(lambda: Retriever.from_export(exported, dataset, batch_wait=args.batch_wait_ms / 1000),
                    int(args.max_body_mb * 1024 * 1024))
    # uvicorn answers SIGTERM by finishing the requests in flight, then raises the signal again at the handler it
    # found when it started: this one, so a stop asked for by SIGTERM ends with exit 0 rather than death by signal
    signal.signal(signal.SIGTERM, lambda _signum, _frame: None)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0
