"""Study (trials → **summary**): how many trials a study has by outcome and what they spent, as one typed value that
the trial loop keeps up to date as trials end instead of reading every trial again."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

import optuna
from optuna.trial import TrialState

from tuner.front._record import TrialCalls, TrialRecord

SUMMARY_CALLS = ("generator", "judge", "tokens", "cached_tokens", "cost")
"""The spending a summary prints (``tuner pareto --json``, ``tuner run --json``: key ``calls``)."""


@dataclass(frozen=True)
class StudySummary:
    """A study's trials counted by state, with what they spent.

    ``n_duplicates`` are the trials that repeated an evaluated configuration (they end PRUNED and are counted among
    ``n_pruned`` too; one whose ending a storage fault cut off is counted as failed only); ``n_unscorable`` the trials
    whose Δ is undefined, ``n_skipped`` those answered by no request (recall alone ruled them out); ``calls`` the
    sum of every trial's requests and tokens (pruned and failed ones included, since they were spent too).

    >>> StudySummary(n_complete=3, n_pruned=2, n_duplicates=1).finished
    4
    """

    n_trials: int = 0
    n_complete: int = 0
    n_pruned: int = 0
    n_failed: int = 0
    n_running: int = 0
    n_duplicates: int = 0
    n_unscorable: int = 0
    n_skipped: int = 0
    calls: TrialCalls = field(default_factory=TrialCalls)

    @property
    def finished(self) -> int:
        """Configurations evaluated: complete and pruned trials, not the repeats of an evaluated one."""
        return self.n_complete + self.n_pruned - self.n_duplicates

    @property
    def pruned_on_evidence(self) -> int:
        """Pruned trials that were evaluated (a repeat is stored as pruned but was not evaluated)."""
        return self.n_pruned - self.n_duplicates

    def with_trial(self, trial: optuna.trial.FrozenTrial) -> StudySummary:
        """This summary with one more trial counted: its state, its record's outcome and its calls."""
        record = TrialRecord.from_trial(trial)
        state = trial.state
        return StudySummary(
            n_trials=self.n_trials + 1,
            n_complete=self.n_complete + (state == TrialState.COMPLETE),
            n_pruned=self.n_pruned + (state == TrialState.PRUNED),
            n_failed=self.n_failed + (state == TrialState.FAIL),
            n_running=self.n_running + (state == TrialState.RUNNING),
            n_duplicates=self.n_duplicates + (record.duplicate_of is not None and state == TrialState.PRUNED),
            n_unscorable=self.n_unscorable + (record.unscorable is not None),
            n_skipped=self.n_skipped + (record.skipped is not None),
            calls=self.calls + (record.calls or TrialCalls()),
        )

    def with_trials(self, trials: Iterable[optuna.trial.FrozenTrial]) -> StudySummary:
        summary = self
        for trial in trials:
            summary = summary.with_trial(trial)
        return summary

    def to_json(self) -> dict[str, Any]:
        """The counts and ``calls`` (generator, judge, tokens, cached tokens, cost) as plain JSON."""
        counts = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "calls"}
        return {**counts, "calls": {name: getattr(self.calls, name) for name in SUMMARY_CALLS}}


def unscored_reason(study: optuna.Study) -> str | None:
    """Why no trial of ``study`` could be scored, when every trial that ended failed or is unscorable (one at least):
    how many, and the first one's reason (``trial #0: unscorable: no case has scores at both v0 and v3 (every answer
    or verdict is missing: v3 backend_error 6)``). None when a trial was scored (complete, or pruned on evidence), when
    one was ruled out by the recall floor alone (the constraint's answer, not a failure), or when none ended. A repeat
    of an evaluated configuration counts as that one."""
    unscored: list[str] = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)):
        record = TrialRecord.from_trial(trial)
        if trial.state == TrialState.FAIL:
            unscored.append(f"trial #{trial.number}: failed: {record.failure or 'no reason recorded'}")
        elif record.unscorable is not None:
            unscored.append(f"trial #{trial.number}: unscorable: {record.unscorable}")
        elif record.duplicate_of is None:
            return None
    return f"{len(unscored)} failed or unscorable; {unscored[0]}" if unscored else None


def study_summary(study: optuna.Study) -> StudySummary:
    """Every trial of ``study`` counted (see :class:`SummaryTracker` for the loop's incremental form)."""
    return StudySummary().with_trials(study.get_trials(deepcopy=False))


class SummaryTracker:
    """:func:`study_summary` kept as trials end: a finished trial's state and record can no longer change (Optuna
    refuses to update a finished trial), so it is read once, the first time it is seen finished, whichever worker
    ran it; only the unfinished ones (one running trial per worker, and the queued ones) are read at each update."""

    def __init__(self) -> None:
        self._ended = StudySummary()
        self._seen: set[int] = set()

    def update(self, study: optuna.Study) -> StudySummary:
        """The summary of ``study`` now."""
        unfinished = []
        for trial in study.get_trials(deepcopy=False):
            if trial.number in self._seen:
                continue
            if trial.state.is_finished():
                self._ended = self._ended.with_trial(trial)
                self._seen.add(trial.number)
            else:
                unfinished.append(trial)
        return self._ended.with_trials(unfinished)

