"""The offline span reader's reading efficiency on the development sets, and what bounds it (issue 47 §9).

The span reader (``reader: span``, :mod:`tuner.generation._span`) answers each part of a question with the typed span
(date, number, name) its rules pick in the best-scored sentence, or with its best sentences when the part asks for no
type or that sentence holds no span. Its reading efficiency (v0 faithful / v0 context support) falls short in three
places, measured here one at a time, each an upper bound picked WITH the keypoints (no reader can know them):

- **right sentence**: the span rule applied to the context sentence that holds the answer (the best of every context
  sentence for each part): what a perfect sentence ranking would give with the same span rule;
- **any candidate**: the best candidate span of the part's type in any context sentence: a perfect choice among the
  candidates the rules make (beyond it, the answer is not a candidate: a type or boundary rule misses it);
- **any span of any type**: the best date, number or name candidate whatever the question asks, and for a part that
  asks no type (or has no candidate) the best single sentence: the ceiling of a reader that commits to one span or
  one sentence per part.

Rows: all cases, and the cases whose every part asks a date, number or name (the short-answer questions a benchmark
such as RGB asks). Settings as bench/reader.py (ConflictNQ val and demo ``top_k 8``; demo-zh and a seeded 200-question
sample of CMRC 2018 trial with conflicts by ``tuner corrupt``: BM25, 300 characters, ``top_k 8``).

Run from the repository root: ``PYTHONPATH=.:bench python bench/span_bound.py [--cmrc-cases N] [--datasets A,B]`` (ConflictNQ and CMRC are
read from /work/shared/datasets, skipped when absent).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tuner.cache import DiskCache, default_cache_root  # noqa: E402
from tuner.dataset import Dataset, load_dataset, resolve_dataset, write_dataset  # noqa: E402
from tuner.dataset.importers import import_conflictnq, import_squad  # noqa: E402
from tuner.embedding import EmbeddingContext  # noqa: E402
from tuner.evaluation import CaseOutcome, Responder, RobustnessEvaluator  # noqa: E402
from tuner.generation import ExtractiveGenerator, ExtractiveGeneratorConfig  # noqa: E402
from tuner.generation._span import _CANDIDATES, answer_type, extract_span, question_parts  # noqa: E402
from tuner.judging import LexicalJudge  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import DEFAULT_EMBEDDING_MODEL, RetrievalSettings  # noqa: E402
from tuner.text import split_sentences  # noqa: E402
from tuner.variants import VariantsConfig  # noqa: E402
from tuner.verdicts import SUPPORTED  # noqa: E402

SHARED = Path("/work/shared/datasets")
CONFLICTNQ = SHARED / "conflictnq" / "conflict_nq_val.jsonl"
CMRC = SHARED / "cmrc2018" / "cmrc2018_trial.json"
ZH = RetrievalSettings(top_k=8, chunk_unit="chars", chunk_size=300, retriever="bm25")
TYPED = ("date", "number", "entity")


@dataclass
class Case:
    """One case's figures: keypoints the v0 context supports, and how many of them each answer states."""

    supported: int
    keypoints: int
    typed: bool
    stated: dict[str, int]


def _stated(judge: LexicalJudge, outcome: CaseOutcome, dataset: Dataset, supported: list[bool], answer: str) -> int:
    """How many supported keypoints ``answer`` states, by the lexical judge (nothing else in hand)."""
    verdicts = judge.judge(outcome.case.question, answer, [], outcome.case.keypoints, dataset.wrong_answers(outcome.case))
    return sum(v.answer == SUPPORTED and s for v, s in zip(verdicts, supported))


def _best(options: Sequence[str], score: Callable[[str], int]) -> str:
    """The option stating the most (the first of equals); empty when there is none."""
    return max(options, key=score, default="")


