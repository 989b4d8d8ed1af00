"""Noise floor (metrics → **ε** → front, pruning, gate): measure it for one configuration: regenerate, re-judge,
bootstrap, decompose.

For R runs, run r builds the generator and the judge with seed = (configured seed or 0) + r (run 0
uses the configuration as given; a backend without a seed is simply called again) and a fresh
:class:`RobustnessEvaluator`, so neither the in-memory memo nor the call cache (whose keys include
the seed) can hand back run 0's answer. Separately, the answers saved in run 0 are judged R times
with the run-r judge. Per metric, :func:`tuner.stats.variance_decomposition` splits the run-to-run
variance into judge and generator parts, :func:`tuner.stats.bootstrap_sd` gives the case-sampling
noise of run 0, and :func:`tuner.stats.min_detectable_difference` combines the two.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tuner.noisefloor._floor import UNSCORED, NoiseComponent, NoiseFloor
from tuner.errors import UserError
from tuner.evaluation.retrieval import conflict_exposure, score_contexts
from tuner.evaluation import CaseOutcome, Responder, RobustnessEvaluator, evaluation_steps
from tuner.generation import Answer, build_generator
from tuner.judging import build_judge
from tuner.llm import RequestCount
from tuner.backends import BackendResources
from tuner.metrics import delta_faithful
from tuner.variants import VariantsConfig
from tuner.objectives import DELTA, EXPOSURE
from tuner.progress import LoggedTask, Reporter, SilentReporter, Task
from tuner.redaction import redact_data
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import bootstrap_sd, min_detectable_difference, variance_decomposition

Matrix = NDArray[np.float64]
_VARIANTS = ("v0", "v3")
_FAITHFULNESS = ("faithful_v0", "faithful_v3", DELTA)


def with_run_seed(config: Any, run: int) -> Any:
    """The backend config for run ``run``: ``seed = (seed or 0) + run`` if the backend has a seed.

    Run 0 is the configuration as given, so its calls can be served from an earlier evaluation.
    """
    if run == 0 or "seed" not in type(config).model_fields:
        return config
    return config.model_copy(update={"seed": (config.seed or 0) + run})


def public_config(config: Any) -> dict[str, Any]:
    """A backend config as JSON data for reports and the study's storage. API keys are never in a config (only
    the name of the variable holding one); credentials written into ``base_url``, query parameters or headers
    are redacted here (:func:`tuner.redaction.redact_data`)."""
    data: dict[str, Any] = redact_data(config.model_dump(mode="json"))
    return data


class _SavedAnswers:
    """A generator that replays answers saved from an earlier run, so re-judging sees the same answers."""

    name = "saved"
    concurrency = 1

    def __init__(self, answers: dict[tuple[str, tuple[str, ...]], Answer]) -> None:
        self.answers = answers
        self.requests_made = RequestCount()  # replaying makes no request

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        return self.answers[(question, tuple(contexts))]


def _saved_answers(outcomes: Sequence[CaseOutcome]) -> dict[tuple[str, tuple[str, ...]], Answer]:
    return {
        (outcome.case.question, tuple(v.context.passages)): v.answer
        for outcome in outcomes
        for v in outcome.variants.values()
    }


def _faithful_matrix(runs: Sequence[Sequence[CaseOutcome]], variant: str, cases: Sequence[int]) -> Matrix:
    """[run, case] faithfulness at ``variant`` of the given case positions (all of them scored)."""
    return np.array([[outcomes[c].variants[variant].faithful for c in cases] for outcomes in runs], dtype=np.float64)


def _first_missing(case: int, *runs: Sequence[Sequence[CaseOutcome]]) -> str | None:
    """Why case number ``case`` lacks a score in some run and variant, else None."""
    for outcomes in (o for group in runs for o in group):
        for variant in _VARIANTS:
            reason = outcomes[case].variants[variant].missing
            if reason:
                return reason
    return None


def _component(regenerated: Matrix, rejudged: Matrix, bootstrap: float, n_total: int, missing: dict[str, int]) -> NoiseComponent:
    split = variance_decomposition(regenerated, rejudged)
    return NoiseComponent(
        run_sd=split.run_sd,
        bootstrap_sd=bootstrap,
        judge_var=split.judge_var,
        generator_var=split.generator_var,
        judge_share=split.judge_share,
        generator_share=split.generator_share,
        n=int(regenerated.shape[1]),
        n_total=n_total,
        missing=missing,
    )


def _relative_drops(f0: Matrix, f3: Matrix) -> Matrix | None:
    """Per run r and case c, (f0[r, c] − f3[r, c]) / mean_c f0[r, c]: its mean over cases is run r's
    Δfaithful, so the run-to-run spread of these rows is the spread of Δfaithful itself. None when some
    run has mean faithfulness 0 at v0 (Δ undefined)."""
    base: Matrix = f0.mean(axis=1, keepdims=True)
    if np.any(base == 0):
        return None
    return (f0 - f3) / base


def _faithfulness_components(
    regenerated: Sequence[Sequence[CaseOutcome]], rejudged: Sequence[Sequence[CaseOutcome]]
) -> tuple[dict[str, NoiseComponent], dict[str, str]]:
    """faithful_v0, faithful_v3 and v3_delta_faithful over the cases scored in every run and variant.

    A case missing anywhere (timeout, parse failure, ...) is left out of every matrix, so all three
    metrics are computed on one frozen case list, and counted under its first missing reason.
    """
    n_total = len(regenerated[0])
    missing: Counter[str] = Counter()
    complete: list[int] = []
    for case in range(n_total):
        reason = _first_missing(case, regenerated, rejudged)
        if reason is None:
            complete.append(case)
        else:
            missing[reason] += 1
    counts = dict(sorted(missing.items()))
    if not complete:
        reason = f"{UNSCORED}: {', '.join(f'{why} {count}' for why, count in counts.items())}"
        return {}, {name: reason for name in _FAITHFULNESS}
    regen = {v: _faithful_matrix(regenerated, v, complete) for v in _VARIANTS}
    again = {v: _faithful_matrix(rejudged, v, complete) for v in _VARIANTS}
    components = {
        f"faithful_{v}": _component(regen[v], again[v], bootstrap_sd(regen[v][0]), n_total, counts) for v in _VARIANTS
    }
    regen_drops, rejudged_drops = _relative_drops(regen["v0"], regen["v3"]), _relative_drops(again["v0"], again["v3"])
    if regen_drops is None or rejudged_drops is None:
        return components, {DELTA: "mean faithfulness at v0 is 0 in some run: Δfaithful is undefined"}
    spread = bootstrap_sd(regen["v0"][0], regen["v3"][0], statistic=delta_faithful)
    components[DELTA] = _component(regen_drops, rejudged_drops, spread, n_total, counts)
    return components, {}


def _retrieval_components(runs: Sequence[dict[str, list[float]]]) -> dict[str, NoiseComponent]:
    """Label-counted retrieval metrics, conflict exposure among them (per case 0/1, from the chunks' sources). Re-scoring
    a saved context is a pure function, so the re-judged rows are run 0's row R times; the regenerated rows come from
    retrieving R times."""
    components = {}
    for name in runs[0]:
        regenerated = np.array([run[name] for run in runs], dtype=np.float64)
        rejudged = np.repeat(regenerated[:1], len(runs), axis=0)
        components[name] = _component(regenerated, rejudged, bootstrap_sd(regenerated[0]), regenerated.shape[1], {})
    return components


def _each_run(
    runs: int, description: str, n_cases: int, reporter: Reporter, body: Callable[[int, Task], list[CaseOutcome]],
    texts_encoded: Callable[[], int],
) -> list[list[CaseOutcome]]:
    """``body(run, task)`` for each run, as the trials show their progress: a bar per run advanced per answer and
    verdict, a line every few seconds of work (cases answered and judged, texts embedded as ``texts_encoded()``
    counts them) and one per run done; a calibration over a large knowledge base takes minutes per run, and a bar
    alone does not show in a log."""
    steps = evaluation_steps(n_cases, _VARIANTS)
    half = steps // 2  # every answer comes before the first verdict (RobustnessEvaluator.evaluate)
    per_case = steps // max(2 * n_cases, 1)
    results = []
    with reporter.task(f"noise floor: {description}", runs * steps) as task:
        for run in range(runs):
            started, embedded = time.monotonic(), texts_encoded()
            label = f"noise floor: {description}: run {run + 1}/{runs}"

            def line(done: int, label: str = label, embedded: int = embedded) -> str:
                return (f"{label}: {min(done, half) // per_case}/{n_cases} cases answered, "
                        f"{max(done - half, 0) // per_case} judged, {texts_encoded() - embedded} texts embedded")

            results.append(body(run, LoggedTask(task, reporter, line)))
            reporter.stage(f"{label} done ({len(results[-1])} cases, {texts_encoded() - embedded} texts embedded, "
                           f"{time.monotonic() - started:.0f} s)")
    return results


def calibrate(
    pipeline: RetrievalPipeline,
    settings: RetrievalSettings,
    generator_config: Any,
    judge_config: Any,
    variant_config: VariantsConfig,
    runs: int,
    resources: BackendResources,
    reporter: Reporter | None = None,
    responder: Responder | None = None,
) -> NoiseFloor:
    """The noise floor of ``settings`` on the pipeline's dataset from ``runs`` regenerate and re-judge runs.

    ``responder``, when given, must answer with ``generator_config`` and judge with ``judge_config`` as given (a
    study's own responder): run 0 then goes through it, so a later evaluation of ``settings`` with it (the study's
    baseline trial) finds run 0's answers and verdicts in its memo instead of answering again. Run 0 is the configuration as given either way (see
    :func:`with_run_seed`), so the floor is the same; the fresh generators and judges of runs 1.. are unchanged.

    >>> floor = calibrate(pipeline, RetrievalSettings(), ExtractiveGeneratorConfig(), LexicalJudgeConfig(),
    ...                   VariantsConfig(), 3, BackendResources())  # doctest: +SKIP
    >>> floor.write("noise_floor.json")  # doctest: +SKIP
    """
    if runs < 2:
        raise UserError(f"calibration needs at least 2 runs to see run-to-run variance, got {runs}")
    reporter = reporter or SilentReporter()
    dataset = pipeline.dataset
    before = resources.usage.snapshot()
    calls: Counter[str] = Counter()
    reporter.stage(f"noise floor: retrieving {len(dataset.golden)} questions ({runs} runs; chunks and indexes are "
                   "built first when not cached)")
    retrieval_runs = [score_contexts(pipeline, pipeline.retrieve(settings, "clean")) for _ in range(runs)]
    undefined: dict[str, str] = {}
    # conflict exposure is a retrieval fact like recall@k: measured the same way, R retrievals over the index with
    # the conflicting documents, so its run-to-run part is what those retrievals show (0 for tuner's own retrieval)
    for scores in retrieval_runs:
        flags = conflict_exposure(pipeline, settings)
        if flags is None:
            undefined[EXPOSURE] = ("the dataset has no conflicting documents" if not dataset.conflicts
                                   else "the retrieval does not search the conflicting documents")
            break
        scores[EXPOSURE] = [float(flag) for flag in flags]
    components = _retrieval_components(retrieval_runs)
    n_cases = len(dataset.golden)
    if dataset.retrieval_only:
        undefined.update({name: "dataset has no keypoints" for name in _FAITHFULNESS})
    else:

        def regenerate(run: int, task: Task) -> list[CaseOutcome]:
            answering = responder if run == 0 and responder is not None else Responder(
                build_generator(with_run_seed(generator_config, run), resources),
                build_judge(with_run_seed(judge_config, run), resources),
            )
            before = answering.calls()
            outcomes = RobustnessEvaluator(pipeline, answering, variant_config).evaluate(settings, _VARIANTS, task=task)
            after = answering.calls()
            calls.update(generator=after["generator"] - before["generator"], judge=after["judge"] - before["judge"])
            return outcomes

        answered = sum(1 for case in dataset.golden if case.keypoints)
        regenerated = _each_run(runs, "regenerating answers", answered, reporter, regenerate,
                                pipeline.embeddings.texts_encoded)
        saved = _SavedAnswers(_saved_answers(regenerated[0]))

        def rejudge(run: int, task: Task) -> list[CaseOutcome]:
            responder = Responder(saved, build_judge(with_run_seed(judge_config, run), resources))
            outcomes = RobustnessEvaluator(pipeline, responder, variant_config).evaluate(settings, _VARIANTS, task=task)
            calls.update(judge=responder.calls()["judge"])
            return outcomes

        rejudged = _each_run(runs, "re-judging the answers of run 0", answered, reporter, rejudge,
                              pipeline.embeddings.texts_encoded)
        faithfulness, unmeasured = _faithfulness_components(regenerated, rejudged)
        components.update(faithfulness)
        undefined.update(unmeasured)
        n_cases = len(regenerated[0])
    for name, component in list(components.items()):
        if not np.isfinite(component.bootstrap_sd):
            undefined[name] = "bootstrap standard error is undefined"
            del components[name]
    usage = resources.usage.snapshot() - before
    return NoiseFloor(
        objectives={name: min_detectable_difference(c.run_sd, c.bootstrap_sd) for name, c in components.items()},
        components=components,
        runs=runs,
        n_cases=n_cases,
        settings=settings.model_dump(mode="json"),
        dataset_hash=dataset.content_hash,
        generator=public_config(generator_config),
        judge=public_config(judge_config),
        variant_config=variant_config.model_dump(mode="json"),
        calls={
            "generator": calls["generator"],
            "judge": calls["judge"],
            "total": calls["generator"] + calls["judge"],
            "endpoint_calls": usage.calls,
            "cache_hits": usage.cache_hits,
        },
        undefined=undefined,
    )
