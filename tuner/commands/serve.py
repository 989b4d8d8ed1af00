"""Command line (``tuner serve`` → tuner.deploy): the HTTP retrieval service of an exported configuration."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from tuner.commands._common import (
    add_embedding_arguments, add_engine_arguments, embeddings_from_args, engine_from_args, port_number,
)

if TYPE_CHECKING:
    from tuner.deploy.service import ServiceLimits

HELP = ("Serve exported configurations over HTTP: POST /retrieve, GET /healthz, GET /config, POST /documents, and "
        "POST /retrieval (Dify's External Knowledge API).")
TOKEN_VARIABLE = "TUNER_SERVE_TOKEN"
"""The write token of POST /documents and /documents/delete; without it each run prints a new one."""
API_KEY_VARIABLE = "TUNER_SERVE_API_KEY"
"""The Bearer key of POST /retrieval (what Dify sends as the external knowledge API's key); without it each run prints a
new one."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="export of tuner export (.yaml, .json or .env)")
    parser.add_argument("--dataset", metavar="DIR",
                        help="dataset folder (or 'demo') whose corpus is served; its folder name is its knowledge id")
    parser.add_argument("--knowledge", action="append", default=[], metavar="ID=CONFIG:DATASET",
                        help="a knowledge base of POST /retrieval: knowledge id, export and dataset (repeatable; instead of "
                             "--config and --dataset; the first one also answers /retrieve)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=port_number, default=8000, help="port (default 8000; 0: any free port, printed)")
    parser.add_argument("--max-body-mb", type=float, default=4.0, metavar="MB",
                        help="largest request body accepted; larger ones get 413 (default 4)")
    parser.add_argument("--max-json-depth", type=int, metavar="N",
                        help="deepest nesting of a request body's arrays and objects; deeper: refused as malformed (default 64)")
    parser.add_argument("--max-conditions", type=int, metavar="N",
                        help="most conditions in one metadata_condition of POST /retrieval; more: 400 (default 100)")
    parser.add_argument("--max-condition-chars", type=int, metavar="N",
                        help="most characters of one condition's name or value (a list: its items joined by commas); "
                             "more: 400 (default 4096)")
    parser.add_argument("--batch-wait-ms", type=float, default=3.0, metavar="MS",
                        help="embed the questions of concurrent requests in one forward pass, waiting up to MS for them "
                             "(default 3; 0: each question alone)")
    add_embedding_arguments(parser)
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import signal

    from tuner.dataset import load_dataset, resolve_dataset
    from tuner.embedding import EmbeddingOptions
    from tuner.deploy import engine_note, serving_engine
    from tuner.errors import UserError
    from tuner.extras import extra_needed
    from tuner.export import read_export
    from tuner.http_guard import TOKEN_HEADER, answered_hosts, listen, new_token, serve_on, url_of

    if args.batch_wait_ms < 0:
        raise UserError(f"--batch-wait-ms: must be 0 or more, got {args.batch_wait_ms:g}")
    if args.max_body_mb <= 0:
        raise UserError(f"--max-body-mb: must be positive, got {args.max_body_mb:g}")

    with extra_needed("serve"):
        import uvicorn  # noqa: F401 (serve_on runs it)

        from tuner.deploy.service import build_app
    limits = service_limits(args)
    engine = engine_from_args(args)
    from tuner.deploy import Retriever

    served = knowledge_bases(args)
    exported = {knowledge_id: read_export(config) for knowledge_id, (config, _) in served.items()}
    first = next(iter(exported.values()))
    # the vectors the trial was measured with: an int8 trial is served with int8 vectors unless told otherwise
    measured = EmbeddingOptions(backend=first.provenance.get("embedding_backend", "torch"))
    embeddings = embeddings_from_args(args, measured)
    datasets = {knowledge_id: load_dataset(resolve_dataset(dataset)) for knowledge_id, (_, dataset) in served.items()}
    engine.reachable()  # an unreachable engine or a bad token: one line and exit 2 before the port opens
    for knowledge_id, (config, _) in served.items():
        serving = serving_engine(engine, exported[knowledge_id].provenance)
        if serving.announced() is not None:
            described = serving.described()
            print(f"tuner serve: {knowledge_id}: engine {', '.join(f'{k} {v}' for k, v in described.items() if v)}",
                  flush=True)
        note = engine_note(config, exported[knowledge_id].provenance, engine)
        if note is not None:
            print(f"tuner serve: note: {note}", flush=True)
    sock = listen(args.host, args.port, f"--host {args.host} --port {args.port}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if token:
        print(f"tuner serve: writes (POST /documents, /documents/delete) need the header {TOKEN_HEADER} set to "
              f"${TOKEN_VARIABLE}", flush=True)
    else:
        token = new_token()
        print(f"tuner serve: writes (POST /documents, /documents/delete) need the header {TOKEN_HEADER}: {token} "
              f"(new each run; set {TOKEN_VARIABLE} to choose it)", flush=True)
    api_key = os.environ.get(API_KEY_VARIABLE, "").strip()
    if not api_key:
        api_key = new_token()
        print(f"tuner serve: POST /retrieval (Dify External Knowledge API) needs 'Authorization: Bearer {api_key}' "
              f"(new each run; set {API_KEY_VARIABLE} to choose it)", flush=True)
    print(f"tuner serve: knowledge ids of POST /retrieval: {', '.join(served)}", flush=True)

    def load() -> dict[str, Retriever]:
        return {knowledge_id: Retriever.from_export(exported[knowledge_id], datasets[knowledge_id],
                                                    batch_wait=args.batch_wait_ms / 1000, embeddings=embeddings,
                                                    engine=engine)
                for knowledge_id in served}

    app = build_app(load, token, limits, answered_hosts(args.host), api_key)
    # uvicorn answers SIGTERM by finishing the requests in flight, then raises the signal again at the handler it
    # found when it started: this one, so a stop asked for by SIGTERM ends with exit 0 rather than death by signal
    signal.signal(signal.SIGTERM, lambda _signum, _frame: None)
    print(f"tuner serve: listening on {url_of(sock)}", flush=True)
    serve_on(app, sock)
    return 0


def service_limits(args: argparse.Namespace) -> ServiceLimits:
    """The request limits of the ``--max-*`` flags, validated: a value out of range is one line naming its flag."""
    from pydantic import ValidationError

    from tuner.deploy.service import ServiceLimits
    from tuner.errors import UserError

    given = {"max_json_depth": args.max_json_depth, "max_conditions": args.max_conditions,
             "max_condition_chars": args.max_condition_chars}
    try:
        return ServiceLimits(max_body_bytes=int(args.max_body_mb * 1024 * 1024),
                             **{name: value for name, value in given.items() if value is not None})
    except ValidationError as exc:
        first = exc.errors()[0]
        flag = "--max-body-mb" if first["loc"][0] == "max_body_bytes" else "--" + str(first["loc"][0]).replace("_", "-")
        raise UserError(f"{flag}: {first['msg']}, got {first['input']}") from None


def knowledge_bases(args: argparse.Namespace) -> dict[str, tuple[str, str]]:
    """The knowledge bases to serve, (export, dataset) by knowledge id: each ``--knowledge ID=CONFIG:DATASET``, or
    ``--config`` with ``--dataset``, whose knowledge id is the dataset folder's name (``demo`` for the demo)."""
    from pathlib import Path

    from tuner.errors import UserError

    if args.knowledge and (args.config or args.dataset):
        raise UserError("--knowledge: give either --knowledge (repeatable) or --config with --dataset, not both")
    if not args.knowledge:
        if not (args.config and args.dataset):
            raise UserError("--config and --dataset are needed (or one --knowledge ID=CONFIG:DATASET per knowledge base)")
        return {Path(args.dataset.rstrip("/\\")).name or args.dataset: (args.config, args.dataset)}
    served: dict[str, tuple[str, str]] = {}
    for given in args.knowledge:
        knowledge_id, _, where = given.partition("=")
        config, _, dataset = where.rpartition(":")
        if not knowledge_id.strip() or not config or not dataset:
            raise UserError(f"--knowledge {given}: expected ID=CONFIG:DATASET, e.g. shop=deploy.yaml:data/shop")
        if knowledge_id in served:
            raise UserError(f"--knowledge {given}: knowledge id '{knowledge_id}' is given twice")
        served[knowledge_id] = (config, dataset)
    return served
