"""Study (**study file** → trials → trial record): create or resume a study and run trials until the budget is spent;
several workers may share one storage."""

from __future__ import annotations

import contextlib
import random
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import optuna

from tuner.dataset import Dataset, load_dataset, resolve_dataset
from tuner.errors import BackendFailure, BudgetSpent, disk_fault, UserError
from tuner.front import StudyRecord, SummaryTracker, TrialRecord, front_trials, study_front
from tuner.evaluation import CaseOutcome, Responder, RobustnessEvaluator
from tuner.generation import build_generator
from tuner.judging import build_judge
from tuner.backends import BackendResources
from tuner.variants import VARIANTS, VariantsConfig
from tuner.progress import Reporter, SilentReporter, Task
from tuner.redaction import redact
from tuner.retrieval import TEXT_RULES, RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import run_sd_of_margin
from tuner.text import detect_language
from tuner.study._budget import SpendingMeter
from tuner.study._check import check_study
from tuner.study._config import LoadedStudy
from tuner.study._confirm import check_split, confirm_front, confirmation_split, record_split
from tuner.study._faults import storage_fault
from tuner.engine import InertKnob
from tuner.study._inert import active_space, enqueued_params
from tuner.study._interrupt import InterruptGuard
from tuner.study._resume import check_text_rules
from tuner.study._objective import TrialObjective
from tuner.study._samplers import build_sampler
from tuner.study._space import SearchSpace, load_search_space
from tuner.study._tracking import TrialCallback, tracking_callbacks
from tuner.study._workers import (
    INTERRUPTED, Heartbeat, StudyLock, claim_worker_index, repair_orphans, requeue, retry_stale, sqlite_path, worker_name,
    worker_seed,
)

STORAGE_ATTEMPTS = 5
STORAGE_RETRIES = 2
"""Fresh starts of the trial loop after a lost storage connection (waits 1, then 2 s) before the run stops."""


SQLITE_BUSY_SECONDS = 60
"""How long a SQLite write waits for another worker's (sqlite3's default, 5 s, fails heartbeats on a loaded machine)."""


def engine_kwargs(url: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"pool_pre_ping": True}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_SECONDS}
    return kwargs


def open_storage(url: str, heartbeat_interval: int | None = None) -> optuna.storages.RDBStorage:
    """Optuna RDB storage for ``url``; with a heartbeat, a killed worker's trial is failed and retried once. Workers
    creating a fresh database take the storage's lock in turn (SQLite file, PostgreSQL), so none sees its tables
    half-made; on other backends they retry."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        kwargs: dict[str, Any] = {}
        if heartbeat_interval:
            kwargs = dict(
                heartbeat_interval=heartbeat_interval,
                grace_period=heartbeat_interval * 3,
                heartbeat_stale_trial_callback=retry_stale,
            )
        attempt = 0
        while True:
            lock: StudyLock | None = None
            try:
                lock = StudyLock(url, "")
                with lock.held():
                    return optuna.storages.RDBStorage(url, engine_kwargs=engine_kwargs(url), **kwargs)
            except Exception as exc:  # SQLAlchemy raises many kinds for a bad URL or an unreachable server
                attempt += 1
                # a process that does not take the lock (another backend, or a plain optuna client) may be creating
                # the tables of a fresh database at the same time: retry
                racing = ("already exists", "UNIQUE constraint failed: alembic_version", "duplicate key value")
                if any(text in str(exc) for text in racing) and attempt < STORAGE_ATTEMPTS:
                    time.sleep(0.5 * attempt)
                    continue
                cause = disk_fault(exc) or str(exc).splitlines()[0]
                raise UserError(redact(f"storage {url}: cannot open: {cause}")) from None
            finally:
                if lock is not None:
                    lock.close()


def load_study(loaded: LoadedStudy) -> optuna.Study:
    """The existing study of a study file (for ``tuner pareto`` / ``tuner export``)."""
    storage = open_storage(loaded.storage)
    try:
        return optuna.load_study(study_name=loaded.config.name, storage=storage)
    except KeyError:
        raise UserError(f"study '{loaded.config.name}' not found in {redact(loaded.storage)} (run 'tuner run' first)") from None


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
    budget_ended: str | None = None
    """Why ``budget.max_cost`` / ``budget.max_tokens`` ended the run (None: it did not)."""
    fault: str | None = None
    """The storage fault that stopped the run, as one line (None: none did); the study was read again after it, so
    what is done can still be reported (:func:`reread_after_fault`)."""
    texts_embedded: int = 0
    """Texts this run's encoders embedded (not read from the embedding store)."""


