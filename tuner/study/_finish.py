"""Report/export (front → **what a run writes**): what ``tuner run`` does around the optimization: the dry-run estimate
and the closing outputs."""

from __future__ import annotations

from typing import Any

import optuna

from tuner.dataset import Dataset, load_dataset, resolve_dataset
from tuner.export import export_document, redact_url, write_export
from tuner.pareto import PickUnmet, pick
from tuner.progress import Reporter
from tuner.study._config import LoadedStudy
from tuner.study._check import check_study
from tuner.study._front import directions_of, study_front
from tuner.study._record import StudyRecord, TrialRecord
from tuner.study._run import StudyRun, study_summary
from tuner.study._space import load_search_space
from tuner.text import word_count

TOKENS_PER_WORD = 1.3
ANSWER_WORDS = 40
CALIBRATION_RUNS = 3


def _words_per_unit(unit: str, dataset: Dataset) -> float:
    """Roughly how many words one chunk-size unit holds: a word is a word, a token ``1 / TOKENS_PER_WORD``
    words, a character the corpus's own words-per-character ratio (about 0.2 in English, 0.6 in Chinese)."""
    if unit == "words":
        return 1.0
    if unit == "tokens":
        return 1.0 / TOKENS_PER_WORD
    texts = [doc.text for doc in dataset.corpus]
    return sum(map(word_count, texts)) / max(sum(map(len, texts)), 1)


def dry_run(loaded: LoadedStudy, trials: int | None, reporter: Reporter) -> dict[str, Any]:
    """Upper bounds on generator and judge calls and tokens for the budget (no cache hits, no pruning)."""
    dataset = load_dataset(resolve_dataset(loaded.dataset))
    space = load_search_space(loaded.search_space_path)
    check_study(loaded, space, dataset)
    cases = [c for c in dataset.golden if c.keypoints]
    keypoints = sum(len(c.keypoints) for c in cases)
    n_trials = trials or loaded.config.budget.trials
    top_k = space.params["top_k"].grid() if "top_k" in space.params else [loaded.base_settings.top_k]
    size = space.params["chunk_size"].grid() if "chunk_size" in space.params else [loaded.base_settings.chunk_size]
    units = space.params["chunk_unit"].grid() if "chunk_unit" in space.params else [loaded.base_settings.chunk_unit]
    words_per_unit = sum(_words_per_unit(str(unit), dataset) for unit in units) / len(units)
    context_words = (sum(top_k) / len(top_k)) * (sum(size) / len(size)) * words_per_unit
    question_words = sum(word_count(c.question) for c in cases) / max(len(cases), 1)
    variants = 2
    generator_calls = variants * len(cases)
    judge_calls = variants * 2 * keypoints
    generator_tokens = generator_calls * (question_words + context_words + ANSWER_WORDS) * TOKENS_PER_WORD
    judge_tokens = variants * keypoints * (2 * ANSWER_WORDS + context_words) * TOKENS_PER_WORD
    calibration = CALIBRATION_RUNS * 2 if loaded.config.noise_floor == "auto" else 0
    total_trials = n_trials + calibration
    estimate = {
        "trials": n_trials,
        "calibration_runs": calibration,
        "cases": len(cases),
        "keypoints": keypoints,
        "generator_calls": int(generator_calls * total_trials),
        "judge_calls": int(judge_calls * total_trials),
        "tokens": int((generator_tokens + judge_tokens) * total_trials),
        "generator_backend": loaded.generator.backend,
        "judge_backend": loaded.judge.backend,
    }
    cap = loaded.config.budget.max_llm_calls
    reporter.stage(
        f"dry run of '{loaded.config.name}': {n_trials} trials (+{calibration} calibration runs) on {len(cases)} cases, "
        f"{keypoints} keypoints → at most {estimate['generator_calls']} generator calls, {estimate['judge_calls']} judge calls, "
        f"~{estimate['tokens']:,} tokens ({loaded.generator.backend} generator, {loaded.judge.backend} judge; "
        f"cache hits and pruning only lower this){'; capped at ' + str(cap) + ' calls' if cap else ''}"
    )
    return estimate


def trial_document(study: optuna.Study, number: int, rule: str | None, storage: str) -> dict[str, Any]:
    """The export of one complete trial: its full settings and provenance (storage URL without password)."""
    trial = study.trials[number]
    names = list(directions_of(study))
    record, study_record = TrialRecord.from_trial(trial), StudyRecord.from_study(study)
    return export_document(
        record.settings or {},
        {
            "study": study.study_name,
            "storage": redact_url(storage),
            "trial": number,
            "pick": rule,
            "dataset_hash": study_record.dataset_hash,
            "values": dict(zip(names, trial.values)),
            "ci": record.ci,
            "noise_floor": study_record.noise_floor,
        },
        {name: d.step for name, d in trial.distributions.items() if isinstance(d, optuna.distributions.FloatDistribution) and d.step},
    )


def finish(result: StudyRun, rule: str, min_recall: float | None, report: bool, reporter: Reporter) -> dict[str, Any]:
    """Print the front, write the HTML report and export the picked configuration; return their paths, the
    picked trial's number (``picked``) or why none was picked (``pick_unmet``)."""
    study = result.study
    summary = study_summary(study)
    directions, floor, entries = study_front(study)
    out = result.loaded.output
    paths: dict[str, Any] = {"storage": redact_url(result.loaded.storage)}
    reporter.stage(
        f"{summary['n_complete']} complete ({summary['n_unscorable']} unscorable), {summary['n_pruned'] - summary['n_duplicates']} pruned, "
        f"{summary['n_duplicates']} repeated configurations not evaluated again, {summary['n_failed']} failed; "
        f"front of {len(entries)}; calls {summary['calls']['generator']} generator + {summary['calls']['judge']} judge "
        f"in {result.elapsed:.0f}s"
    )
    if not entries:
        reporter.stage("no complete trial yet: nothing to export")
        return paths
    picks = {name: pick(name, entries, directions, floor).number for name in ("knee", "cheapest")}
    try:
        chosen = pick(rule, entries, directions, floor, min_recall=min_recall)
    except PickUnmet as unmet:
        # the work is done and the front stands: report it, export nothing, and say what was not met
        chosen = None
        paths["pick_unmet"] = str(unmet)
        reporter.stage(f"pick rule {rule}: {unmet}; no configuration exported (export one with 'tuner export --trial N')")
    if chosen is not None:
        paths["picked"] = chosen.number
        picks = {rule: chosen.number, **picks}
        document = trial_document(study, chosen.number, rule, result.loaded.storage)
        paths["config"] = str(write_export(out / "config.yaml", document))
        values = ", ".join(f"{k}={v:.3f}" for k, v in chosen.values.items())
        reporter.stage(f"picked trial {chosen.number} ({rule}): {values}")
    if report:
        from tuner.report import write_report

        paths["report"] = str(write_report(study, out / "report.html", picks, storage_url=redact_url(result.loaded.storage)))
    for name in ("storage", "config", "report"):
        if name in paths:
            reporter.stage(f"{name}: {paths[name]}")
    return paths
