"""Report/export (front → **what a run writes**): what ``tuner run`` does around the optimization: the dry-run estimate
and the closing outputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna

from tuner.chunking import CORPUS, chunk_dataset
from tuner.dataset import Dataset, labels_line, load_dataset, resolve_dataset
from tuner.export import export_document, write_export
from tuner.llm import Pricing
from tuner.redaction import redact
from tuner.pareto import PickUnmet, pick
from tuner.progress import Reporter
from tuner.settings import Chunking, RetrievalSettings, settings_from_mapping
from tuner.study._config import LoadedStudy
from tuner.study._check import check_study
from tuner.study._confirm import confirmation_split, confirmed_entries
from tuner.study._labels import entry_caveat, study_labels
from tuner.study._front import directions_of, study_front
from tuner.study._honest import pick_notes
from tuner.study._inert import InertKnob, active_space, enqueued_params
from tuner.study._record import StudyRecord, TrialRecord
from tuner.study._run import StudyRun
from tuner.study._samplers import build_sampler
from tuner.study._space import SearchSpace, load_search_space
from tuner.study._summary import study_summary
from tuner.text import word_count

TOKENS_PER_WORD = 1.3
ANSWER_WORDS = 40
VERDICT_WORDS = 20
"""A verdict reply: the JSON object with its label and a short quoted evidence."""
CALIBRATION_RUNS = 3
CONFIRM_FIGURES = ("values", "ci", "n", "n_total")
"""What an export keeps of a trial's confirmation (its per-case scores stay in the study)."""


def planned_settings(
    loaded: LoadedStudy, space: SearchSpace, n_trials: int, inert: list[InertKnob] | None = None
) -> tuple[list[RetrievalSettings], str]:
    """The configurations a run of ``n_trials`` would try first, and how they were chosen: the enqueued ones, then the
    grid sampler's own order, or draws at random with the sampler's seed, as the start-up phase of TPE, NSGA-II and GP
    draws them (their later trials follow the results, which a dry run does not have)."""
    sampler_config = loaded.config.sampler
    grid = sampler_config.name == "grid"
    sampler = build_sampler(sampler_config, space) if grid else optuna.samplers.RandomSampler(seed=sampler_config.seed)
    study = optuna.create_study(sampler=sampler)
    enqueued = [enqueued_params(params, inert or []) for params in loaded.config.enqueue[:n_trials]]
    for params in enqueued:
        study.enqueue_trial(params)
    planned = []
    for number in range(n_trials):
        trial = study.ask()
        base = loaded.base_settings.model_dump()
        values = {**base, **space.suggest(trial, base)}
        planned.append(settings_from_mapping(values, "search space"))
        study.tell(trial, 0.0)
    drawn = f"the {sampler_config.name} sampler's grid order" if grid else (
        f"drawn at random with seed {sampler_config.seed}, as the {sampler_config.name} sampler's start-up phase draws them"
    )
    return planned, f"{len(enqueued)} enqueued + {n_trials - len(enqueued)} {drawn}"


def context_words(settings: RetrievalSettings, dataset: Dataset, chunk_words: dict[Chunking, list[int]]) -> float:
    """Words the generator reads per question under ``settings``: ``min(top_k, chunks)`` chunks of the corpus's mean
    chunk length (the corpus chunked as the settings chunk it; ``chunk_words`` caches that per chunking)."""
    key = settings.chunking
    if key not in chunk_words:
        chunks = chunk_dataset(dataset, key)
        chunk_words[key] = [word_count(chunk.text) for chunk in chunks if chunk.source == CORPUS]
    words = chunk_words[key]
    return min(settings.top_k, len(words)) * sum(words) / max(len(words), 1)


@dataclass(frozen=True)
class _Tokens:
    """Estimated tokens of one role (generator or judge): prompt tokens, the part of them a provider's prefix cache can
    serve (a prompt repeating an earlier one's instructions and passages), and completion tokens."""

    prompt: float = 0.0
    cacheable: float = 0.0
    completion: float = 0.0

    def __add__(self, other: _Tokens) -> _Tokens:
        return _Tokens(self.prompt + other.prompt, self.cacheable + other.cacheable, self.completion + other.completion)

    def scaled(self, factor: float) -> _Tokens:
        return _Tokens(self.prompt * factor, self.cacheable * factor, self.completion * factor)

    @property
    def total(self) -> float:
        return self.prompt + self.completion


def cost_range(tokens: dict[str, _Tokens], prices: dict[str, Pricing]) -> dict[str, Any] | None:
    """(low, high) cost of ``tokens`` per role at the roles' ``prices``: low when the provider's prefix cache serves
    every cacheable prompt token at the cached price, high when it serves none; None when no role is priced."""
    if not prices:
        return None
    low = high = 0.0
    for role, pricing in prices.items():
        spent = tokens[role]
        low += pricing.cost(int(spent.prompt), int(spent.cacheable), int(spent.completion))
        high += pricing.cost(int(spent.prompt), 0, int(spent.completion))
    return {"low": round(low, 6), "high": round(high, 6), "priced": sorted(prices)}


