"""Command line (``tuner validate`` → tuner.dataset): check a dataset folder, one line per problem."""

from __future__ import annotations

import argparse

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
    print(f"{args.dataset}: {labels_line(dataset.provenance)}")
    return 0
