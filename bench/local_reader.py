"""Benchmark of the local generator (issues 32, 37, 46): Gemma 3 270M (completion prompt) and Qwen2.5-Coder 0.5B and
1.5B Instruct (chat template) on llama.cpp beside the offline span reader (``--readers`` picks them).

Parts (any of them; all by default):

- ``speed``: seconds per answer (wall and CPU) of each reader through the generator (a local model's chat template or
  completion prompt; the span reader on the same passages), for prompts of 200 and 500 tokens of each model's own
  tokenizer, median of ``--repeats`` calls with the prompt cache defeated (each call's passages start differently),
  the load average beside each row; llama.cpp at each ``--threads``; with ``--transformers``, transformers'
  GGUF loader (fp32) on Gemma once, when ``gguf`` and ``accelerate`` are installed.
- ``readers``: reading efficiency (v0 faithful / v0 context support), v0 faithful, v3 misled rate and Δfaithful
  with its paired-bootstrap interval, local model beside the span reader (lexical judge, default noise), on the
  first ``--cases`` cases of ConflictNQ val, a seeded sample of CMRC 2018 trial (with conflicts made by
  ``tuner corrupt``, as in bench/cmrc.py), the demo and the Chinese demo.
- ``prompts``: reading efficiency of the local model under each prompt of :data:`PROMPTS` (``--prompts``, names
  separated by ``;``) beside the span reader's, at ``hybrid k3``, v0 only, on the ``--datasets``.
- ``agreement``: per-configuration v3 Δfaithful and susceptibility (Δ among the cases exposed to a conflicting
  chunk) of both readers on :data:`CONFIGS` (8 configurations spanning top_k, relevance threshold and retriever;
  ``--configs`` picks some) × ``--cases`` cases of ConflictNQ val and the Chinese demo, with the exposure and the
  unexposed cases whose v3 context still moved; Spearman's ρ between the two readers on each, with a case-bootstrap
  95% interval.
- ``position``: v3 Δfaithful of the local model with the conflicting chunks injected (``hard_mode: inject``; in the
  default ``in_index`` mode they sit where retrieval ranks them, whatever the position) at the front, middle and end.

Answers go through the LLM call cache (``$TUNER_CACHE``, default ``~/.cache/tuner``), so a rerun costs only what changed.

Run from the repository root: ``PYTHONPATH=. python bench/local_reader.py [speed] [prompts] [readers] [agreement] [position]
[--cases 40] [--threads 1,2] [--append]`` (needs ``tuner[local]``; ConflictNQ and CMRC are read from
``/work/shared/datasets`` and skipped when absent; as a script, not ``-m bench.local_reader``, because the CMRC sample
comes from bench/cmrc.py, which imports its neighbours as scripts do). ``--append`` appends the tables to
bench/HISTORY.md (the log; the current figure goes to bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

from bench.robustness import results_header  # noqa: E402
from tuner.cache import DiskCache, default_cache_root  # noqa: E402
from tuner.dataset import Dataset, load_dataset, resolve_dataset, write_dataset  # noqa: E402
from tuner.dataset.importers import import_conflictnq  # noqa: E402
from tuner.evaluation import CaseOutcome, Responder, RobustnessEvaluator, summarize  # noqa: E402
from tuner.evaluation.robustness import exposure_parts  # noqa: E402
from tuner.generation import (  # noqa: E402
    LOCAL_PROMPT,
    ExtractiveGeneratorConfig,
    Generator,
    LocalGenerator,
    LocalGeneratorConfig,
    LocalPrompt,
    Shot,
    build_generator,
    llama_cpp_runtime,
    model_file,
)
from tuner.judging import LexicalJudge  # noqa: E402
from tuner.llm import Usage  # noqa: E402
from tuner.backends import BackendResources  # noqa: E402
from tuner.metrics import delta_parts, grade_delta  # noqa: E402
from tuner.variants import VariantsConfig  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import DEFAULT_EMBEDDING_MODEL, RetrievalSettings  # noqa: E402

HISTORY = Path(__file__).with_name("HISTORY.md")
SHARED = Path("/work/shared/datasets")
CONFLICTNQ = SHARED / "conflictnq" / "conflict_nq_val.jsonl"
CMRC = SHARED / "cmrc2018" / "cmrc2018_trial.json"
ZH_CHUNKS = {"chunk_unit": "chars", "chunk_size": 300}
CONFIGS: dict[str, dict[str, object]] = {
    "bm25 k1": {"retriever": "bm25", "top_k": 1},
    "bm25 k3": {"retriever": "bm25", "top_k": 3},
    "dense k1": {"retriever": "dense", "top_k": 1},
    "dense k3": {"retriever": "dense", "top_k": 3},
    "hybrid k1": {"retriever": "hybrid", "top_k": 1},
    "hybrid k3": {"retriever": "hybrid", "top_k": 3},
    "hybrid k3 t0.5": {"retriever": "hybrid", "top_k": 3, "relevance_threshold": 0.5},
    "hybrid k3 t0.8": {"retriever": "hybrid", "top_k": 3, "relevance_threshold": 0.8},
}
"""The configurations of the agreement study (top_k at most 3: prompts of at most ~500 tokens); the readers and
position parts use ``hybrid k3``, so their answers
are the agreement study's, from the cache."""
READING = "hybrid k3"
PARTS = ("speed", "prompts", "readers", "agreement", "position")
QUESTION_STOPS = LOCAL_PROMPT.stops
BLANK_LINE_STOPS = ("\n\n", "Question:", "问题：")
BODY = LOCAL_PROMPT.body
QUOTE, QUOTE_SHOTS = LOCAL_PROMPT.instruction, LOCAL_PROMPT.shots
INSTRUCTION = {"en": "Answer the question using the words of the passages.", "zh": "请用段落中的原话回答问题。"}
EVERY_PART = {
    "en": "Answer every part of the question in one sentence, using the words of the passages.",
    "zh": "请用段落中的原话，在一句话里回答问题的每一部分。",
}
SHOTS = {
    "en": (Shot(QUOTE_SHOTS["en"][0].passages, "When was the Lumen K2 desk lamp released, and what LED does it use?",
                "The Lumen K2 desk lamp was released in March 2019 and uses a 9-watt LED."),),
    "zh": (Shot(QUOTE_SHOTS["zh"][0].passages, "青柳牌电热水壶是什么时候上市的？容量是多少？", "青柳牌电热水壶于2020年5月上市，容量为1.7升。"),),
}
"""``LOCAL_PROMPT``'s worked example with a two-part question, answered in one sentence in the passage's words."""
PROMPTS: dict[str, LocalPrompt] = {
    "instruction first": LocalPrompt(BODY, QUESTION_STOPS, INSTRUCTION),
    "instruction first, every part": LocalPrompt(BODY, QUESTION_STOPS, EVERY_PART),
    "instruction first, every part, stop at a blank line": LocalPrompt(BODY, BLANK_LINE_STOPS, EVERY_PART),
    "instruction after the question": LocalPrompt({
        "en": "{context}\n\nQuestion: {question}\nAnswer the question using the words of the text above.\nAnswer:",
        "zh": "{context}\n\n问题：{question}\n请用上文中的原话回答问题。\n回答：",
    }, QUESTION_STOPS),
    "bare, first line (issue 32)": LocalPrompt({"en": "Context:\n{context}\n\nQuestion: {question}\nAnswer:", "zh": "上下文：\n{context}\n\n问题：{question}\n回答："}, ("\n",)),
    "one worked example, every part": LocalPrompt(BODY, QUESTION_STOPS, EVERY_PART, SHOTS),
    "one worked example, quote the sentence": LOCAL_PROMPT,
}
"""The local model's prompt variants tried by the ``prompts`` part (``LOCAL_PROMPT`` is the one chosen); ``--prompts``
names them separated by ``;``."""
READERS: dict[str, ExtractiveGeneratorConfig | LocalGeneratorConfig] = {
    "span reader": ExtractiveGeneratorConfig(reader="span"),
    "gemma-3-270m (local)": LocalGeneratorConfig(model="gemma-3-270m"),
    "qwen2.5-coder-0.5b-instruct (local, chat)": LocalGeneratorConfig(model="qwen2.5-coder-0.5b-instruct"),
    "qwen2.5-coder-1.5b-instruct (local, chat)": LocalGeneratorConfig(model="qwen2.5-coder-1.5b-instruct"),
}
"""The readers compared (``--readers`` picks some, by the start of their names: ``qwen2.5-coder-0`` the 0.5B,
``qwen2.5-coder-1`` the 1.5B, whose packages are not in ``tuner[local]``; the agreement part takes two: the span reader
and one local model)."""


