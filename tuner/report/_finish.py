"""Report/export (front → **what a run writes**): when ``tuner run`` ends, the front printed, the HTML report written
and the picked configuration exported (``config.yaml``, what ``tuner export`` writes too)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import optuna

from tuner.dataset import labels_line
from tuner.export import export_document, write_export
from tuner.front import (
    StudyRecord,
    TrialRecord,
    confirmed_entries,
    directions_of,
    entry_caveat,
    pick_notes,
    study_front,
    study_labels,
    study_summary,
    unscored_reason,
)
from tuner.pareto import PickUnmet, pick
from tuner.progress import Reporter
from tuner.redaction import redact
from tuner.report._html import write_report

if TYPE_CHECKING:  # the report reads studies; running one is the caller's
    from tuner.study import StudyRun

CONFIRM_FIGURES = ("values", "ci", "n", "n_total")
"""What an export keeps of a trial's confirmation (its per-case scores stay in the study)."""


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


def finish(
    result: StudyRun, rule: str, min_recall: float | None, reporter: Reporter, report: bool = True,
    compare: optuna.Study | None = None,
) -> dict[str, Any]:
    """Print the front, write the HTML report (with ``report``; ``compare``: a study to show beside it) and export the picked configuration;
    return their paths, the picked trial's number (``picked``) and what its noise floor says about it (``notes``),
    or why none was picked (``pick_unmet``), and why no trial could be scored when none could (``unscored``:
    :func:`tuner.front.unscored_reason`)."""
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
        unscored = unscored_reason(study)
        if unscored is not None:
            paths["unscored"] = unscored
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
    if report:
        paths["report"] = str(write_report(study, out / "report.html", picks, result.loaded.storage, compare=compare))
    for name in ("storage", "config", "report"):
        if name in paths:
            reporter.stage(f"{name}: {paths[name]}")
    return paths
