"""Command line (``tuner import`` → tuner.dataset.importers): convert outside data into a dataset folder."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.dataset.importers import ImportResult

HELP = "Convert a folder of documents, or an outside dataset (BEIR, ConflictNQ, SQuAD, a CSV/JSONL/Parquet table), into a tuner dataset folder."


def _beir(args: argparse.Namespace) -> ImportResult:
    from tuner.dataset.importers import import_beir

    return import_beir(args.source, args.split)


def _conflictnq(args: argparse.Namespace) -> ImportResult:
    from tuner.dataset.importers import import_conflictnq

    return import_conflictnq(args.source)


def _squad(args: argparse.Namespace) -> ImportResult:
    from tuner.dataset.importers import import_squad

    return import_squad(args.source, args.category)


def _table(args: argparse.Namespace) -> ImportResult:
    from tuner.dataset.importers import import_table, table_mapping

    return import_table(args.source, table_mapping(args.preset, args.mapping, args.map), args.corpus, args.split)


def _format(
    formats: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help: str,
    source: tuple[str, str],
    importer: Callable[[argparse.Namespace], ImportResult],
) -> argparse.ArgumentParser:
    parser = formats.add_parser(name, help=help, description=help)
    parser.add_argument("source", metavar=source[0], help=source[1])
    parser.add_argument("destination", metavar="DST", help="dataset folder to create")
    parser.add_argument("--force", action="store_true", help="replace a dataset already in DST")
    parser.set_defaults(importer=importer)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tuner.dataset.importers import DEFAULT_CATEGORY, PRESETS

    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    beir = _format(formats, "beir", "BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv (retrieval-only)",
                   ("SRC", "BEIR dataset folder"), _beir)
    beir.add_argument("--split", default="test", help="qrels split to use (default test)")
    _format(formats, "conflictnq", "ConflictNQ jsonl: real passages as corpus, fake passages as conflicts",
            ("FILE", "conflict_nq_*.jsonl file"), _conflictnq)
    squad = _format(formats, "squad", "SQuAD v1/v2 JSON (CMRC 2018, ...): paragraphs as corpus, answer texts as keypoint aliases",
                    ("FILE", "SQuAD-format .json file"), _squad)
    squad.add_argument("--category", default=DEFAULT_CATEGORY, help=f"category label of every question (default {DEFAULT_CATEGORY})")
    table = _format(formats, "table", "a CSV/TSV, JSONL or Parquet table, or a save_to_disk folder, with a column mapping",
                    ("FILE", "table file (by extension) or saved Hugging Face dataset folder"), _table)
    table.add_argument("--map", metavar="FIELD=COLUMN,...", help="source column per tuner field, e.g. question=q,answer=a,contexts=passage,date=published,family=doc")
    table.add_argument("--mapping", metavar="YAML", help="mapping file: columns, separator, alias_separator, answer_keypoint, preset")
    table.add_argument("--preset", help=f"start from a named mapping ({', '.join(PRESETS)})")
    table.add_argument("--corpus", metavar="FILE", help="documents named by relevant_doc_ids: a table with doc_id, text, title (and date, family, status: its metadata)")
    table.add_argument("--split", help="split of a saved DatasetDict (default: its only split)")
    files = formats.add_parser("files", help=FILES_HELP, description=FILES_HELP)
    files.add_argument("source", metavar="SRC", help="folder of documents (read recursively)")
    files.add_argument("destination", metavar="DST", help="knowledge base folder to create or update")
    files.add_argument("--families", metavar="FILE", help="CSV (doc_id,family,date) or YAML doc_id: {family, date} overriding the inferred ones")
    files.add_argument("--strict", action="store_true", help="an unreadable file is an error (exit 2, nothing written)")
    files.add_argument("--force", action="store_true", help="replace a dataset in DST that this command did not write")
    files.add_argument("--follow-links", action="store_true",
                       help="import links to files outside SRC too (default: listed as not imported)")
    files.set_defaults(runner=_run_files)


FILES_HELP = ("a folder of .md/.txt/.html/.pdf/.docx/.pptx/.xlsx files: doc_id = relative path, title, metadata with "
              "version family and date; re-runs update only what changed")


def _run_files(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tuner.dataset.importers import import_files
    from tuner.progress import RichReporter

    families = Path(args.families) if args.families else None
    result = import_files(Path(args.source), Path(args.destination), families=families, strict=args.strict,
                          force=args.force, follow_links=args.follow_links, reporter=RichReporter())
    for path, reason in result.failed:
        print(f"{path}: {reason}")
    for doc_id in result.unmapped:
        print(f"{args.families}: '{doc_id}' names no imported file")
    print(f"{args.destination}: {result.documents} documents: {len(result.added)} added, {len(result.changed)} changed, "
          f"{len(result.removed)} removed, {len(result.unchanged)} unchanged"
          + (f"; {result.skipped} files of other types skipped" if result.skipped else "")
          + (f"; {len(result.failed)} files not imported (reasons above)" if result.failed else ""))
    for label, ids in (("added", result.added), ("changed", result.changed), ("removed", result.removed)):
        if ids:
            print(f"  {label}: {', '.join(ids[:20])}{' ...' if len(ids) > 20 else ''}")
    return 0


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import write_dataset
    from tuner.errors import UserError

    if getattr(args, "runner", None) is not None:
        return int(args.runner(args))
    result: ImportResult = args.importer(args)
    for what, records in (("documents", result.corpus), ("questions", result.golden)):
        if not records:  # said of the input: the folder write_dataset would name is a temporary one
            raise UserError(f"{args.source}: no {what} to import" + (f" ({result.notes[0]})" if result.notes else ""))
    dataset = write_dataset(args.destination, result.corpus, result.golden, result.conflicts, force=args.force)
    print(f"{args.destination}: imported {args.format}: {dataset.summary()}")
    for note in result.notes:
        print(f"{args.destination}: {note}")
    return 0