class Progress:
    """Prints ``label done/total`` to stderr every ``every`` steps of an evaluation."""

    def __init__(self, label: str, total: int, every: int = 20) -> None:
        self.label, self.total, self.every, self.done, self.start = label, total, every, 0, time.perf_counter()

    def advance(self, amount: int = 1) -> None:
        self.done += amount
        if self.done % self.every == 0 or self.done == self.total:
            print(f"  {self.label}: {self.done}/{self.total} ({time.perf_counter() - self.start:.0f} s)", file=sys.stderr, flush=True)


def settings_for(name: str, config: str) -> RetrievalSettings:
    zh = ZH_CHUNKS if name in ("demo-zh", "CMRC 2018 trial") else {}
    return RetrievalSettings.model_validate({**zh, **CONFIGS[config]})


def datasets(folder: Path, cases: int, names: Sequence[str]) -> dict[str, Dataset]:
    """The benchmark datasets of ``names`` that can run here."""
    found: dict[str, Dataset] = {}
    if "ConflictNQ val" in names:
        if CONFLICTNQ.exists():
            imported = import_conflictnq(CONFLICTNQ)
            found["ConflictNQ val"] = write_dataset(folder / "conflictnq", imported.corpus, imported.golden, imported.conflicts)
        else:
            print(f"skipping ConflictNQ: {CONFLICTNQ} not found", file=sys.stderr)
    if "CMRC 2018 trial" in names:
        if CMRC.exists():
            from cmrc import sample_golden  # bench/cmrc.py: a seeded sample with conflicts made by `tuner corrupt`
            from tuner.dataset.importers import import_squad

            imported = import_squad(CMRC)
            full = write_dataset(folder / "cmrc", imported.corpus, imported.golden, [])
            found["CMRC 2018 trial"] = sample_golden(full, folder, cases)
        else:
            print(f"skipping CMRC 2018: {CMRC} not found", file=sys.stderr)
    for name, source in (("demo", "demo"), ("demo-zh", "demo-zh")):
        if name in names:
            found[name] = load_dataset(resolve_dataset(source))
    return found


