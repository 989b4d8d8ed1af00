"""Command line (**CLI** → public package names): arguments shared by ``tuner run``, ``tuner pareto`` and ``tuner
export`` so they find the same study."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.study import LoadedStudy


def add_study_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", metavar="STUDY.yaml", help="study file")
    parser.add_argument("--out", metavar="DIR", help="output folder (default: from the study file)")
    parser.add_argument("--storage", metavar="URL", help="Optuna storage URL (default: SQLite in the output folder)")
    parser.add_argument("--dataset", metavar="DIR", help="dataset folder, 'demo' or 'demo-zh' (default: from the study file)")


def loaded_study(args: argparse.Namespace) -> LoadedStudy:
    from tuner.study import load_study_file

    return load_study_file(args.study, storage=args.storage, out=args.out, dataset=args.dataset)
