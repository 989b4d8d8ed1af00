"""Study (**dry run**): what a ``tuner run --dry-run`` would spend: upper bounds on generator and judge calls, the
tokens of the configurations the run would try first, and their cost at the backends' pricing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import optuna

from tuner.chunking import CORPUS, chunk_dataset
from tuner.dataset import Dataset, load_dataset, resolve_dataset
from tuner.llm import Pricing
from tuner.progress import Reporter
from tuner.settings import Chunking, RetrievalSettings, settings_from_mapping
from tuner.study._config import LoadedStudy
from tuner.study._check import check_study
from tuner.study._confirm import confirmation_split
from tuner.engine import InertKnob
from tuner.study._inert import active_space, enqueued_params
from tuner.study._samplers import build_sampler
from tuner.study._space import SearchSpace, load_search_space
from tuner.text import word_count

TOKENS_PER_WORD = 1.3
ANSWER_WORDS = 40
VERDICT_WORDS = 20
"""A verdict reply: the JSON object with its label and a short quoted evidence."""
CALIBRATION_RUNS = 3


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
    space, inert = active_space(space, dataset, loaded.base_settings, reporter, loaded.engine)
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