class Bench:
    """Both readers over one dataset, sharing a pipeline, the call cache and the memo of each reader."""

    def __init__(self, name: str, dataset: Dataset, cases: int, resources: BackendResources) -> None:
        self.name = name
        self.encoder = resources.embeddings.encoder(DEFAULT_EMBEDDING_MODEL, default_cache_root())
        self.pipeline = RetrievalPipeline(dataset, cache=DiskCache(default_cache_root()), encoder=self.encoder)
        self.case_ids = [c.id for c in dataset.golden if c.keypoints][:cases]
        self.judge = LexicalJudge()
        resources.encoder = self.encoder
        self.responders = {reader: Responder(build_generator(config, resources), self.judge) for reader, config in READERS.items()}

    def prompt_outcomes(self, prompt: LocalPrompt, resources: BackendResources) -> list[CaseOutcome]:
        """v0 outcomes of the local model asked with ``prompt`` at :data:`READING` (reading efficiency needs no v3)."""
        config = LocalGeneratorConfig(model="gemma-3-270m")  # the completion prompts are Gemma's
        local = LocalGenerator(config, llama_cpp_runtime(config), resources.call_cache(), resources.usage, prompt)
        evaluator = RobustnessEvaluator(self.pipeline, Responder(local, self.judge), VariantsConfig())
        task = Progress(f"{self.name} / prompt", 2 * len(self.case_ids))  # an answer and a verdict per case
        return evaluator.evaluate(settings_for(self.name, READING), ("v0",), self.case_ids, task)

    def outcomes(self, reader: str, config: str, variant_config: VariantsConfig = VariantsConfig()) -> list[CaseOutcome]:
        evaluator = RobustnessEvaluator(self.pipeline, self.responders[reader], variant_config)
        task = Progress(f"{self.name} / {reader} / {config} / injected at {variant_config.position}", 4 * len(self.case_ids))
        return evaluator.evaluate(settings_for(self.name, config), ("v0", "v3"), self.case_ids, task)


