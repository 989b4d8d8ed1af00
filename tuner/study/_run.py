"""Study (**study file** → trials → trial record): create or resume a study and run trials until the budget is spent;
several workers may share one storage."""

from __future__ import annotations

import random
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna

from tuner.dataset import Dataset, load_dataset, resolve_dataset
from tuner.embedding import configure_embeddings
from tuner.errors import BackendFailure, UserError
from tuner.export import redact_url
from tuner.evaluation import Responder, RobustnessEvaluator
from tuner.generation import build_generator
from tuner.judging import build_judge
from tuner.llm import BackendResources
from tuner.progress import Reporter, SilentReporter
from tuner.retrieval import RetrievalPipeline
from tuner.study._check import check_study
from tuner.study._config import LoadedStudy
from tuner.study._objective import TrialObjective
from tuner.study._record import StudyRecord, TrialCalls, TrialRecord
from tuner.study._samplers import build_sampler
from tuner.study._space import SearchSpace, load_search_space
from tuner.study._tracking import TrialCallback, tracking_callbacks

STORAGE_ATTEMPTS = 5


def open_storage(url: str, heartbeat_interval: int | None = None) -> optuna.storages.BaseStorage:
    """Optuna RDB storage for ``url``; with a heartbeat, a killed worker's trial is failed and retried once."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        kwargs: dict[str, Any] = {}
        if heartbeat_interval:
            kwargs = dict(
                heartbeat_interval=heartbeat_interval,
                grace_period=heartbeat_interval * 3,
                heartbeat_stale_trial_callback=optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=1),
            )
        attempt = 0
        while True:
            try:
                return optuna.storages.RDBStorage(url, engine_kwargs={"pool_pre_ping": True}, **kwargs)
            except Exception as exc:  # SQLAlchemy raises many kinds for a bad URL or an unreachable server
                attempt += 1
                # workers starting together on a fresh database race to create its tables: retry that
                if "already exists" in str(exc) and attempt < STORAGE_ATTEMPTS:
                    time.sleep(0.5 * attempt)
                    continue
                raise UserError(f"storage {redact_url(url)}: cannot open: {str(exc).splitlines()[0]}") from None


def load_study(loaded: LoadedStudy) -> optuna.Study:
    """The existing study of a study file (for ``tuner pareto`` / ``tuner export``)."""
    storage = open_storage(loaded.storage)
    try:
        return optuna.load_study(study_name=loaded.config.name, storage=storage)
    except KeyError:
        raise UserError(f"study '{loaded.config.name}' not found in {loaded.storage} (run 'tuner run' first)") from None


def case_order(dataset: Dataset, seed: int) -> list[str]:
    """The one shuffled order of cases (with keypoints) that every trial of a study walks through."""
    ids = [case.id for case in dataset.golden if case.keypoints]
    random.Random(seed).shuffle(ids)
    return ids


@dataclass
class StudyRun:
    study: optuna.Study
    loaded: LoadedStudy
    dataset: Dataset
    space: SearchSpace
    elapsed: float
    interrupted: bool


def _noise_floor(
    loaded: LoadedStudy, objective: TrialObjective, reporter: Reporter, resources: BackendResources
) -> tuple[dict[str, float], dict[str, float]]:
    """(noise floor, pruning margin) per objective: from the study file's numbers (both the same), a
    ``tuner calibrate`` file, or a calibration run now (``auto``) on the baseline configuration."""
    spec = loaded.config.noise_floor
    if isinstance(spec, dict):
        values = {k: float(v) for k, v in spec.items()}
        return values, values
    from tuner.calibration import NoiseFloor, calibrate

    if spec != "auto":
        floor = NoiseFloor.from_file((loaded.path.parent / spec).resolve())
    else:
        reporter.stage("calibrating the noise floor on the baseline configuration (noise_floor: auto)")
        floor = calibrate(
            objective.pipeline, loaded.baseline_settings(), loaded.generator, loaded.judge, loaded.config.noise,
            runs=3, resources=resources, reporter=reporter,
        )
    return dict(floor.objectives), floor.run_margins()


def run_study(
    loaded: LoadedStudy, trials: int | None = None, reporter: Reporter | None = None, resources: BackendResources | None = None
) -> StudyRun:
    """Create or resume the study of ``loaded`` and run until ``trials`` finished trials exist in storage."""
    reporter = reporter or SilentReporter()
    resources = resources or BackendResources(cache_url=loaded.call_cache_url)
    config = loaded.config
    dataset = load_dataset(resolve_dataset(loaded.dataset))
    space = load_search_space(loaded.search_space_path)
    check_study(loaded, space, dataset)
    sampler = build_sampler(config.sampler, space)  # before any output: a grid over a float without a step fails here
    configure_embeddings(config.embedding)  # an unavailable device fails here, before any output too
    fixed = {k: v for k, v in loaded.base_settings.model_dump().items() if k not in space.params}
    trackers = tracking_callbacks(config.tracking, config.name, config.objectives, fixed)
    loaded.output.mkdir(parents=True, exist_ok=True)
    storage = open_storage(loaded.storage, config.heartbeat_interval)
    study = optuna.create_study(
        study_name=config.name, storage=storage, directions=loaded.directions, sampler=sampler, load_if_exists=True
    )
    if study.metric_names is None:
        # optuna-dashboard and optuna.visualization show these instead of "Objective 0/1"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(list(config.objectives))
    record = StudyRecord.from_study(study)
    if record.dataset_hash not in (None, dataset.content_hash):
        raise UserError(f"study '{config.name}' in {loaded.storage} was run on another dataset; use a new name or storage")
    pipeline = RetrievalPipeline(dataset, reporter=reporter)
    responder = Responder(build_generator(loaded.generator, resources), build_judge(loaded.judge, resources))
    evaluator = RobustnessEvaluator(pipeline, responder, config.noise)
    order = record.case_order or case_order(dataset, config.seed)
    objective = TrialObjective(
        pipeline, evaluator, space, loaded.base_settings, config.objectives, order, {}, config.pruning,
        resources.usage, config.constraints.min_recall,
    )
    if not record.created:
        floor, objective.margin = _noise_floor(loaded, objective, reporter, resources)
        StudyRecord(
            dataset_hash=dataset.content_hash, case_order=order, objectives=list(config.objectives), noise_floor=floor,
            pruning_margin=objective.margin, study_file=str(loaded.path), settings=loaded.base_settings.model_dump(),
        ).write(study)
        for params in config.enqueue:
            study.enqueue_trial(params, skip_if_exists=True)
    else:
        objective.margin = dict(record.pruning_margin)
    target = trials or config.budget.trials
    return _optimize(study, objective, loaded, dataset, space, target, reporter, trackers)


def _optimize(
    study: optuna.Study, objective: TrialObjective, loaded: LoadedStudy, dataset: Dataset, space: SearchSpace,
    target: int, reporter: Reporter, trackers: list[TrialCallback],
) -> StudyRun:
    budget = loaded.config.budget
    start = time.monotonic()
    interrupted = False

    def finished(summary: dict[str, Any]) -> int:
        """Configurations evaluated: complete and pruned trials, not the repeats of an evaluated one."""
        return int(summary["n_complete"] + summary["n_pruned"] - summary["n_duplicates"])

    first = study_summary(study)
    already = finished(first)
    # A sampler that keeps proposing evaluated configurations (a small or exhausted space), or a backend
    # that fails every trial, must not loop forever: stop after this many such trials in one run.
    wasted_limit = max(10, target)
    wasted_before = first["n_duplicates"] + first["n_failed"]
    with reporter.task(f"study '{loaded.config.name}'", max(target - already, 0)) as task:

        def callback(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
            if trial.state != optuna.trial.TrialState.FAIL and TrialRecord.from_trial(trial).duplicate_of is None:
                task.advance()
            summary = study_summary(study)
            calls = summary["calls"]["generator"] + summary["calls"]["judge"]
            reporter.stage(
                f"trial {trial.number} {_outcome(trial)}: {finished(summary)}/{target} finished, "
                f"{summary['n_pruned'] - summary['n_duplicates']} pruned, front {len(study.best_trials)}, calls {calls}"
            )
            wasted = summary["n_duplicates"] + summary["n_failed"] - wasted_before
            if wasted >= wasted_limit:
                reporter.stage(
                    f"stopping: {wasted} trials in this run repeated an evaluated configuration or failed "
                    "(the search space may be exhausted; see the failed trials' 'failure' attribute)"
                )
                study.stop()
            elif finished(summary) >= target or (budget.max_llm_calls is not None and calls >= budget.max_llm_calls):
                study.stop()

        if already < target:
            try:
                study.optimize(
                    objective, timeout=budget.timeout, callbacks=[*trackers, callback],
                    catch=(BackendFailure,), gc_after_trial=False, show_progress_bar=False,
                )
            except KeyboardInterrupt:
                interrupted = True
                reporter.stage("interrupted: the study is saved; run the same command again to resume")
    return StudyRun(study, loaded, dataset, space, time.monotonic() - start, interrupted)


def _outcome(trial: optuna.trial.FrozenTrial) -> str:
    """``complete``, ``pruned after 60/180 cases (beaten by #3, p=0.002)``, ``duplicate of #4 (not evaluated)``,
    ``unscorable (why)``, ``failed (what raised)``, or the state's name."""
    record = TrialRecord.from_trial(trial)
    if record.duplicate_of is not None:
        return f"duplicate of #{record.duplicate_of} (not evaluated again)"
    if record.unscorable is not None:
        return f"unscorable: {record.unscorable} (kept off the front)"
    if trial.state == optuna.trial.TrialState.FAIL and record.failure is not None:
        return f"failed: {record.failure}"
    evidence = record.pruning
    if trial.state != optuna.trial.TrialState.PRUNED or evidence is None:
        return trial.state.name.lower()
    return (f"pruned after {evidence.cases_used}/{evidence.n_total} cases "
            f"(beaten by #{evidence.dominated_by}, p={evidence.p_value:.2g})")


def study_summary(study: optuna.Study) -> dict[str, Any]:
    trials = study.get_trials(deepcopy=False)
    states = [t.state for t in trials]
    records = [TrialRecord.from_trial(t) for t in trials]
    calls: dict[str, int] = {"generator": 0, "judge": 0, "tokens": 0}
    for record in records:
        spent = record.calls or TrialCalls()
        for key in calls:
            calls[key] += getattr(spent, key)
    return {
        "n_trials": len(states),
        "n_complete": states.count(optuna.trial.TrialState.COMPLETE),
        "n_pruned": states.count(optuna.trial.TrialState.PRUNED),
        "n_failed": states.count(optuna.trial.TrialState.FAIL),
        "n_duplicates": sum(r.duplicate_of is not None for r in records),
        "n_unscorable": sum(r.unscorable is not None for r in records),
        "calls": calls,
    }