def case_figures(judge: LexicalJudge, dataset: Dataset, outcome: CaseOutcome) -> Case:
    v0 = outcome.variants["v0"]
    supported = [v.context == SUPPORTED for v in v0.verdicts]
    sentences = list(dict.fromkeys(s for p in v0.context.passages for s in split_sentences(p)))
    parts = question_parts(outcome.case.question)
    kinds = [answer_type(part) for part in parts]

    def score(answer: str) -> int:
        return _stated(judge, outcome, dataset, supported, answer)

    right, candidate, any_span = [], [], []
    for part, kind in zip(parts, kinds):
        spans = [extract_span(part, sentence, kind) for sentence in sentences] if kind in TYPED else []
        right.append(_best([s for s in spans if s] or sentences, score))
        typed = [c.text for sentence in sentences for c in _CANDIDATES[kind](sentence)] if kind in TYPED else []
        candidate.append(_best(typed or sentences, score))
        every = [c.text for sentence in sentences for rule in _CANDIDATES.values() for c in rule(sentence)]
        any_span.append(_best([*every, *sentences], score))
    answers = {"right sentence": " ".join(right), "any candidate": " ".join(candidate), "any span of any type": " ".join(any_span)}
    reader = sum(v.answer == SUPPORTED and s for v, s in zip(v0.verdicts, supported))  # the run's own verdicts
    stated = {"reader": reader, **{name: score(text) if any(supported) else 0 for name, text in answers.items()}}
    return Case(sum(supported), len(supported), all(kind in TYPED for kind in kinds), stated)


def table_rows(name: str, cases: list[Case]) -> list[str]:
    """Reading efficiency per answer: Σ stated / Σ supported (each case weighted by its keypoints, as faithful /
    context support averages per-case shares: equal where every case has one keypoint)."""
    rows = []
    for label, kept in ((name, cases), (f"{name}, typed questions", [c for c in cases if c.typed])):
        support = sum(c.supported / c.keypoints for c in kept if c.keypoints)
        if not kept or not support:
            continue
        figures = [sum(c.stated[k] / c.keypoints for c in kept if c.keypoints) / support for k in kept[0].stated]
        rows.append(f"| {label} | {len(kept)} | {support / len(kept):.3f} | " + " | ".join(f"{f:.3f}" for f in figures) + " |")
    return rows


def datasets(folder: Path, cmrc_cases: int) -> list[tuple[str, Dataset, RetrievalSettings]]:
    found = []
    if CONFLICTNQ.exists():
        imported = import_conflictnq(CONFLICTNQ)
        found.append(("ConflictNQ val", write_dataset(folder / "cnq", imported.corpus, imported.golden, imported.conflicts),
                      RetrievalSettings(top_k=8)))
    if CMRC.exists():
        from cmrc import sample_golden  # bench/cmrc.py: a seeded sample with conflicts made by `tuner corrupt`

        imported = import_squad(CMRC)
        full = write_dataset(folder / "cmrc", imported.corpus, imported.golden, [])
        found.append(("CMRC 2018 trial", sample_golden(full, folder, cmrc_cases), ZH))
    found.append(("demo", load_dataset(resolve_dataset("demo")), RetrievalSettings(top_k=8)))
    found.append(("demo-zh", load_dataset(resolve_dataset("demo-zh")), ZH))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cmrc-cases", type=int, default=200, help="CMRC 2018 trial questions sampled (default 200)")
    parser.add_argument("--datasets", default="ConflictNQ val,CMRC 2018 trial,demo,demo-zh", help="which (comma-separated)")
    args = parser.parse_args()
    lines = ["| dataset | cases | v0 context support | span reader | right sentence | any candidate | any span of any type |",
             "|---|---|---|---|---|---|---|"]
    embeddings = EmbeddingContext()
    judge = LexicalJudge()
    with tempfile.TemporaryDirectory(prefix="tuner-span-") as folder:
        for name, dataset, settings in datasets(Path(folder), args.cmrc_cases):
            if name not in args.datasets.split(","):
                continue
            encoder = embeddings.encoder(DEFAULT_EMBEDDING_MODEL, default_cache_root())
            pipeline = RetrievalPipeline(dataset, cache=DiskCache(default_cache_root()), encoder=encoder)
            generator = ExtractiveGenerator(ExtractiveGeneratorConfig(reader="span"), encoder)
            outcomes = RobustnessEvaluator(pipeline, Responder(generator, judge), VariantsConfig()).evaluate(settings, ("v0",))
            cases = [case_figures(judge, dataset, o) for o in outcomes if o.case.keypoints and o.variants["v0"].missing is None]
            lines += table_rows(name, cases)
            print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