def reader_row(name: str, reader: str, outcomes: list[CaseOutcome]) -> str:
    report = summarize(outcomes, ("v0", "v3"))
    v0, v3 = report.variants["v0"], report.variants["v3"]
    support = v0.context_support.value
    efficiency = "n/a" if not support else f"{v0.faithful.value / support:.3f}"
    ci = v3.delta_ci
    delta = "n/a" if v3.delta_faithful is None else f"{v3.delta_faithful:.3f}"
    interval = "n/a" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"
    misled = "n/a" if v3.misled_rate is None else f"{v3.misled_rate.value:.3f} ({v3.misled_rate.n}/{v3.misled_rate.n_total})"
    faithful = v0.faithful
    low, high = faithful.ci if faithful.ci is not None else (float("nan"), float("nan"))
    return (
        f"| {name} | {reader} | {efficiency} | {faithful.value:.3f} ({faithful.n}/{faithful.n_total}) [{low:.2f}, {high:.2f}] "
        f"| {support:.3f} | {misled} | {delta} | {interval} |"
    )


def part_readers(benches: dict[str, Bench]) -> list[str]:
    lines = [
        "", f"#### Readers side by side (`{READING}`, v0 and v3, lexical judge, default noise)", "",
        "| dataset | reader | reading efficiency | v0 faithful (n/N) [95%] | v0 context support | v3 misled (n/N) | v3 Δ | v3 Δ 95% |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, bench in benches.items():
        for reader in READERS:
            lines.append(reader_row(name, reader, bench.outcomes(reader, READING)))
    return lines


def part_prompts(benches: dict[str, Bench], resources: BackendResources) -> list[str]:
    """Reading efficiency of the local model under each prompt of :data:`PROMPTS`, beside the span reader's."""
    names = list(benches)
    lines = [
        "", f"#### Local model prompts: reading efficiency (v0 faithful / v0 context support, `{READING}`, lexical judge)", "",
        "| prompt | " + " | ".join(names) + " |", "|---|" + "---|" * len(names),
    ]
    span = [efficiency(summarize(benches[n].outcomes("span reader", READING), ("v0",))) for n in names]
    lines.append("| span reader | " + " | ".join(span) + " |")
    for label, prompt in PROMPTS.items():
        cells = [efficiency(summarize(benches[n].prompt_outcomes(prompt, resources), ("v0",))) for n in names]
        chosen = " (chosen: `LOCAL_PROMPT`)" if prompt == LOCAL_PROMPT else ""
        lines.append(f"| {label}{chosen} | " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def efficiency(report: object) -> str:
    """``efficiency (faithful / support)`` of a report's v0."""
    v0 = report.variants["v0"]  # type: ignore[attr-defined]
    support = v0.context_support.value
    return "n/a" if not support else f"{v0.faithful.value / support:.3f} ({v0.faithful.value:.3f} / {support:.3f})"


MEASURES = ("Δ", "susceptibility")
"""What the agreement part compares per configuration: v3 Δfaithful over all cases, and the susceptibility, Δ among
the exposed cases only (:func:`tuner.metrics.delta_parts`; exposed: the configuration's v3 context holds at least
one conflicting chunk, so an unexposed case's v3 context is its v0 one, except where BM25's statistics moved it)."""


def case_table(outcomes: Sequence[CaseOutcome], case_ids: Sequence[str]) -> np.ndarray:
    """Rows of (f0, f3, exposed) per case of ``case_ids``; f0, f3 nan where a score is missing."""
    by_id = {o.case.id: o for o in outcomes}
    rows = []
    for cid in case_ids:
        o = by_id.get(cid)
        if o is None:
            rows.append((np.nan, np.nan, 0.0))
            continue
        f0, f3 = o.variants["v0"].faithful, o.variants["v3"].faithful
        rows.append((np.nan if f0 is None else f0, np.nan if f3 is None else f3, float(o.variants["v3"].exposed)))
    return np.array(rows, dtype=float)


def measure(table: np.ndarray, which: str) -> tuple[float, int]:
    """(value, cases) of ``which`` (:data:`MEASURES`) over the rows of ``table`` scored at both variants: the product's
    Δ and susceptibility (:func:`tuner.metrics.delta_parts`); nan where undefined.

    >>> measure(np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.5, 0.5, 1.0]]), "Δ")
    (0.4, 3)
    >>> measure(np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.5, 0.5, 1.0]]), "susceptibility")
    (0.6666666666666666, 2)
    """
    kept = table[~np.isnan(table[:, :2]).any(axis=1)]
    parts = delta_parts(list(kept[:, 0]), list(kept[:, 1]), list(kept[:, 2] > 0))
    value = parts.delta if which == "Δ" else parts.susceptibility
    return (float("nan") if value is None else float(value)), (parts.n if which == "Δ" else parts.exposed)


def part_agreement(benches: dict[str, Bench], replicates: int = 2000) -> list[str]:
    lines = [
        "", "#### Agreement: per-configuration v3 Δfaithful and susceptibility, span reader vs local model", "",
        "| dataset | configuration | exposed (n/N) | unexposed, v3 context ≠ v0 | span Δ | local Δ | span susceptibility | local susceptibility "
        "| span grade | local grade |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    summary = ["", "| dataset | measure | configurations × cases | Spearman ρ | 95% case-bootstrap interval (valid replicates) |",
               "|---|---|---|---|---|"]
    for name, bench in benches.items():
        outcomes = {r: {c: bench.outcomes(r, c) for c in CONFIGS} for r in READERS}
        tables = {r: {c: case_table(outcomes[r][c], bench.case_ids) for c in CONFIGS} for r in READERS}
        for config in CONFIGS:
            changed = exposure_parts(outcomes["span reader"][config])[2]
            values = {r: {m: measure(tables[r][config], m) for m in MEASURES} for r in READERS}
            span, local = (values[r] for r in READERS)
            exposed = int(tables["span reader"][config][:, 2].sum())
            grades = [grade_delta(v["Δ"][0]) if np.isfinite(v["Δ"][0]) else "n/a" for v in (span, local)]
            lines.append(
                f"| {name} | {config} | {exposed}/{len(bench.case_ids)} | {changed} | {span['Δ'][0]:.3f} | {local['Δ'][0]:.3f} "
                f"| {span['susceptibility'][0]:.3f} ({span['susceptibility'][1]}) | {local['susceptibility'][0]:.3f} "
                f"({local['susceptibility'][1]}) | {grades[0]} | {grades[1]} |"
            )
        for which in MEASURES:
            span_values, local_values = (np.array([measure(tables[r][c], which)[0] for c in CONFIGS]) for r in READERS)
            defined = np.isfinite(span_values) & np.isfinite(local_values)
            rho = float(spearmanr(span_values[defined], local_values[defined]).statistic) if defined.sum() > 2 else float("nan")
            low, high, valid = bootstrap_spearman(tables, which, len(bench.case_ids), replicates)
            summary.append(
                f"| {name} | {which} | {int(defined.sum())} × {len(bench.case_ids)} | {rho:.2f} | [{low:.2f}, {high:.2f}] ({valid}/{replicates}) |"
            )
    return lines + summary


def bootstrap_spearman(tables: dict[str, dict[str, np.ndarray]], which: str, cases: int, replicates: int) -> tuple[float, float, int]:
    """2.5% and 97.5% percentiles of Spearman's ρ between the readers' per-configuration ``which`` (:func:`measure`)
    when the cases are resampled with replacement (the same resample for every configuration and both readers), over
    the configurations where it is defined for both; replicates with fewer than 3 such configurations or with one
    reader's values all tied are left out and counted."""
    rng = np.random.default_rng(0)
    readers = list(tables)
    values = []
    for _ in range(replicates):
        rows = rng.integers(0, cases, cases)
        per_reader = [np.array([measure(tables[r][c][rows], which)[0] for c in CONFIGS]) for r in readers]
        kept = np.isfinite(per_reader[0]) & np.isfinite(per_reader[1])
        if kept.sum() < 3 or any(np.ptp(v[kept]) == 0 for v in per_reader):
            continue
        values.append(float(spearmanr(per_reader[0][kept], per_reader[1][kept]).statistic))
    if not values:
        return float("nan"), float("nan"), 0
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)), len(values)


