"""Report/export (front → **what a run writes**): when ``tuner run`` ends, the front printed, the HTML report written
and the picked configuration exported (``config.yaml``, what ``tuner export`` writes too)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import optuna

from tuner.dataset import labels_line
from tuner.export import export_document, write_export
from tuner.front import (
    NeighbourComparison,
    PairedComparisons,
    StudyRecord,
    TrialRecord,
    compared_figures,
    directions_of,
    entry_caveat,
    entry_json,
    optimism,
    pick_notes,
    runner_up_comparison,
    separating_cases,
    study_comparisons,
    study_front,
    study_labels,
    study_summary,
    unscored_reason,
)
from tuner.pareto import FrontEntry, PickUnmet, pick, runner_up
from tuner.progress import Reporter
from tuner.redaction import redact
from tuner.report._html import write_report

if TYPE_CHECKING:  # the report reads studies; running one is the caller's
    from tuner.study import StudyRun

def _figure(entry: FrontEntry, name: str) -> str:
    """One figure with its own interval (the one the report and ``tuner pareto`` show beside it)."""
    ci = entry.ci.get(name)
    return f"{name} {entry.values[name]:.3f}" + ("" if ci is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")


def runner_up_line(comparison: NeighbourComparison) -> str:
    """The pick against its runner-up per objective: the paired difference, its 95% interval, and the cases at which
    that difference would separate (80% power, α 5%)."""
    parts = []
    for name, c in comparison.objectives.items():
        needed = separating_cases(c)
        separate = "no difference to separate" if needed is None else f"about {needed} cases would separate it"
        state = "tied" if c.tied else "apart"
        parts.append(f"{name} {c.difference:+.3f} [{c.ci[0]:+.3f}, {c.ci[1]:+.3f}] on {c.n} cases, {state}; {separate}")
    return f"trial #{comparison.trial} vs runner-up #{comparison.other}: " + "; ".join(parts)


def trial_document(
    study: optuna.Study, number: int, rule: str | None, storage: str, comparisons: PairedComparisons | None = None
) -> dict[str, Any]:
    """The export of one complete trial: its full settings and provenance (storage URL without password; the engine
    its first stage ran on and the engine collection it searched, when the study recorded them); with
    ``confirm:``, its figures on the held-out cases and the optimism of the tuning ones (oriented by direction:
    positive = the tuning figure looked better)."""
    trial = study.trials[number]
    directions = directions_of(study)
    record, study_record = TrialRecord.from_trial(trial), StudyRecord.from_study(study)
    confirmed = study_record.confirm.get(number)
    values = dict(zip(directions, trial.values))
    confirm = None if confirmed is None else {**confirmed.figures(), "optimism": {
        name: optimism(values[name], held, directions[name])
        for name, held in confirmed.values.items() if held is not None and name in values}}
    return export_document(
        record.settings or {},
        {
            "study": study.study_name,
            "storage": redact(storage),
            "trial": number,
            "embedding_backend": record.embedding_backend or "torch",
            # where the first stage ran (tuner serve --engine, tuner export --format milvus read it); never a token
            **({} if study_record.engine is None else {"engine": study_record.engine}),
            **({} if record.collection is None else {"collection": record.collection}),
            "pick": rule,
            # the golden set the study file names, which the gate measures (the tuning share's is in confirm_split)
            "dataset_hash": study_record.golden_hash or study_record.dataset_hash,
            "values": values,
            "ci": record.ci,
            "conflict_exposure": record.exposure_figures(),
            "noise_floor": study_record.noise_floor,
            "confirm": confirm,
            **({} if not study_record.confirm_cases else {"confirm_split": {
                "tuning_dataset_hash": study_record.dataset_hash, "held_out_cases": len(study_record.confirm_cases),
            }}),
            "notes": pick_notes(study, number, comparisons),
        },
        {name: d.step for name, d in trial.distributions.items() if isinstance(d, optuna.distributions.FloatDistribution) and d.step},
    )


def finish(
    result: StudyRun, rule: str, min_recall: float | None, reporter: Reporter, report: bool = True,
    compare: optuna.Study | None = None,
) -> dict[str, Any]:
    """Print the front, write the HTML report (with ``report``; ``compare``: a study to show beside it) and export the
    picked configuration; return their paths, the picked trial's number (``picked``), what its noise floor says about it
    (``notes``) and its comparison with the runner-up (``runner_up``), or why none was picked (``pick_unmet``), and why no trial could
    be scored when none could (``unscored``: :func:`tuner.front.unscored_reason`). The closing lines print each figure
    of the pick with its interval and say which cases they come from."""
    study = result.study
    comparisons = study_comparisons(study)  # one reading of the study: each pair of trials is compared once
    summary = study_summary(study)
    directions, floor, entries = study_front(study, comparisons)
    out = result.loaded.output
    confirmed = StudyRecord.from_study(study).confirm
    paths: dict[str, Any] = {
        "storage": redact(result.loaded.storage),
        "front": [entry_json(e, study.trials[e.number], directions, confirmed.get(e.number)) for e in entries],
    }
    reporter.stage(
        f"{summary.n_complete} complete ({summary.n_unscorable} unscorable, {summary.n_skipped} not answered), "
        f"{summary.pruned_on_evidence} pruned, {summary.n_duplicates} repeated configurations not evaluated again, "
        f"{summary.n_failed} failed; front of {len(entries)}; calls {summary.calls.generator} generator + "
        f"{summary.calls.judge} judge "
        f"in {result.elapsed:.0f}s"
    )
    picks: dict[str, int] = {}
    chosen = None
    where = ""
    if not entries:  # the report still says what was done, and why nothing is on the front
        reporter.stage("no complete scorable trial yet: nothing to export")
        unscored = unscored_reason(study)
        if unscored is not None:
            paths["unscored"] = unscored
    else:
        entries, _, where = compared_figures(study, entries)
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
        document = trial_document(study, chosen.number, rule, result.loaded.storage, comparisons)
        paths["config"] = str(write_export(out / "config.yaml", document))
        figures = ", ".join(_figure(chosen, name) for name in chosen.values)
        reporter.stage(f"picked trial {chosen.number} ({rule}) {where}: {figures}")
        beside = TrialRecord.from_trial(study.trials[chosen.number]).describe_exposure()
        if beside is not None:
            reporter.stage(f"picked trial {chosen.number} on the tuning cases: {beside}")
        paths["notes"] = document["provenance"]["notes"]
        for note in paths["notes"]:
            reporter.stage(f"note: {note}")
        second = runner_up(rule, chosen, entries, directions, floor, min_recall=min_recall)
        if second is not None:
            comparison = runner_up_comparison(study, chosen.number, second.number, comparisons)
            paths["runner_up"] = comparison.to_json()
            reporter.stage(f"{runner_up_line(comparison)} ({where.removeprefix('on the ')})")
    labels = study_labels(study)
    reporter.stage(f"labels: {labels_line(labels)}")
    caveat = None if chosen is None else entry_caveat(labels, chosen, study.trials[chosen.number])
    if caveat is not None:
        reporter.stage(f"labels: {caveat.line()}")
    if report:
        asked = result.loaded.config.report_language
        paths["report"] = str(write_report(study, out / "report.html", picks, result.loaded.storage, compare=compare,
                                           comparisons=comparisons, min_recall=min_recall,
                                           language=None if asked == "auto" else asked))
    for name in ("storage", "config", "report"):
        if name in paths:
            reporter.stage(f"{name}: {paths[name]}")
    return paths