def dry_run(loaded: LoadedStudy, trials: int | None, reporter: Reporter) -> dict[str, Any]:
    """Upper bounds on generator and judge calls (no cache hits, no pruning, no trial left unanswered), the tokens
    they would cost on the configurations the run would try first (see :func:`planned_settings`), not on the space's
    largest one, and what they cost at the backends' ``pricing`` (key ``cost``: a range, see :func:`cost_range`)."""
    dataset = load_dataset(resolve_dataset(loaded.dataset))
    # too few held-out cases fails here as it would in the run; the bounds stay over every case: tuning share plus a
    # confirmation of every trial on the held-out share is at most that
    confirmation_split(dataset, loaded.config.confirm)
    space = load_search_space(loaded.search_space_path, loaded.config.sampler.conditional)
    check_study(loaded, space, dataset)
    space, inert = active_space(space, dataset, loaded.base_settings, reporter, loaded.config.retriever is not None)
    cases = [c for c in dataset.golden if c.keypoints]
    keypoints = sum(len(c.keypoints) for c in cases)
    n_trials = trials or loaded.config.budget.trials
    planned, how = planned_settings(loaded, space, n_trials, inert)
    question_words = sum(word_count(c.question) for c in cases) / max(len(cases), 1)
    variants = 2
    generator_calls = variants * len(cases)
    batched = bool(getattr(loaded.judge, "batch_keypoints", False))
    judge_calls = variants * 2 * (len(cases) if batched else keypoints)
    chunk_words: dict[Chunking, list[int]] = {}

    def trial_tokens(settings: RetrievalSettings) -> dict[str, _Tokens]:
        words = context_words(settings, dataset, chunk_words)
        generator = _Tokens(prompt=generator_calls * (question_words + words), completion=generator_calls * ANSWER_WORDS)
        # per keypoint one prompt on the answer and one on the passages; a case's later passage prompts repeat the
        # first one's instructions and passages, which is what a provider's prefix cache can serve. Batched, a case
        # sends each side once, so nothing repeats within it
        prompts = len(cases) if batched else keypoints
        judge = _Tokens(
            prompt=variants * prompts * (ANSWER_WORDS + words),
            cacheable=0 if batched else variants * (keypoints - len(cases)) * words,
            completion=variants * 2 * keypoints * VERDICT_WORDS,
        )
        return {"generator": generator.scaled(TOKENS_PER_WORD), "judge": judge.scaled(TOKENS_PER_WORD)}

    per_trial = [trial_tokens(settings) for settings in planned]
    totals = sorted(sum(t.total for t in tokens.values()) for tokens in per_trial)
    calibration = CALIBRATION_RUNS * 2 if loaded.config.noise_floor == "auto" else 0
    total_trials = n_trials + calibration
    study_tokens = {role: sum((t[role] for t in per_trial), _Tokens()) for role in ("generator", "judge")}
    baseline = trial_tokens(loaded.baseline_settings())
    study_tokens = {role: spent + baseline[role].scaled(calibration) for role, spent in study_tokens.items()}
    median = totals[len(totals) // 2]
    prices = {role: b.pricing for role, b in loaded.llm_backends.items() if b.pricing is not None}
    cost = cost_range(study_tokens, prices)
    estimate = {
        "trials": n_trials,
        "calibration_runs": calibration,
        "cases": len(cases),
        "keypoints": keypoints,
        "generator_calls": int(generator_calls * total_trials),
        "judge_calls": int(judge_calls * total_trials),
        "tokens": int(sum(t.total for t in study_tokens.values())),
        "tokens_per_trial": {"median": int(median), "max": int(totals[-1])},
        "estimated_from": how,
        "generator_backend": loaded.generator.backend,
        "judge_backend": loaded.judge.backend,
        "cost": cost,
        "inert_knobs": [knob.to_json() for knob in inert],
    }
    cap = loaded.config.budget.max_llm_calls
    reporter.stage(
        f"dry run of '{loaded.config.name}': {n_trials} trials (+{calibration} calibration runs) on {len(cases)} cases, "
        f"{keypoints} keypoints → at most {estimate['generator_calls']} generator calls, {estimate['judge_calls']} judge calls, "
        f"~{estimate['tokens']:,} tokens ({loaded.generator.backend} generator, {loaded.judge.backend} judge; "
        f"cache hits and pruning only lower this){'; capped at ' + str(cap) + ' calls' if cap else ''}"
    )
    reporter.stage(
        f"tokens estimated on the configurations this run would try first ({how}): per trial median "
        f"~{int(median):,}, largest ~{int(totals[-1]):,}; later trials follow the results and may differ"
    )
    if cost is not None:
        unpriced = sorted(set(loaded.llm_backends) - set(prices))
        reporter.stage(
            f"estimated cost {cost['low']:.4g}–{cost['high']:.4g} at the pricing of the {' and '.join(cost['priced'])} "
            f"(low: the provider's prefix cache serves every repeated prompt prefix; high: none)"
            + (f"; {', '.join(unpriced)} not priced" if unpriced else "")
        )
    return estimate


def trial_document(study: optuna.Study, number: int, rule: str | None, storage: str) -> dict[str, Any]:
    """The export of one complete trial: its full settings and provenance (storage URL without password)."""
    trial = study.trials[number]
    names = list(directions_of(study))
    record, study_record = TrialRecord.from_trial(trial), StudyRecord.from_study(study)
    confirmed = study_record.confirm.get(str(number))
    return export_document(
        record.settings or {},
        {
            "study": study.study_name,
            "storage": redact(storage),
            "trial": number,
            "embedding_backend": record.embedding_backend or "torch",
            "pick": rule,
            # the golden set the study file names, which the gate measures (the tuning share's is in confirm_split)
            "dataset_hash": study_record.golden_hash or study_record.dataset_hash,
            "values": dict(zip(names, trial.values)),
            "ci": record.ci,
            "noise_floor": study_record.noise_floor,
            "confirm": None if confirmed is None else {k: v for k, v in confirmed.items() if k in CONFIRM_FIGURES},
            **({} if not study_record.confirm_cases else {"confirm_split": {
                "tuning_dataset_hash": study_record.dataset_hash, "held_out_cases": len(study_record.confirm_cases),
            }}),
            "notes": pick_notes(study, number),
        },
        {name: d.step for name, d in trial.distributions.items() if isinstance(d, optuna.distributions.FloatDistribution) and d.step},
    )


ReportWriter = Callable[[optuna.Study, Path, Mapping[str, int], str], Path]
"""Writes a study's HTML report (study, path, the picked trial per rule, storage URL): ``tuner.report.write_report``,
passed in by the command so that the study package does not import the report, which reads studies."""


def finish(result: StudyRun, rule: str, min_recall: float | None, report: ReportWriter | None, reporter: Reporter) -> dict[str, Any]:
    """Print the front, write the HTML report (with ``report``, when given) and export the picked configuration;
    return their paths, the picked trial's number (``picked``) and what its noise floor says about it (``notes``),
    or why none was picked (``pick_unmet``)."""
    study = result.study
    summary = study_summary(study)
    directions, floor, entries = study_front(study)
    out = result.loaded.output
    paths: dict[str, Any] = {"storage": redact(result.loaded.storage)}
    reporter.stage(
        f"{summary.n_complete} complete ({summary.n_unscorable} unscorable, {summary.n_skipped} not answered), "
        f"{summary.pruned_on_evidence} pruned, {summary.n_duplicates} repeated configurations not evaluated again, "
        f"{summary.n_failed} failed; front of {len(entries)}; calls {summary.calls.generator} generator + "
        f"{summary.calls.judge} judge "
        f"in {result.elapsed:.0f}s"
    )
    picks: dict[str, int] = {}
    chosen = None
    if not entries:  # the report still says what was done, and why nothing is on the front
        reporter.stage("no complete scorable trial yet: nothing to export")
    else:
        entries = confirmed_entries(study, entries)
        picks = {name: pick(name, entries, directions, floor).number for name in ("knee", "cheapest")}
        try:
            chosen = pick(rule, entries, directions, floor, min_recall=min_recall)
        except PickUnmet as unmet:
            # the work is done and the front stands: report it, export nothing, and say what was not met
            paths["pick_unmet"] = str(unmet)
            reporter.stage(f"pick rule {rule}: {unmet}; no configuration exported (export one with 'tuner export --trial N')")
    if chosen is not None:
        paths["picked"] = chosen.number
        picks = {rule: chosen.number, **picks}
        document = trial_document(study, chosen.number, rule, result.loaded.storage)
        paths["config"] = str(write_export(out / "config.yaml", document))
        values = ", ".join(f"{k}={v:.3f}" for k, v in chosen.values.items())
        reporter.stage(f"picked trial {chosen.number} ({rule}): {values}")
        paths["notes"] = document["provenance"]["notes"]
        for note in paths["notes"]:
            reporter.stage(f"note: {note}")
    labels = study_labels(study)
    reporter.stage(f"labels: {labels_line(labels)}")
    caveat = None if chosen is None else entry_caveat(labels, chosen, study.trials[chosen.number])
    if caveat is not None:
        reporter.stage(f"labels: {caveat.line()}")
    if report is not None:
        paths["report"] = str(report(study, out / "report.html", picks, result.loaded.storage))
    for name in ("storage", "config", "report"):
        if name in paths:
            reporter.stage(f"{name}: {paths[name]}")
    return paths