def part_position(benches: dict[str, Bench]) -> list[str]:
    lines = [
        "", f"#### Noise position, local model (`{READING}`, v3 `inject`: v0 + the conflicting chunks at the position given)", "",
        "| dataset | position | v0 faithful (n/N) | v3 faithful | v3 misled (n/N) | v3 Δ | v3 Δ 95% |", "|---|---|---|---|---|---|---|",
    ]
    reader = next(name for name in READERS if name != "span reader")
    for name, bench in benches.items():
        for position in ("front", "middle", "end"):
            variant_config = VariantsConfig(position=position, hard_mode="inject")  # in_index conflicts sit where retrieval ranks them
            report = summarize(bench.outcomes(reader, READING, variant_config), ("v0", "v3"))
            v0, v3 = report.variants["v0"], report.variants["v3"]
            ci = v3.delta_ci
            misled = "n/a" if v3.misled_rate is None else f"{v3.misled_rate.value:.3f} ({v3.misled_rate.n}/{v3.misled_rate.n_total})"
            lines.append(
                f"| {name} | {position} | {v0.faithful.value:.3f} ({v0.faithful.n}/{v0.faithful.n_total}) | {v3.faithful.value:.3f} "
                f"| {misled} | {'n/a' if v3.delta_faithful is None else f'{v3.delta_faithful:.3f}'} "
                f"| {'n/a' if ci is None else f'[{ci[0]:.2f}, {ci[1]:.2f}]'} |"
            )
    return lines


