"""Command line (``tuner export`` → tuner.front, tuner.export): write a front trial's settings for deployment."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from tuner.commands._study_args import add_study_arguments, loaded_study

HELP = ("Export a trial's retrieval settings (with provenance) as .yaml, .json or .env for deployment, or the nearest "
        "LangChain / LlamaIndex / Dify / RAGFlow settings or pymilvus search (--format).")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_study_arguments(parser)
    choice = parser.add_mutually_exclusive_group(required=True)
    choice.add_argument("--trial", type=int, metavar="N", help="trial number")
    choice.add_argument("--pick", metavar="RULE", help="knee, min-delta (with --min-recall) or cheapest")
    parser.add_argument("--min-recall", type=float, metavar="X", help="recall floor for --pick min-delta")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output file (.yaml, .json or .env)")
    parser.add_argument("--format", choices=_Formats(), default="tuner", metavar="FORMAT",
                        help="%(choices)s: tuner (default: what tuner serve and tuner.Retriever read), or the nearest "
                             "settings of a framework (langchain, llamaindex), of a platform's own knowledge base (dify, "
                             "ragflow) or, from a study on Milvus, the pymilvus search of the collection it measured "
                             "(milvus) as YAML with a table of what does not translate")


class _Formats:
    """``--format``'s choices: ``tuner`` and the names of ``tuner.export.FRAMEWORKS``, read when argparse checks a
    value or prints the help (the export package loads the engines: not at every start of tuner)."""

    def __iter__(self) -> Iterator[str]:
        from tuner.export import FRAMEWORKS

        return iter(("tuner", *FRAMEWORKS))

    def __contains__(self, name: object) -> bool:
        return name in list(self)


def run(args: argparse.Namespace) -> int:
    import optuna

    from tuner.errors import UserError
    from tuner.export import write_export, write_framework_export
    from tuner.pareto import pick
    from tuner.front import confirmed_entries, study_comparisons, study_front
    from tuner.report import trial_document
    from tuner.study import load_study

    loaded = loaded_study(args)
    study = load_study(loaded)
    comparisons = study_comparisons(study)  # the front and the pick notes compare each pair once
    directions, floor, entries = study_front(study, comparisons)
    entries = confirmed_entries(study, entries)  # pick rules use the held-out figures when the study has them
    if args.trial is not None:
        if not 0 <= args.trial < len(study.trials) or study.trials[args.trial].state != optuna.trial.TrialState.COMPLETE:
            raise UserError(f"trial {args.trial} is not a complete trial of study '{study.study_name}'")
        number, rule = args.trial, None
    else:
        number, rule = pick(args.pick, entries, directions, floor, min_recall=args.min_recall).number, args.pick
    document = trial_document(study, number, rule, loaded.storage, comparisons)
    if args.format == "tuner":
        print(write_export(args.output, document))
    else:
        print(write_framework_export(args.output, document, args.format))
    return 0
