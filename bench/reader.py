"""Benchmark of the offline reader (issue 11 §3): the readers of :data:`READERS` (the default before, the span
reader, the default now) and the ceiling of any reader that answers with at most two sentences.

For each dataset, one retrieval configuration, and each reader of the extractive generator, the v0
and v3 variants are answered and judged (lexical judge, default noise), and the script reports:

- reading efficiency = v0 faithful / v0 context support (of the keypoints the context holds, the share
  the answer states);
- v0 faithful, v3 misled rate, v3 Δfaithful with its paired-bootstrap 95% interval and its width;
- the oracle bound of a reader that answers from the best-scored sentence(s): the reading efficiency
  reached if the answer were the 1 (or 2) best sentences for the whole question (every value in them,
  so an upper bound for any span taken from them, not a reader that commits to one value), for the
  default reader's scoring;
- the ceiling: the same for ANY 1 (or 2) sentences of the v0 context, picked with the keypoints
  (:func:`ceiling`): no reader that answers with at most that many whole sentences can do better.

Run: ``.venv/bin/python bench/reader.py [CONFLICTNQ_JSONL]`` (default
``/work/shared/datasets/conflictnq/conflict_nq_val.jsonl``; skipped when absent) — prints a Markdown
table; ``--append`` also appends it to bench/HISTORY.md (the log).
"""

from __future__ import annotations

import os
import sys
import tempfile
from itertools import chain, permutations
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.robustness import results_header  # noqa: E402
from tuner.cache import DiskCache, default_cache_root  # noqa: E402
from tuner.dataset import Dataset, GoldenCase, load_dataset, resolve_dataset, write_dataset  # noqa: E402
from tuner.dataset.importers import import_conflictnq  # noqa: E402
from tuner.embedding import EmbeddingContext  # noqa: E402
from tuner.evaluation import CaseOutcome, Responder, RobustnessEvaluator, summarize  # noqa: E402
from tuner.generation import ExtractiveGenerator, ExtractiveGeneratorConfig  # noqa: E402
from tuner.judging import LexicalJudge, normalize  # noqa: E402
from tuner.metrics import faithful  # noqa: E402
from tuner.variants import VariantsConfig  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import DEFAULT_EMBEDDING_MODEL, RetrievalSettings  # noqa: E402
from tuner.text import split_sentences  # noqa: E402
from tuner.verdicts import SUPPORTED  # noqa: E402

HISTORY = Path(__file__).with_name("HISTORY.md")
HEADING = "### Offline reader: idf word match, two sentences, and the true ceiling (issue 11 §3)"
CONFLICTNQ = Path("/work/shared/datasets/conflictnq/conflict_nq_val.jsonl")
READERS = {
    "sentence, 1 per part, word_match 0": ExtractiveGeneratorConfig(max_sentences=1, word_match=0.0),
    "span": ExtractiveGeneratorConfig(reader="span"),
    "sentence, 2 sentences, word_match 0.6 (default)": ExtractiveGeneratorConfig(),
}
"""The readers compared: the ranking of the default before issue 11 §3 (cosine and position only, one sentence;
questions are now split into parts, so two-part questions read better than the old default did), the span
reader, and the default now."""


def oracle(generator: ExtractiveGenerator, judge: LexicalJudge, dataset: Dataset, outcomes: list[CaseOutcome], size: int) -> float:
    """Mean v0 faithfulness if the answer were the ``size`` best-scored sentences for the whole question."""
    scores = []
    for outcome in outcomes:
        passages = outcome.variants["v0"].context.passages
        best = generator.score(outcome.case.question, passages)[:size]
        verdicts = judge.judge(
            outcome.case.question, " ".join(s.text for s in best), passages,
            outcome.case.keypoints, dataset.wrong_answers(outcome.case),
        )
        value = faithful(verdicts) if best else 0.0
        scores.append(0.0 if value is None else value)
    return sum(scores) / len(scores)


def ceiling(judge: LexicalJudge, dataset: Dataset, outcomes: list[CaseOutcome], size: int) -> float:
    """Mean v0 faithfulness of the best answer made of any ``size`` or fewer sentences of the v0 context.

    The sentences are picked WITH the keypoints (every single sentence and, for ``size`` 2, every ordered
    pair of distinct sentences is judged; the best faithful score wins), so this is the ceiling of any
    reader that answers with at most ``size`` whole sentences of its context, under the real judge.
    A keypoint counts only where the v0 context supports it, as in ``faithful``.
    """
    scores = []
    for outcome in outcomes:
        v0 = outcome.variants["v0"]
        supported = [v.context == SUPPORTED for v in v0.verdicts]
        target = sum(supported) / len(supported) if supported else 0.0
        sentences = list(dict.fromkeys(s for p in v0.context.passages for s in split_sentences(p)))
        answers = chain(sentences, (" ".join(pair) for pair in permutations(sentences, 2))) if size == 2 else sentences
        best = 0.0
        for answer in answers if target else ():
            stated = judge.judge(outcome.case.question, answer, [], outcome.case.keypoints, dataset.wrong_answers(outcome.case))
            best = max(best, sum(v.answer == SUPPORTED and s for v, s in zip(stated, supported)) / len(supported))
            if best == target:
                break
        scores.append(best)
    return sum(scores) / len(scores)