class _InterruptibleEvaluator(RobustnessEvaluator):
    """The run's evaluator: an interrupt stops a batch of cases at once (the guard raises only in here and in the
    other evaluation work of a run, never inside a storage write)."""

    def __init__(
        self, pipeline: RetrievalPipeline, responder: Responder, variant_config: VariantsConfig, guard: InterruptGuard,
        meter: SpendingMeter,
    ):
        super().__init__(pipeline, responder, variant_config)
        self.guard = guard
        self.meter = meter

    def evaluate(
        self, settings: RetrievalSettings, variants: Sequence[str] = VARIANTS, case_ids: Sequence[str] | None = None,
        task: Task | None = None,
    ) -> list[CaseOutcome]:
        self.meter.check()  # a spent budget stops before the next batch's requests, as an interrupt would
        with self.guard.interruptible():
            return self.guard.call(super().evaluate, settings, variants, case_ids, task)


def _noise_floor(
    loaded: LoadedStudy, objective: TrialObjective, reporter: Reporter, resources: BackendResources, guard: InterruptGuard
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """(noise floor, pruning margin, run-to-run sd) per objective: from the study file's numbers (floor and margin the
    same, read as run-to-run margins at ``NoiseFloor.z``), a ``tuner calibrate`` file, or a calibration run now
    (``auto``) on the baseline configuration."""
    from tuner.noisefloor import NoiseFloor, calibrate

    spec = loaded.config.noise_floor
    if isinstance(spec, dict):
        values = {k: float(v) for k, v in spec.items()}
        return values, values, {k: run_sd_of_margin(v, NoiseFloor.z) for k, v in values.items()}

    if loaded.noise_floor_path is not None:  # read once already when the study file was loaded
        floor = NoiseFloor.from_file(loaded.noise_floor_path)
    else:
        reporter.stage("calibrating the noise floor on the baseline configuration (noise_floor: auto)")
        try:
            with guard.interruptible():
                floor = guard.call(
                    calibrate, objective.pipeline, loaded.baseline_settings(), loaded.generator, loaded.judge,
                    loaded.config.variants, 3, resources, reporter, objective.evaluator.responder,
                )
        except KeyboardInterrupt:
            reporter.stage("interrupted during the noise floor calibration: nothing was recorded; "
                           "run the same command to calibrate and start")
            raise
    return dict(floor.objectives), floor.run_margins(), floor.run_sd()


def run_study(
    loaded: LoadedStudy, trials: int | None = None, reporter: Reporter | None = None,
    resources: BackendResources | None = None, guard: InterruptGuard | None = None,
) -> StudyRun:
    """Create or resume the study of ``loaded`` and run until ``trials`` finished trials exist in storage, counted
    over every worker; ``guard`` (installed by ``tuner run``) decides what an interrupt stops."""
    reporter = reporter or SilentReporter()
    resources = resources or BackendResources(cache_url=loaded.call_cache_url)
    guard = guard or InterruptGuard()
    config = loaded.config
    golden = load_dataset(resolve_dataset(loaded.dataset))
    dataset, held_out = confirmation_split(golden, config.confirm)
    space = load_search_space(loaded.search_space_path, loaded.config.sampler.conditional)
    check_study(loaded, space, dataset)
    space, inert = active_space(space, dataset, loaded.base_settings, reporter, loaded.engine)
    build_sampler(config.sampler, space)  # before any output: a grid over a float without a step fails here
    embeddings = resources.embeddings  # one model load per process: the retrieval's model is the generators' too
    embeddings.configure(config.embedding, loaded.embedding_cache_url)  # an unavailable device fails here, before any output too
    fixed = {k: v for k, v in loaded.base_settings.model_dump().items() if k not in space.params}
    trackers = tracking_callbacks(config.tracking, config.name, config.objectives, fixed)
    loaded.output.mkdir(parents=True, exist_ok=True)
    storage = open_storage(loaded.storage, config.heartbeat_interval)
    pipeline = study_pipeline(loaded, dataset, resources, reporter)
    responder = Responder(build_generator(loaded.generator, resources), build_judge(loaded.judge, resources))
    meter = SpendingMeter(config.budget, resources.usage)
    evaluator = _InterruptibleEvaluator(pipeline, responder, config.variants, guard, meter)
    lock = StudyLock(loaded.storage, config.name)
    started = time.monotonic()
    study: optuna.Study | None = None
    asked: set[int] = set()  # the trials this run asked for: the ones a storage fault may leave RUNNING
    try:
        if lock.busy():
            reporter.stage("another process holds the study's lock (creating it or calibrating its noise floor): waiting")
        with guard.interruptible():
            lock.acquire()
        try:
            study, objective, worker = _join(loaded, storage, dataset, space, pipeline, evaluator, resources, reporter, guard,
                                             inert, (golden.content_hash, held_out))
        finally:
            lock.release()
        seed = worker_seed(config.sampler.seed, worker)
        study.sampler = build_sampler(config.sampler.model_copy(update={"seed": seed}), space)
        if worker:
            reporter.stage(f"worker {worker} of study '{config.name}': sampler seed {seed}")
        record_split(study, golden.content_hash, held_out)
        target = trials or config.budget.trials
        loop = _TrialLoop(study, storage, objective, loaded, target, reporter, guard, lock, trackers, meter, asked)
        run = _optimize(loop, dataset, space)
        if held_out is not None and not run.interrupted:
            try:
                confirm_front(study, study_front(study)[2],
                              RobustnessEvaluator(study_pipeline(loaded, held_out, resources, reporter), responder, config.variants),
                              reporter, guard)
            except KeyboardInterrupt:
                run.interrupted = True  # as during a trial: the report and config of what is done are still written
        run.texts_embedded = embeddings.texts_encoded()
        return run
    except Exception as exc:
        fault = storage_fault(exc, loaded.storage)
        if fault is None:
            raise
        # stop as Ctrl-C does: the trial it hit was failed and queued again (_run_trial) if the storage answered;
        # the report of what is done is written if the study can be read again
        readable, why = (None, "the study was not created yet") if study is None else reread_after_fault(
            loaded, reporter, asked)
        if readable is None:
            raise UserError(f"{fault}; no report could be written ({why}); {FAULT_RESUME}") from exc
        return StudyRun(readable, loaded, dataset, space, time.monotonic() - started, True, fault=fault,
                        texts_embedded=embeddings.texts_encoded())
    finally:
        lock.close()


def study_pipeline(loaded: LoadedStudy, dataset: Dataset, resources: BackendResources, reporter: Reporter) -> RetrievalPipeline:
    """The retrieval a study measures on ``dataset``: on the study's engine (``engine:``, or a ``retriever:`` service;
    a service's replies kept in the study's call cache, its requests counted apart from the generator's and judge's),
    checked there before any trial (:meth:`tuner.engine.Engine.ready`)."""
    announced = loaded.engine.announced()
    if announced is not None:
        reporter.stage(announced)
    pipeline = loaded.engine.pipeline(dataset, reporter=reporter, embeddings=resources.embeddings,
                                      calls=resources.call_cache)
    loaded.engine.ready(pipeline, loaded.base_settings)
    return pipeline


FAULT_RESUME = "the trials told before it are kept: fix it and run the same command to resume"


def reread_after_fault(loaded: LoadedStudy, reporter: Reporter, asked: set[int]) -> tuple[optuna.Study | None, str]:
    """The study read again from a fresh connection after a storage fault, trying ``STORAGE_RETRIES`` more times
    (waits 1, then 2 s) for a storage that comes back, with the trials of ``asked`` (this run's) that the fault left
    RUNNING failed and queued again (as Ctrl-C does); else (None, why not). A SQLite database that no longer exists is not opened (that
    would create an empty one)."""
    database = sqlite_path(loaded.storage)
    why = ""
    for attempt in range(STORAGE_RETRIES + 1):
        if database is not None and not database.is_file():
            return None, f"the study database {database} is gone"
        try:
            storage = open_storage(loaded.storage)
            study = optuna.load_study(study_name=loaded.config.name, storage=storage)
            study_id = storage.get_study_id_from_name(loaded.config.name)
            for trial in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
                if trial.number in asked:
                    trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
                    storage.set_trial_user_attr(trial_id, "failure", f"{INTERRUPTED}: storage fault: its configuration "
                                                "is queued again")
                    storage.set_trial_state_values(trial_id, optuna.trial.TrialState.FAIL)
                    requeue(study, storage.get_trial(trial_id))
            return study, ""
        except Exception as exc:  # the same faults as the run's, or a UserError from open_storage
            why = storage_fault(exc, loaded.storage) or str(exc).splitlines()[0]
        if attempt < STORAGE_RETRIES:
            reporter.stage(f"reading the study again for its report: {why}: retrying ({attempt + 1}/{STORAGE_RETRIES})")
            time.sleep(attempt + 1)
    return None, f"the storage cannot be read: {why}"


def _join(
    loaded: LoadedStudy, storage: optuna.storages.RDBStorage, dataset: Dataset, space: SearchSpace,
    pipeline: RetrievalPipeline, evaluator: RobustnessEvaluator, resources: BackendResources, reporter: Reporter,
    guard: InterruptGuard, inert: list[InertKnob], split: tuple[str, Dataset | None],
) -> tuple[optuna.Study, TrialObjective, int]:
    """Under the study's lock: create or load the study, check that it was run on this data split the same way
    (``split``: the whole golden set's hash and the held-out share), claim this worker's index, repair trials no live
    worker owns, and calibrate the noise floor if no worker has (the others wait for it and reuse it)."""
    config = loaded.config
    study = optuna.create_study(study_name=config.name, storage=storage, directions=loaded.directions, load_if_exists=True)
    if study.metric_names is None:
        # optuna-dashboard and optuna.visualization show these instead of "Objective 0/1"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(list(config.objectives))
    record = StudyRecord.from_study(study)
    check_split(study, *split)
    if record.dataset_hash not in (None, dataset.content_hash):
        raise UserError(f"study '{config.name}' in {redact(loaded.storage)} was run on another dataset; use a new name or storage")
    recorded_now = loaded.engine.recorded(pipeline)
    engine = recorded_now.get("engine")
    recorded = record.engine or {}
    if record.created and engine is not None and _other_rows(recorded, engine):
        raise UserError(f"study '{config.name}' in {redact(loaded.storage)} was measured on collection "
                        f"{engine.get('collection')} holding {recorded['rows']} rows (content {recorded['content']}); "
                        f"at {engine['uri']} it holds {engine['rows']} rows (content {engine['content']}): other rows "
                        "than its trials were measured on; point engine.uri at the collection it was run on, or use a "
                        "new name or storage")
    if record.created and engine is not None and _measured_on(record.engine) != _measured_on(engine):
        raise UserError(f"study '{config.name}' in {redact(loaded.storage)} was run on engine "
                        f"{_measured_on(record.engine)}, the study file names {_measured_on(engine)}: trials measured on two "
                        "engines are not comparable; keep its engine: as it was, or use a new name or storage")
    if record.created:
        check_same_encoding(config.name, loaded.storage, record.settings, loaded.base_settings, space)
        check_text_rules(loaded, space, record, reporter)
    worker = claim_worker_index(study)
    for number, why in repair_orphans(study, storage, timedelta(seconds=config.heartbeat_interval * 3)):
        reporter.stage(f"trial {number}: {why}: its configuration is queued again")
    order = record.case_order or case_order(dataset, config.seed)
    objective = TrialObjective(
        pipeline, evaluator, space, loaded.base_settings, config.objectives, order, {}, config.pruning,
        resources.usage, config.constraints.min_recall, config.constraints.answer_infeasible,
        config.constraints.max_exposure, config.constraints.max_latency_ms,
    )
    if not record.created:
        floor, objective.margin, run_sd = _noise_floor(loaded, objective, reporter, resources, guard)
        StudyRecord(
            dataset_hash=dataset.content_hash, case_order=order, objectives=list(config.objectives), noise_floor=floor,
            pruning_margin=objective.margin, run_sd=run_sd, study_file=str(loaded.path), settings=loaded.base_settings.model_dump(),
            calibrated_by=worker_name() if config.noise_floor == "auto" else None,
            labels=None if dataset.provenance is None else dataset.provenance.to_dict(),
            retrieval=recorded_now.get("retrieval"),
            engine=engine,
            language=detect_language(case.question for case in dataset.golden),
            text_rules=dict(TEXT_RULES),
        ).write(study)
        for params in config.enqueue:
            study.enqueue_trial(enqueued_params(params, inert), skip_if_exists=True)
    else:
        objective.margin = dict(record.pruning_margin)
        if record.calibrated_by is not None and config.noise_floor == "auto":
            reporter.stage(f"noise floor calibrated by worker {record.calibrated_by}: reused")
    return study, objective, worker


def _other_rows(recorded: dict[str, Any], engine: dict[str, Any]) -> bool:
    """Whether an attached collection holds other content than the study recorded (a study recorded before attached
    collections' content: not known, not refused)."""
    if "content" not in recorded or "content" not in engine:
        return False
    return bool((recorded["rows"], recorded["content"]) != (engine["rows"], engine["content"]))


ENCODING_SETTINGS = ("embedding_model", "query_prompt", "document_prompt")
"""What a study's dense scores are made of beside the text: a resumed study keeps them as it recorded them."""


def check_same_encoding(name: str, storage: str, recorded: dict[str, Any], now: RetrievalSettings, space: SearchSpace) -> None:
    """Refuse, in one line, to resume a study whose settings now give another embedding model or prompt than the ones
    it recorded at creation (a default that changed, as a Chinese dataset's model did with issue 51, or an edited study
    file): its trials would mix two embedders. A study whose search space samples them leaves them to each trial.

    >>> from tuner.settings import RetrievalSettings
    >>> check_same_encoding("s", "sqlite:///s.db", {"embedding_model": "all-MiniLM-L6-v2", "query_prompt": ""},
    ...                     RetrievalSettings(embedding_model="multilingual-e5-small"), SearchSpace({}, "space.yaml"))
    Traceback (most recent call last):
    ...
    tuner.errors.UserError: study 's' in sqlite:///s.db ran on embedding_model all-MiniLM-L6-v2, query_prompt '', its settings now give multilingual-e5-small, 'query: ': trials on two embedders are not comparable; name embedding_model: all-MiniLM-L6-v2 in the study file's settings to resume it, or use a new name or storage
    """
    if any(key in space.params for key in ENCODING_SETTINGS):
        return  # a model's prompts follow it (multilingual-e5-small's are its own)
    changed = [key for key in ENCODING_SETTINGS if key in recorded and recorded[key] != getattr(now, key)]
    if not changed:
        return
    before = ", ".join(f"{key} {recorded[key] if key == 'embedding_model' else repr(recorded[key])}" for key in changed)
    after = ", ".join(getattr(now, key) if key == "embedding_model" else repr(getattr(now, key)) for key in changed)
    keep = [key for key in changed if key == "embedding_model"] or changed  # a model's prompts follow its name
    named = ", ".join(f"{key}: {recorded[key] if key == 'embedding_model' else repr(recorded[key])}" for key in keep)
    raise UserError(f"study '{name}' in {redact(storage)} ran on {before}, its settings now give {after}: trials on two "
                    f"embedders are not comparable; name {named} in the study file's settings to resume it, or use a new "
                    "name or storage")


def _measured_on(engine: dict[str, Any] | None) -> dict[str, Any]:
    """What of an engine's description changes a trial's figures: the backend, its dense index and an attached
    collection, not the address it was reached at (workers may reach one cluster by several). A study recorded before
    engines: memory."""
    described = engine or {"backend": "memory"}
    return {key: described[key] for key in ("backend", "index", "index_params", "collection") if key in described}


def _run_trial(
    study: optuna.Study, trial: optuna.Trial, objective: TrialObjective, heartbeat: Heartbeat, guard: InterruptGuard,
    lock: StudyLock, storage_url: str,
) -> optuna.trial.FrozenTrial:
    """Claim the configuration of one asked trial under the study's lock (a configuration another worker is
    evaluating is then a duplicate: :func:`tuner.study._objective.evaluated_twin`), evaluate it and tell its outcome.
    An interrupt fails it (recorded as such) and queues its configuration again; its heartbeat stops before anything
    is told. A storage fault (:func:`tuner.study._faults.storage_fault`) stops it the same way, if the storage answers.
    A trial another worker finished meanwhile (failed as stale when this worker's heartbeat lagged under load, its
    configuration queued again by that worker) is lost: what this worker measured is dropped, and the run goes on
    (:func:`_finished_elsewhere`)."""
    try:
        with heartbeat:
            TrialRecord(worker=worker_name()).write(trial)
            guard.check()  # an interrupt that arrived inside ask()
            with lock.held():
                objective.claim(trial)
            values = objective(trial)
    except optuna.TrialPruned:
        return _tell(study, trial, state=optuna.trial.TrialState.PRUNED)
    except BackendFailure:
        return _tell(study, trial, state=optuna.trial.TrialState.FAIL)
    except (KeyboardInterrupt, BudgetSpent) as stop:
        why = INTERRUPTED if isinstance(stop, KeyboardInterrupt) else f"stopped: {stop}"
        if _finished_elsewhere(heartbeat) is None:
            TrialRecord(failure=f"{why}: its configuration is queued again").write(trial)
            requeue(study, study.tell(trial, state=optuna.trial.TrialState.FAIL))
        raise
    except Exception as exc:
        lost = _finished_elsewhere(heartbeat)
        if lost is not None:
            return lost
        if storage_fault(exc, storage_url) is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        # the storage failed under the trial: stop as Ctrl-C does when it answers again; if it does not, the trial
        # stays RUNNING and the next start fails and queues it again (its worker is gone: repair_orphans)
        with contextlib.suppress(Exception):
            TrialRecord(failure=f"{INTERRUPTED}: storage fault: its configuration is queued again").write(trial)
            requeue(study, study.tell(trial, state=optuna.trial.TrialState.FAIL))
        raise
    except BaseException:
        study.tell(trial, state=optuna.trial.TrialState.FAIL, skip_if_finished=True)
        raise
    return _tell(study, trial, list(values))


def _tell(study: optuna.Study, trial: optuna.Trial, values: Sequence[float] | None = None,
          state: optuna.trial.TrialState | None = None) -> optuna.trial.FrozenTrial:
    """``study.tell`` of a trial this worker evaluated; one another worker finished meanwhile is lost and stays as
    that worker left it (:func:`_finished_elsewhere`)."""
    return study.tell(trial, values, state=state, skip_if_finished=True)


def _finished_elsewhere(heartbeat: Heartbeat) -> optuna.trial.FrozenTrial | None:
    """The stored trial of ``heartbeat`` when it is no longer RUNNING although this worker still runs it: another
    worker's stale check (``fail_stale_trials``, :func:`tuner.study._workers.repair_orphans`) failed it, and queued its
    configuration again, after this worker's heartbeat went unrecorded for the grace period (a loaded machine, a slow
    database); its next write to the trial then fails. None while it is this worker's to tell, or when the storage
    cannot say."""
    try:
        stored = heartbeat.storage.get_trial(heartbeat.trial_id)
    except Exception:  # the storage itself failed: the caller's fault handling decides
        return None
    return stored if stored.state.is_finished() else None


@dataclass
class _TrialLoop:
    """One run's trial loop: asks for trials until the study (all workers together) has ``target`` finished ones, runs
    each and says when to stop. ``asked`` collects the numbers of the trials it asks for (for
    :func:`reread_after_fault`); ``budget_ended`` says why ``budget.max_cost`` / ``budget.max_tokens`` stopped it."""

    study: optuna.Study
    storage: optuna.storages.RDBStorage
    objective: TrialObjective
    loaded: LoadedStudy
    target: int
    reporter: Reporter
    guard: InterruptGuard
    lock: StudyLock
    trackers: list[TrialCallback]
    meter: SpendingMeter
    asked: set[int]
    start: float = field(default_factory=time.monotonic)
    summary: SummaryTracker = field(default_factory=SummaryTracker)
    budget_ended: str | None = None
    ran: int = 0
    wasted_before: int = 0
    study_id: int = field(init=False)

    def __post_init__(self) -> None:
        self.study_id = self.storage.get_study_id_from_name(self.study.study_name)

    def ask(self) -> optuna.Trial | None:
        """Under the study's lock: fail stale trials, count the finished and running ones, and ask for the next trial,
        so no two workers claim the last slot; None when the run stops here (target, timeout or budget reached)."""
        budget = self.loaded.config.budget
        if budget.timeout is not None and time.monotonic() - self.start >= budget.timeout:
            return None
        with self.lock.held(), warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            optuna.storages.fail_stale_trials(self.study)
            summary = self.summary.update(self.study)
            if summary.finished + summary.n_running >= self.target:
                return None
            if budget.max_llm_calls is not None and summary.calls.llm >= budget.max_llm_calls:
                return None
            self.meter.restart(summary.calls)
            self.budget_ended = self.meter.exhausted()
            if self.budget_ended is not None:
                return None
            # this loop is the optimize loop: it keeps each asked trial's heartbeat (Heartbeat below)
            warnings.filterwarnings("ignore", "Heartbeat of storage is supposed to be used with Study.optimize")
            # the number ask() takes (the first waiting trial, else a new one), known before it: a fault between the
            # trial's creation and ask's return still leaves it this run's to requeue
            waiting = self.study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
            self.asked.add(min((t.number for t in waiting), default=summary.n_trials))
            trial = self.study.ask()
            self.asked.add(trial.number)
            return trial

    def step(self, task: Task) -> bool:
        """Ask for one trial and run it; False when the run stops."""
        trial = self.ask()
        if trial is None:
            return False
        frozen = _run_trial(self.study, trial, self.objective, Heartbeat(self.storage, self.study_id, trial.number),
                            self.guard, self.lock, self.loaded.storage)
        self.ran += 1
        for tracker in self.trackers:
            tracker(self.study, frozen)
        stop = self.progress(frozen, task)
        if stop is not None:
            self.reporter.stage(stop)
        return stop is None

    def progress(self, trial: optuna.trial.FrozenTrial, task: Task) -> str | None:
        """The trial's progress line; why the run stops now, if it does. A sampler that keeps proposing evaluated
        configurations (a small or exhausted space), or a backend that fails every trial, must not loop forever: the
        run stops after ``max(10, target)`` such trials."""
        if trial.state != optuna.trial.TrialState.FAIL and TrialRecord.from_trial(trial).duplicate_of is None:
            task.advance()
        summary = self.summary.update(self.study)
        spent = f", spent {summary.calls.cost:.4g}" if self.loaded.priced else ""
        self.reporter.stage(
            f"trial {trial.number} {_outcome(trial)}: {summary.finished}/{self.target} finished, "
            f"{summary.pruned_on_evidence} pruned, front {len(front_trials(self.study))}, calls {summary.calls.llm}{spent}"
        )
        wasted = summary.n_duplicates + summary.n_failed - self.wasted_before
        if wasted >= max(10, self.target):
            return (f"stopping: {wasted} trials in this run repeated an evaluated configuration or failed "
                    "(the search space may be exhausted; see the failed trials' 'failure' attribute)")
        return None


def _reconnecting(step: Callable[[], bool], storage_url: str, reporter: Reporter, guard: InterruptGuard) -> None:
    """Call ``step`` until it returns False or an interrupt is requested. A transient disconnect (a server restart, a
    killed backend) gets ``STORAGE_RETRIES`` fresh starts in a row (waits 1, then 2 s): the trial it hit was failed and
    queued again (:func:`_run_trial`); any other fault, or one more, stops the run (:func:`run_study`)."""
    retries = 0
    while not guard.requested:
        try:
            if not step():
                return
        except Exception as exc:
            lost = storage_fault(exc, storage_url) or ""
            if "connection lost" not in lost or retries >= STORAGE_RETRIES:
                raise
            retries += 1
            reporter.stage(f"{lost}: retrying ({retries}/{STORAGE_RETRIES})")
            time.sleep(retries)
            continue
        retries = 0


def _optimize(loop: _TrialLoop, dataset: Dataset, space: SearchSpace) -> StudyRun:
    """Run ``loop`` to its end: the target reached, an interrupt, the budget or the timeout."""
    interrupted = False
    first = loop.summary.update(loop.study)
    loop.wasted_before = first.n_duplicates + first.n_failed
    with loop.reporter.task(f"study '{loop.loaded.config.name}'", max(loop.target - first.finished, 0)) as task:
        try:
            _reconnecting(lambda: loop.step(task), loop.loaded.storage, loop.reporter, loop.guard)
        except KeyboardInterrupt:
            interrupted = True
        except BudgetSpent as spent:
            loop.budget_ended = str(spent)
        interrupted = interrupted or loop.guard.requested
    if loop.budget_ended is not None and not interrupted:
        loop.reporter.stage(f"the budget ended the study: {loop.budget_ended}; the study is saved, a running trial "
                            "queued again; raise the budget and run the same command to resume")
    if interrupted:
        loop.reporter.stage(f"interrupted after {loop.ran} trial(s) in this run: the study is saved; "
                            "run the same command again to resume")
    return StudyRun(loop.study, loop.loaded, dataset, space, time.monotonic() - loop.start, interrupted, loop.budget_ended)


def _outcome(trial: optuna.trial.FrozenTrial) -> str:
    """``complete``, ``pruned after 60/180 cases (beaten by #3, p=0.002)``, ``duplicate of #4 (not evaluated)``,
    ``unscorable (why)``, ``failed (what raised)``, or the state's name."""
    record = TrialRecord.from_trial(trial)
    if record.duplicate_of is not None:
        return f"duplicate of #{record.duplicate_of} (not evaluated again)"
    if record.skipped is not None:
        return f"infeasible, not answered: {record.skipped} (no generator or judge request)"
    if record.unscorable is not None:
        return f"unscorable: {record.unscorable} (kept off the front)"
    if trial.state == optuna.trial.TrialState.FAIL and record.failure is not None:
        return f"failed: {record.failure}"
    evidence = record.pruning
    if trial.state != optuna.trial.TrialState.PRUNED or evidence is None:
        return trial.state.name.lower()
    return (f"pruned after {evidence.cases_used}/{evidence.n_total} cases "
            f"(beaten by #{evidence.dominated_by}, p={evidence.p_value:.2g})")
