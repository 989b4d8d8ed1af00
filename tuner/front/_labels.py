"""Front (trial record → **front** → report/export): what the golden set's provenance says about a study's recall:
the labels block of ``tuner pareto --json`` and the report, and per front member or trial the caveat on its recall
(:func:`tuner.evaluation.label_caveat`)."""

from __future__ import annotations

from typing import Any

import optuna

from tuner.dataset import LabelProvenance, labels_json
from tuner.evaluation import LabelCaveat, label_caveat
from tuner.objectives import RECALL
from tuner.pareto import FrontEntry
from tuner.front._front import directions_of
from tuner.front._record import StudyRecord, TrialRecord


def study_labels(study: optuna.Study) -> LabelProvenance | None:
    """The provenance of the golden set the study ran on (``None``: unknown origin)."""
    return StudyRecord.from_study(study).provenance()


def _caveat(provenance: LabelProvenance | None, record: TrialRecord, recall: float | None,
            ci: tuple[float, float] | None) -> LabelCaveat | None:
    """The caveat on ``recall`` (interval ``ci``) of a trial's configuration (from its ``record``): its retriever and
    top_k against the pool."""
    settings = record.settings or {}
    if recall is None or "retriever" not in settings or "top_k" not in settings:
        return None
    return label_caveat(provenance, str(settings["retriever"]), int(settings["top_k"]), recall, ci)


def entry_caveat(provenance: LabelProvenance | None, entry: FrontEntry, trial: optuna.trial.FrozenTrial) -> LabelCaveat | None:
    """The caveat on a front member's recall (the entry's figures: held-out ones where picks use them)."""
    return _caveat(provenance, TrialRecord.from_trial(trial), entry.values.get(RECALL), entry.ci.get(RECALL))


def trial_caveats(study: optuna.Study, provenance: LabelProvenance | None) -> dict[int, LabelCaveat]:
    """Per trial number, the caveat on the recall the trial recorded (trials without recall, settings or a known
    provenance have none)."""
    names = list(directions_of(study))
    caveats = {}
    for trial in study.get_trials(deepcopy=False):
        if trial.values is None or RECALL not in names:
            continue
        record = TrialRecord.from_trial(trial)
        caveat = _caveat(provenance, record, trial.values[names.index(RECALL)], record.intervals().get(RECALL))
        if caveat is not None:
            caveats[trial.number] = caveat
    return caveats


def front_labels(study: optuna.Study, entries: list[FrontEntry]) -> dict[str, Any]:
    """The ``labels`` block of ``tuner pareto --json``: the provenance (or ``known: false``) and, per front trial
    (by number), its caveat (:meth:`LabelCaveat.to_dict`)."""
    provenance = study_labels(study)
    caveats = {str(e.number): c.to_dict() for e in entries if (c := entry_caveat(provenance, e, study.trials[e.number])) is not None}
    return {**labels_json(provenance), "trials": caveats}