def short_keypoints(case: GoldenCase, judge: LexicalJudge) -> bool:
    """Whether every alias of every keypoint is matched exactly by the lexical judge (≤ its long-keypoint length)."""
    return all(len(normalize(a).text.split()) <= judge.long_keypoint_tokens for kp in case.keypoints for a in kp)


def row(name: str, reader: str, outcomes: list[CaseOutcome]) -> tuple[str, float]:
    """The Markdown row of one reader on ``outcomes``, and their v0 context support."""
    report = summarize(outcomes, ("v0", "v3"))
    v0, v3 = report.variants["v0"], report.variants["v3"]
    support = v0.context_support.value
    ci = v3.delta_ci
    delta = "n/a" if v3.delta_faithful is None else f"{v3.delta_faithful:.3f}"
    interval = "n/a" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}] (width {ci[1] - ci[0]:.2f})"
    misled = "n/a" if v3.misled_rate is None else f"{v3.misled_rate.value:.3f}"
    return (
        f"| {name} | {reader} | {v0.faithful.value / support:.3f} | {v0.faithful.value:.3f} "
        f"({v0.faithful.n}/{v0.faithful.n_total}) | {support:.3f} | {misled} | {delta} | {interval} |"
    ), support


def measure(name: str, dataset: Dataset, settings: RetrievalSettings, root: Path, embeddings: EmbeddingContext) -> list[str]:
    """Markdown rows per reader and the oracle bound on ``dataset`` at ``settings``; for a dataset with
    long keypoints, the same again on its cases with short keypoints only."""
    encoder = embeddings.encoder(DEFAULT_EMBEDDING_MODEL, root)
    pipeline = RetrievalPipeline(dataset, cache=DiskCache(root), encoder=encoder)
    judge = LexicalJudge()
    short = {c.id for c in dataset.golden if short_keypoints(c, judge)}
    groups = {name: lambda o: True}
    if len(short) < len(dataset.golden):
        groups[f"{name}, short keypoints ({len(short)} cases)"] = lambda o: o.case.id in short
    rows: dict[str, list[str]] = {label: [] for label in groups}
    for reader, config in READERS.items():
        generator = ExtractiveGenerator(config, encoder)
        evaluator = RobustnessEvaluator(pipeline, Responder(generator, judge), VariantsConfig())
        outcomes = evaluator.evaluate(settings, ("v0", "v3"))
        for label, keep in groups.items():
            kept = [o for o in outcomes if keep(o)]
            text, support = row(label, reader, kept)
            rows[label].append(text)
            if config == ExtractiveGeneratorConfig():
                bounds = " / ".join(f"{oracle(generator, judge, dataset, kept, size) / support:.3f}" for size in (1, 2))
                rows[label].append(f"| {label} | oracle: best 1 / 2 sentences | {bounds} | | | | | |")
                bounds = " / ".join(f"{ceiling(judge, dataset, kept, size) / support:.3f}" for size in (1, 2))
                rows[label].append(f"| {label} | ceiling: any 1 / 2 sentences | {bounds} | | | | | |")
    return [line for label in groups for line in rows[label]]


def datasets(conflictnq: Path, folder: Path) -> list[tuple[str, Dataset, RetrievalSettings]]:
    """(label, dataset, settings) of every benchmark that can run here."""
    found = []
    if conflictnq.exists():
        imported = import_conflictnq(conflictnq)
        dataset = write_dataset(folder / "conflictnq", imported.corpus, imported.golden, imported.conflicts)
        found.append(("ConflictNQ val", dataset, RetrievalSettings(top_k=8)))
    else:
        print(f"skipping ConflictNQ: {conflictnq} not found", file=sys.stderr)
    found.append(("demo", load_dataset(resolve_dataset("demo")), RetrievalSettings(top_k=8)))
    zh = RetrievalSettings(top_k=8, chunk_unit="chars", chunk_size=300, retriever="bm25")
    found.append(("demo-zh", load_dataset(resolve_dataset("demo-zh")), zh))
    return found


def main() -> None:
    arguments = [a for a in sys.argv[1:] if a != "--append"]
    conflictnq = Path(arguments[0]) if arguments else CONFLICTNQ
    lines = [
        *results_header(HEADING),
        "- offline backends: extractive generator (readers below: `1 per part, word_match 0` = the ranking of the "
        "default before this change), "
        "lexical judge; default noise (v3 `in_index`); variants v0 and v3",
        "- settings: ConflictNQ and demo `--top-k 8` (other settings default); demo-zh "
        "`--top-k 8 --chunk-unit chars --chunk-size 300 --retriever bm25`",
        "- reading efficiency = v0 faithful / v0 context support; oracle = the same if the answer were the "
        "1 / 2 best-scored sentences for the whole question (every value in them: an upper bound for spans taken from them); "
        "ceiling = the same for the best of ANY 1 / 2 sentences of the v0 context (chosen with the keypoints)",
        "",
        "| dataset | reader | reading efficiency | v0 faithful (n/N) | v0 context support | v3 misled | v3 Δ | v3 Δ 95% interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    embeddings = EmbeddingContext()  # one model load for every dataset
    with tempfile.TemporaryDirectory(prefix="tuner-reader-") as folder:
        for name, dataset, settings in datasets(conflictnq, Path(folder)):
            lines += measure(name, dataset, settings, default_cache_root(), embeddings)
    text = "\n".join([*lines, ""])
    print(text)
    if "--append" in sys.argv:
        with HISTORY.open("a", encoding="utf-8") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
