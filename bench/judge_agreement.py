"""Agreement of the lexical judge (exact matching for short keypoints, best-window token F1 for long
ones) with exact alias matching alone, on the answers and contexts of a real robustness run.

For each dataset: the v0–v4 matrix at ``top_k`` 8 with the offline defaults (extractive generator,
relative noise bands); every (answer, contexts) is judged twice — by ``LexicalJudge()`` and by a
lexical judge that matches every alias exactly (``long_keypoint_tokens`` larger than any keypoint) —
and the per-keypoint verdicts are compared, separately for short keypoints (every alias ≤ 5 tokens)
and long ones, on the answer side and the context side.

Run: ``.venv/bin/python bench/judge_agreement.py demo CONFLICTNQ_DIR`` (a folder written by
``tuner import conflictnq``); prints a Markdown table.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tuner.dataset import GoldenCase, load_dataset, resolve_dataset  # noqa: E402
from tuner.evaluation import Responder, RobustnessEvaluator  # noqa: E402
from tuner.generation import ExtractiveGenerator, ExtractiveGeneratorConfig  # noqa: E402
from tuner.judging import LexicalJudge, normalize  # noqa: E402
from tuner.variants import VARIANTS, VariantsConfig  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402

EXACT = LexicalJudge(long_keypoint_tokens=10**9)
NEW = LexicalJudge()


def is_long(aliases: tuple[str, ...]) -> bool:
    return any(len(normalize(alias).text.split()) > NEW.long_keypoint_tokens for alias in aliases)


def agreement(name: str) -> dict[str, Counter[str]]:
    """Per keypoint class (short/long) and side (answer/context): counts of agreeing and compared verdicts."""
    dataset = load_dataset(resolve_dataset(name))
    pipeline = RetrievalPipeline(dataset)
    settings = RetrievalSettings(top_k=8)
    generator = ExtractiveGenerator(ExtractiveGeneratorConfig(), pipeline.encoder(settings))
    outcomes = RobustnessEvaluator(pipeline, Responder(generator, NEW), VariantsConfig()).evaluate(settings, VARIANTS)
    counts: dict[str, Counter[str]] = {}
    for outcome in outcomes:
        case: GoldenCase = outcome.case
        wrong = dataset.wrong_answers(case)
        for variant in outcome.variants.values():
            if variant.answer.missing_reason:
                continue
            args = (case.question, variant.answer.text, variant.context.passages, case.keypoints, wrong)
            for keypoint, new, exact in zip(case.keypoints, NEW.judge(*args), EXACT.judge(*args)):
                tally = counts.setdefault("long" if is_long(keypoint) else "short", Counter())
                for side in ("answer", "context"):
                    a, b = getattr(new, side), getattr(exact, side)
                    tally[f"{side}_compared"] += 1
                    tally[f"{side}_agree"] += a == b
                    tally[f"{side}_new_supported"] += a == "supported"
                    tally[f"{side}_exact_supported"] += b == "supported"
    return counts


def main(names: list[str]) -> None:
    print("| dataset | keypoints | side | agreement | supported (F1 rule) | supported (exact) |")
    print("|---|---|---|---|---|---|")
    for name in names:
        for kind, tally in sorted(agreement(name).items(), reverse=True):
            for side in ("answer", "context"):
                n = tally[f"{side}_compared"]
                print(
                    f"| {os.path.basename(name.rstrip('/'))} | {kind} | {side} | {tally[f'{side}_agree'] / n:.3f} "
                    f"({tally[f'{side}_agree']}/{n}) | {tally[f'{side}_new_supported']} | {tally[f'{side}_exact_supported']} |"
                )


if __name__ == "__main__":
    main(sys.argv[1:])
