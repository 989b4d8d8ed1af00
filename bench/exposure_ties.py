"""Issue 37 §1: how many cases' conflict exposure an exact tie at the cut decided.

For each part and each ``--top-k`` (BM25, every other setting at its default) it evaluates retrieval once
(:func:`tuner.evaluation.evaluate_retrieval`: exposure over the index with conflicts, and where a tie decided it,
from two more rankings of the cached candidates with conflicting chunks ahead of and behind the chunks they tie
with) and prints exposure as ranked, the cases a tie decided (could become exposed / unexposed), the range of
exposure over tie orders, and the CPU seconds of the evaluation. With ``--study DB --trial N`` (a study's sqlite
file), the trial's own settings are measured too on the part named by ``--study-part``.

Parts: ``demo``, ``demo-zh`` (built in), ``conflictnq`` and ``cmrc`` (as bench/confirm.py builds them from
../shared/datasets into ``--work``; a part whose file is absent is skipped).

Run: cd bench; HF_HUB_OFFLINE=1 PYTHONPATH=..:. python exposure_ties.py [--top-k 1 3] [--work DIR] [PART ...]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import optuna

from tuner.dataset import load_dataset, resolve_dataset
from tuner.evaluation import evaluate_retrieval
from tuner.front import TrialRecord
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings, settings_from_mapping

from confirm import dataset_folder

PARTS = ("demo", "demo-zh", "conflictnq", "cmrc")


def row(part: str, label: str, pipeline: RetrievalPipeline, settings: RetrievalSettings) -> str:
    """One table row: exposure as ranked, the tied cases and the range over tie orders, CPU seconds."""
    start = time.process_time()
    report = evaluate_retrieval(pipeline, settings, "clean", ci=False)
    cpu = time.process_time() - start
    share, ties = report.exposure, report.tied_exposure
    if share is None or ties is None:
        return f"| {part} | {label} | no conflicts | | | | {cpu:.1f} |"
    low, high = ties.range(share.successes) or (0.0, 0.0)
    return (f"| {part} | {label} | {share.value:.3f} ({share.successes}/{share.n_total}) | {ties.tied} | "
            f"+{ties.could_expose} / −{ties.could_unexpose} | [{low:.3f}, {high:.3f}] | {cpu:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=list(PARTS), choices=PARTS)
    parser.add_argument("--top-k", nargs="+", type=int, default=[1, 3])
    parser.add_argument("--work", type=Path, default=Path("/tmp/exposure-ties"))
    parser.add_argument("--cases", type=int, default=300, help="CMRC questions sampled (bench/confirm.py's rule)")
    parser.add_argument("--study", type=Path, help="a study's sqlite file whose --trial settings are measured too")
    parser.add_argument("--trial", type=int)
    parser.add_argument("--study-part", choices=PARTS, default="cmrc")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print("| part | settings (BM25) | exposure as ranked | tied | could expose / unexpose | range over tie orders | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for part in args.parts:
        folder = resolve_dataset(part) if part in ("demo", "demo-zh") else dataset_folder(part, args.work, args.cases)
        if folder is None:
            continue
        pipeline = RetrievalPipeline(load_dataset(folder))
        for k in args.top_k:
            print(row(part, f"top_k {k}", pipeline, RetrievalSettings(retriever="bm25", top_k=k)), flush=True)
        if args.study is not None and args.trial is not None and part == args.study_part:
            storage = f"sqlite:///{args.study.resolve()}"
            study = optuna.load_study(study_name=optuna.get_all_study_names(storage)[0], storage=storage)
            record = TrialRecord.from_trial(study.trials[args.trial])
            settings = settings_from_mapping(record.settings or {}, str(args.study))
            print(row(part, f"trial {args.trial} of {args.study.parent.name} (top_k {settings.top_k})", pipeline, settings),
                  flush=True)


if __name__ == "__main__":
    main()