SPEED_PASSAGE = (
    "The X200 router ships with a warranty of 24 months from the date of purchase, covering hardware faults. "
    "Its firmware is updated every quarter and the support line answers on weekdays from 9 to 18. "
)
SPEED_QUESTION = "How long is the warranty of the X200 router?"


SPEED_TOKENS = (200, 500)
"""Prompt sizes of the speed part, in the model's own tokens (the issue asks for seconds per call at 500)."""
PASSAGE_WORDS = 40
"""Words per passage of a speed prompt (the last passage takes what is left)."""


def speed_passages(words: int, salt: int) -> list[str]:
    """Passages of :data:`SPEED_PASSAGE` words holding ``words`` words in all, each starting ``Note SALT-I.``
    (``salt`` zero-padded to 6 digits, so every salt costs the same tokens; a new salt defeats the prompt cache and the
    span reader's vector cache on disk)."""
    text = SPEED_PASSAGE.split()
    stream = [text[i % len(text)] for i in range(words)]
    return [f"Note {salt:06d}-{i}. " + " ".join(stream[start:start + PASSAGE_WORDS])
            for i, start in enumerate(range(0, len(stream), PASSAGE_WORDS))]


def speed_prompt(count: int, salt: int) -> str:
    """A prompt of ``count`` passages' words in the issue 32 English template; ``salt`` makes its start differ."""
    context = "\n\n".join(f"[{i + 1}] {text}" for i, text in enumerate(speed_passages(count * PASSAGE_WORDS, salt)))
    return f"Context:\n{context}\n\nQuestion: {SPEED_QUESTION}\nAnswer:"


def words_for(generator: LocalGenerator, usage: Usage, target: int) -> int:
    """How many passage words make a prompt of about ``target`` tokens for ``generator`` (its template or completion
    prompt): the prompt's tokens are linear in the words, so two probes (one token written each, cache off) give the
    line; the speed table prints the tokens each prompt really had."""
    points = []
    for words in (PASSAGE_WORDS, 8 * PASSAGE_WORDS):
        before = usage.snapshot().prompt_tokens
        generator.generate(SPEED_QUESTION, speed_passages(words, 9999))
        points.append((words, usage.snapshot().prompt_tokens - before))
    (w1, t1), (w2, t2) = points
    return max(1, round(w1 + (target - t1) * (w2 - w1) / (t2 - t1)))


