"""Command line (``tuner corrupt`` → tuner.corruption): write a dataset's conflicts.jsonl."""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.errors import DatasetError, UserError

if TYPE_CHECKING:
    from tuner.corruption import CorruptionRun
    from tuner.dataset import Dataset

HELP = "Write conflicts.jsonl: corrupted copies of the golden cases' relevant documents (4 types x 3 severities)."


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="DATASET", help="dataset folder (conflicts.jsonl is written into it)")
    parser.add_argument(
        "--types",
        metavar="A,B",
        help="comma-separated corruption types (default: all of factual_corruption, contradiction_injection, "
        "numeric_typo, relevance_poisoning)",
    )
    parser.add_argument("--severities", metavar="A,B", help="comma-separated severities (default: subtle,moderate,obvious)")
    parser.add_argument("--seed", type=int, default=0, help="random seed; the same seed writes the same file (default 0)")
    parser.add_argument("--max-docs", type=_positive_int, metavar="N", help="corrupt only a seeded sample of N relevant documents")
    parser.add_argument("--force", action="store_true", help="replace an existing conflicts.jsonl")
    parser.add_argument(
        "--also-wrong-answers",
        action="store_true",
        help="also add each conflict's wrong values to its golden cases' wrong_answers (rewrites golden.jsonl)",
    )
    parser.add_argument(
        "--llm-config",
        metavar="FILE",
        help="YAML of an OpenAI-compatible endpoint (base_url, model, api_key_env, ...): an LLM rewrites the documents",
    )


def _choose(value: str | None, valid: Sequence[str], flag: str) -> list[str]:
    if value is None:
        return list(valid)
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in valid]
    if unknown or not names:
        shown = ", ".join(unknown) or repr(value)
        raise UserError(f"{flag}: unknown name {shown} (valid: {', '.join(valid)})")
    return list(dict.fromkeys(names))


def _staged(root: Path, replacements: Mapping[str, str]) -> Dataset:
    """Load a copy of the dataset whose files named in ``replacements`` hold the given text instead.

    Nothing in ``root`` changes; problems are reported with the real paths, as if ``root`` were loaded.
    """
    from tuner.dataset import CORPUS, GOLDEN, load_dataset

    with tempfile.TemporaryDirectory(prefix="tuner-corrupt-") as stage:
        for name in (CORPUS, GOLDEN):
            if (root / name).is_file() and name not in replacements:
                shutil.copyfile(root / name, Path(stage) / name)
        for name, text in replacements.items():
            (Path(stage) / name).write_text(text, "utf-8")
        try:
            return dataclasses.replace(load_dataset(stage), path=root)
        except DatasetError as exc:
            raise DatasetError([line.replace(stage, str(root), 1) for line in exc.problems]) from None


def _summary(run: CorruptionRun, kinds: Sequence[str], severities: Sequence[str]) -> str:
    counts = run.counts()
    per_kind = "; ".join(f"{kind} " + ", ".join(f"{s} {counts[(kind, s)]}" for s in severities) for kind in kinds)
    skipped = f"; skipped {len(run.skipped)} ({', '.join(sorted({r for *_, r in run.skipped}))})" if run.skipped else ""
    return f"{len(run.conflicts)} conflicting documents from {len({c.conflicts_with for c in run.conflicts})} relevant documents: {per_kind}{skipped}"


def run(args: argparse.Namespace) -> int:
    from tuner.corruption import CORRUPTORS, SEVERITIES, conflicts_jsonl, corrupt_dataset, with_wrong_answers, wrong_answers_by_case
    from tuner.dataset import CONFLICTS, GOLDEN
    from tuner.io import atomic_write_text

    root = Path(args.dataset)
    kinds = _choose(args.types, tuple(CORRUPTORS), "--types")
    severities = _choose(args.severities, SEVERITIES, "--severities")
    if not root.is_dir():
        raise UserError(f"{root}: dataset folder not found")
    if (root / CONFLICTS).exists() and not args.force:
        raise UserError(f"{root / CONFLICTS}: already exists; pass --force to replace it")
    dataset = _staged(root, {})
    if args.llm_config:
        from tuner.corruption.llm import llm_corruptors
        from tuner.llm import load_llm_config

        corruptors, concurrency = llm_corruptors(load_llm_config(args.llm_config), kinds)
    else:
        corruptors, concurrency = {kind: CORRUPTORS[kind] for kind in kinds}, 1
    result = corrupt_dataset(dataset, corruptors, severities, seed=args.seed, max_docs=args.max_docs, concurrency=concurrency)
    if not result.conflicts:
        raise UserError(f"{root}: nothing to corrupt: {_summary(result, kinds, severities)}")
    files = {CONFLICTS: conflicts_jsonl(result.conflicts)}
    added = wrong_answers_by_case(dataset, result.conflicts) if args.also_wrong_answers else {}
    if added:
        files[GOLDEN] = with_wrong_answers((root / GOLDEN).read_text("utf-8"), added)
    _staged(root, files)
    for name, text in files.items():
        atomic_write_text(root / name, text)
    extra = f"; added {sum(map(len, added.values()))} wrong answers to {len(added)} golden cases" if args.also_wrong_answers else ""
    print(f"{root / CONFLICTS}: wrote {_summary(result, kinds, severities)}{extra}")
    return 0
