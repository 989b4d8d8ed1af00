"""Command line (``tuner validate`` → tuner.dataset): check a dataset folder, one line per problem."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.dataset import GoldenCase

HELP = "Validate a dataset folder (corpus.jsonl, golden.jsonl, optional conflicts.jsonl and dataset.yaml)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="DIR", help="dataset folder")


def run(args: argparse.Namespace) -> int:
    from tuner.dataset import labels_line, load_dataset
    from tuner.text import ZH_THRESHOLD, cjk_share

    dataset = load_dataset(args.dataset)
    if dataset.language_source == "detected":
        share = cjk_share(dataset.corpus_texts())
        how = f"detected: {share:.0%} of letters are CJK, zh from {ZH_THRESHOLD:.0%}; dataset.yaml can declare it"
    else:
        how = "declared in dataset.yaml"
    print(f"{args.dataset}: ok: {dataset.summary()}; language {dataset.language} ({how})")
    counts = dataset.metadata_counts()
    print(f"{args.dataset}: version metadata: {counts.with_family} of {counts.documents} documents (corpus and conflicting) "
          f"have a family, {counts.with_date} a date; {counts.versioned_families} families have more than one version")
    if dataset.retrieval_only:
        print(f"{args.dataset}: no keypoints: supports retrieval-only studies (no faithfulness objective)")
    else:
        empty = [case.id for case in dataset.golden if not case.keypoints]
        if empty:
            print(f"{args.dataset}: warning: {len(empty)} case(s) with empty keypoints (left out of every faithfulness "
                  f"figure): {', '.join(empty)}")
    for line in duplicate_lines(dataset.golden):
        print(f"{args.dataset}: warning: {line}")
    print(f"{args.dataset}: {labels_line(dataset.provenance)}")
    return 0


def duplicate_lines(cases: Sequence[GoldenCase]) -> list[str]:
    """One line per group of golden questions that are one question (exact once normalized, or near duplicates:
    ``tuner.golden.question_groups``): a copy counts a question twice, and a confirmation split keeps a group on one
    side."""
    from tuner.golden import normalize_question, question_groups

    groups: dict[int, list[GoldenCase]] = {}
    for case, root in zip(cases, question_groups([c.question for c in cases])):
        groups.setdefault(root, []).append(case)
    lines = []
    for members in groups.values():
        if len(members) < 2:
            continue
        exact = len({normalize_question(c.question) for c in members}) == 1
        kind = "exact" if exact else "near"
        lines.append(f"duplicate questions ({kind}): " + ", ".join(f"{c.id} {c.question!r}" for c in members))
    return lines
