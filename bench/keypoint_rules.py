"""Recall and precision of ``tuner golden keypoints``' offline rules (:func:`tuner.golden.rule_keypoints`) against the
keypoints the demo was written with (issue 38 §2), Chinese and English.

Each demo case's reference answer and relevant documents go through the rules, as the command sends them. A found
keypoint matches a written one when one of its aliases equals one of the written one's aliases, both compared as the
rules compare text with documents (NFKC, lower case, spaces and thousands commas dropped); each written keypoint is
matched at most once. Recall = written keypoints matched / written; precision = found keypoints matching a written one /
found; the demo's keypoints are its quantities and dates only, so precision is also given over the found keypoints
holding a number not glued to a letter (names, product codes and places the rules find count against the first figure though they are facts of the
answer). Also: answers the rules give no keypoint at all, and the found keypoints matching none (listed by count with
``--wrong``).

Run: HF_HUB_OFFLINE=1 .venv/bin/python bench/keypoint_rules.py [--seed 0] [--wrong 15]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from tuner.dataset.demo import demo_records
from tuner.golden import rule_keypoints
from tuner.text import normalize_text


_NUMERAL = re.compile(r"(?<![A-Za-z0-9])[0-9]|[〇一二两三四五六七八九十百千万亿]")
"""A quantity, not a product code (``O86``)."""


def _squash(text: str) -> str:
    return re.sub(r"[\s,，]+", "", normalize_text(text))


def measure(language: str, seed: int) -> tuple[dict[str, int], Counter[str]]:
    corpus, golden, _ = demo_records(seed, language)
    texts = {doc["doc_id"]: f"{doc['title']}\n{doc['text']}" for doc in corpus}
    counts = Counter[str]()
    wrong = Counter[str]()
    for case in golden:
        written = [{_squash(a) for a in (k if isinstance(k, list) else [k])} for k in case["keypoints"]]
        found = rule_keypoints(case["ground_truth"], [texts[d] for d in case["relevant_doc_ids"]])
        counts["cases"] += 1
        counts["written"] += len(written)
        counts["found"] += len(found)
        counts["no keypoint"] += not found
        unmatched = list(range(len(written)))
        for aliases in found:
            squashed = {_squash(a) for a in aliases}
            hit = next((i for i in unmatched if written[i] & squashed), None)
            numeric = bool(_NUMERAL.search(aliases[0]))
            counts["found with a number"] += numeric
            if hit is None:
                wrong[aliases[0]] += 1
            else:
                unmatched.remove(hit)
                counts["correct"] += 1
                counts["correct with a number"] += numeric
        counts["recovered"] += len(written) - len(unmatched)
    return dict(counts), wrong


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--wrong", type=int, default=15, help="list this many of the most frequent wrong keypoints")
    args = parser.parse_args()
    print("| demo | cases | no keypoint | written | recovered (recall) | found | matching (precision) | found with a number | matching (precision) |")
    print("|---|---|---|---|---|---|---|---|---|")
    wrongs = {}
    for language in ("zh", "en"):
        c, wrongs[language] = measure(language, args.seed)
        print(f"| {language} seed {args.seed} | {c['cases']} | {c['no keypoint']} | {c['written']} | "
              f"{c['recovered']} ({c['recovered'] / c['written']:.3f}) | {c['found']} | "
              f"{c['correct']} ({c['correct'] / max(c['found'], 1):.3f}) | {c['found with a number']} | "
              f"{c['correct with a number']} ({c['correct with a number'] / max(c['found with a number'], 1):.3f}) |")
    for language, wrong in wrongs.items():
        print(f"{language} wrong keypoints: " + ", ".join(f"{text} ×{n}" for text, n in wrong.most_common(args.wrong)))


if __name__ == "__main__":
    main()