def part_speed(thread_counts: Sequence[int], repeats: int, transformers: bool = False, sizes: Sequence[int] = SPEED_TOKENS) -> list[str]:
    """Seconds per answer of each reader of :data:`READERS` through the product's path (a local model's chat template
    or completion prompt, greedy, the generator's own stops and ``max_tokens``; the span reader with its embedding
    model loaded and its vector cache defeated), wall and CPU of this process, median of ``repeats`` calls with the
    prompt cache defeated, for prompts of :data:`SPEED_TOKENS` tokens (of each local model's tokenizer; the span
    reader reads the passages of the first local model's prompt; ``sizes``: the targets, default :data:`SPEED_TOKENS`),
    with the load average beside each row."""
    lines = [
        "", f"#### Speed: seconds per answer through the generator (median of {repeats}, prompt cache defeated)", "",
        "| reader | runtime | threads | load s | prompt tokens | s / call (wall) | CPU s / call | load average | answer |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    words_at: dict[int, int] = {}
    for reader, config in sorted(READERS.items(), key=lambda item: not isinstance(item[1], LocalGeneratorConfig)):
        for threads in thread_counts if isinstance(config, LocalGeneratorConfig) else [0]:
            start = time.perf_counter()
            if isinstance(config, LocalGeneratorConfig):
                tuned = config.model_copy(update={"threads": threads, "cache": False})
                runtime = llama_cpp_runtime(tuned)
                name = runtime.name

                def make(usage: Usage) -> Generator:
                    return LocalGenerator(tuned, runtime, None, usage)
            else:
                name, span = "sentence-transformers", build_generator(config, BackendResources())
                span.generate(SPEED_QUESTION, speed_passages(PASSAGE_WORDS, 9998))  # loads the embedding model

                def make(usage: Usage) -> Generator:
                    return span
            load = time.perf_counter() - start
            for target in sizes:
                usage = Usage()
                generator = make(usage)
                if isinstance(generator, LocalGenerator):
                    words = words_for(generator, usage, target)
                    words_at.setdefault(target, words)
                    usage = Usage()
                    generator = make(usage)
                else:
                    words = words_at.get(target, target * 3 // 4)
                walls, cpus, loads = [], [], []
                run = 100_000 + time.time_ns() % 800_000  # this run's salts: unseen by every cache, the disk's too
                for salt in range(run, run + repeats):
                    loads.append(os.getloadavg()[0])
                    begin, cpu = time.perf_counter(), time.process_time()
                    answer = generator.generate(SPEED_QUESTION, speed_passages(words, salt))
                    walls.append(time.perf_counter() - begin)
                    cpus.append(time.process_time() - cpu)
                counts = usage.snapshot()
                tokens = f"{counts.prompt_tokens // repeats}" if counts.calls else f"({words} words)"
                written = f" ({counts.completion_tokens // repeats} tokens)" if counts.calls else ""
                lines.append(
                    f"| {reader} | {name} | {threads or ''} | {load:.1f} | {tokens} | {statistics.median(walls):.2f} "
                    f"| {statistics.median(cpus):.2f} | {min(loads):.1f}–{max(loads):.1f} | `{answer.text[:50]}`{written} |"
                )
                print(lines[-1], file=sys.stderr, flush=True)
    if transformers:
        lines += transformers_speed(repeats)
    return lines


def transformers_speed(repeats: int) -> list[str]:
    """transformers' GGUF loader (dequantized to fp32) on the same prompts, when gguf and accelerate are installed."""
    import importlib.util

    missing = [m for m in ("gguf", "accelerate", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        return [f"| transformers (GGUF → fp32) | | | | not measured: {', '.join(missing)} not installed | | | |"]
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = model_file("gemma-3-270m")
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    load = time.perf_counter() - start
    lines = []
    for size in (3, 9):  # passages of PASSAGE_WORDS words: ~200 and ~500 tokens (the row prints the count)
        timings = []
        for salt in range(max(1, repeats // 3)):
            inputs = tokenizer(speed_prompt(size, salt + 5000), return_tensors="pt")
            begin = time.perf_counter()
            with torch.inference_mode():
                output = model.generate(**inputs, max_new_tokens=32, do_sample=False)
            timings.append(time.perf_counter() - begin)
        written = int(output.shape[1] - inputs["input_ids"].shape[1])
        per_call = statistics.median(timings)
        answer = tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True).strip().splitlines()
        lines.append(
            f"| transformers {__import__('transformers').__version__} (GGUF → fp32) | {torch.get_num_threads()} | {load:.1f} "
            f"| {inputs['input_ids'].shape[1]} | {per_call:.2f} | | {written / per_call:.1f} (all 32 tokens, no first-line stop) "
            f"| `{(answer[0] if answer else '')[:40]}` |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parts", nargs="*", metavar="PART", help="speed, readers, agreement, position (default: all)")
    parser.add_argument("--cases", type=int, default=40, help="cases per dataset (default 40)")
    parser.add_argument("--threads", default="1,2", help="llama.cpp thread counts of the speed part (default 1,2)")
    parser.add_argument("--repeats", type=int, default=5, help="calls per prompt size in the speed part (default 5)")
    parser.add_argument("--tokens", default=",".join(map(str, SPEED_TOKENS)), help="speed part: prompt sizes in tokens (default 200,500)")
    parser.add_argument("--datasets", default="ConflictNQ val,CMRC 2018 trial,demo,demo-zh", help="readers part: datasets")
    parser.add_argument("--prompts", default=";".join(PROMPTS), help="prompts part: the variants of PROMPTS to run, separated by ';' (default: all)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="agreement part: configurations (default: all of CONFIGS)")
    parser.add_argument("--agreement-datasets", default="ConflictNQ val,demo-zh", help="agreement part: datasets")
    parser.add_argument("--transformers", action="store_true", help="speed part: also time transformers' GGUF loader (slow)")
    parser.add_argument("--readers", default="span,gemma", help="readers (starts of READERS' names, comma-separated; default span,gemma)")
    parser.add_argument("--append", action="store_true", help="append the tables to bench/HISTORY.md (the log)")
    args = parser.parse_args()
    picked = {name: config for name, config in READERS.items() if any(name.startswith(start) for start in args.readers.split(","))}
    READERS.clear()
    READERS.update(picked)
    parts = args.parts or list(PARTS)
    chosen = args.configs.split(",")
    if any(c not in CONFIGS for c in chosen):
        parser.error(f"unknown configuration in --configs; choose from {', '.join(CONFIGS)}")
    for config in [c for c in CONFIGS if c not in chosen]:
        del CONFIGS[config]
    wanted_prompts = args.prompts.split(";")
    if any(p not in PROMPTS for p in wanted_prompts):
        parser.error(f"unknown prompt in --prompts; choose from {'; '.join(PROMPTS)}")
    kept = {label: PROMPTS[label] for label in wanted_prompts}  # in the order given
    PROMPTS.clear()
    PROMPTS.update(kept)
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    lines = [
        *results_header("### Issue 32: Gemma 3 270M (local, llama.cpp) beside the span reader"),
        f"- parts: {', '.join(parts)}; {args.cases} cases per dataset (the first ones with keypoints; CMRC: a seeded sample)",
    ]
    resources = BackendResources()

    def report(new: list[str]) -> None:
        """Print (and with --append, append) each part's lines as soon as it is done."""
        text = "\n".join([*new, ""])
        print(text, flush=True)
        if args.append:
            with HISTORY.open("a", encoding="utf-8") as handle:
                handle.write(text)

    report(lines)
    with tempfile.TemporaryDirectory(prefix="tuner-local-reader-") as folder:
        if "speed" in parts:
            report(part_speed([int(t) for t in args.threads.split(",")], args.repeats, args.transformers, [int(t) for t in args.tokens.split(",")]))
        wanted = {
            "readers": args.datasets.split(","), "prompts": args.datasets.split(","), "agreement": args.agreement_datasets.split(","), "position": ["ConflictNQ val", "demo-zh"],
        }
        names = sorted({n for part in parts if part in wanted for n in wanted[part]})
        found = datasets(Path(folder), args.cases, names)
        benches = {name: Bench(name, dataset, args.cases, resources) for name, dataset in found.items()}
        if "prompts" in parts:
            start = time.perf_counter()
            report([*part_prompts({n: b for n, b in benches.items() if n in wanted["prompts"]}, resources), "",
                    f"- prompts: {time.perf_counter() - start:.0f} s wall, {usage_line(resources)}"])
        for part, run in (("agreement", part_agreement), ("readers", part_readers), ("position", part_position)):
            if part in parts:
                start = time.perf_counter()
                report([*run({n: b for n, b in benches.items() if n in wanted[part]}), "",
                        f"- {part}: {time.perf_counter() - start:.0f} s wall, {usage_line(resources)}"])


def usage_line(resources: BackendResources) -> str:
    usage = resources.usage.snapshot()
    return (f"local model so far: {usage.calls} calls (cache hits {usage.cache_hits}), {usage.prompt_tokens} prompt tokens, "
            f"{usage.completion_tokens} generated tokens")


if __name__ == "__main__":
    main()
