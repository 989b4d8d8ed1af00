"""Command line (``tuner engine`` → tuner.engine): the collections tuner built in a Milvus engine, listed (``ls``) or
removed (``gc``: a dry run unless ``--yes``)."""

from __future__ import annotations

import argparse

HELP = "List (ls) or remove (gc) the Milvus collections tuner built at a URI; gc is a dry run unless --yes."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("ls", "gc"), help="ls: list them; gc: remove them (only those tuner made)")
    parser.add_argument("uri", help="a Milvus Lite file (PATH.db) or a server (http://host:19530)")
    parser.add_argument("--token-env", dest="token_env", metavar="NAME", help="the environment variable holding the token")
    parser.add_argument("--db", dest="db_name", metavar="NAME", help="the database (default: the server's)")
    parser.add_argument("--building", action="store_true", help="gc: only collections not marked complete (half-built)")
    parser.add_argument("--yes", action="store_true", help="gc: remove them (without it gc only lists what it would remove)")


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from tuner.engine import MilvusEngine, connect, tuner_collections
    from tuner.errors import UserError, describe_validation_error

    given = {"token_env": args.token_env, "db_name": args.db_name}
    try:
        engine = MilvusEngine(backend="milvus", uri=args.uri, **{k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        raise UserError(f"command line: {describe_validation_error(exc)}") from None
    client = connect(engine, create=False)  # ls and gc never create a database at a mistyped path
    collections = tuner_collections(client)
    if args.action == "ls":
        for info in collections:
            print(info.line())
        print(f"{len(collections)} collection(s) made by tuner")
        return 0
    doomed = [info for info in collections if not args.building or info.state != "complete"]
    for info in doomed:
        if args.yes:
            client.drop_collection(info.name)
        print(f"{'removed' if args.yes else 'would remove'}: {info.line()}")
    print(f"{len(doomed)} collection(s) {'removed' if args.yes else 'to remove; run again with --yes to remove them'}")
    return 0
