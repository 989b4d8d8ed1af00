"""Front (trial record → **front** → report/export): what the golden set's provenance says about a front's recall:
the labels block of ``tuner pareto --json`` and the report, and per front member the caveat on its recall
(:func:`tuner.evaluation.label_caveat`)."""

from __future__ import annotations

from typing import Any

import optuna

from tuner.dataset import LabelProvenance, labels_json
from tuner.evaluation import LabelCaveat, label_caveat
from tuner.objectives import RECALL
from tuner.pareto import FrontEntry
from tuner.study._record import StudyRecord, TrialRecord


def study_labels(study: optuna.Study) -> LabelProvenance | None:
    """The provenance of the golden set the study ran on (``None``: unknown origin)."""
    return StudyRecord.from_study(study).provenance()


def entry_caveat(provenance: LabelProvenance | None, entry: FrontEntry, trial: optuna.trial.FrozenTrial) -> LabelCaveat | None:
    """The caveat on a front member's recall: its retriever and top_k (from the trial's settings) against the pool."""
    settings = TrialRecord.from_trial(trial).settings or {}
    recall = entry.values.get(RECALL)
    if recall is None or "retriever" not in settings or "top_k" not in settings:
        return None
    return label_caveat(provenance, str(settings["retriever"]), int(settings["top_k"]), recall, entry.ci.get(RECALL))


def front_labels(study: optuna.Study, entries: list[FrontEntry]) -> dict[str, Any]:
    """The ``labels`` block of ``tuner pareto --json``: the provenance (or ``known: false``) and, per front trial
    (by number), its caveat (:meth:`LabelCaveat.to_dict`)."""
    provenance = study_labels(study)
    caveats = {str(e.number): c.to_dict() for e in entries if (c := entry_caveat(provenance, e, study.trials[e.number])) is not None}
    return {**labels_json(provenance), "trials": caveats}
