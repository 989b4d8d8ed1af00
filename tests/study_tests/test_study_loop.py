"""Issue 29 and issue 31 §3: the end of a run compares each pair of trials once, and the trial loop keeps a typed study
summary as trials end instead of reading every trial again."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import optuna
import pytest
from optuna.distributions import IntDistribution
from optuna.trial import TrialState

import tuner.front._paired as paired
import tuner.front._summary as summary_module
from tuner.front import PairedComparisons, StudySummary, TrialCalls, TrialRecord, pick_notes, study_comparisons, study_front
from tuner.front import study_summary
from tuner.front._summary import SummaryTracker

TOP_K = {"top_k": IntDistribution(1, 9)}


def _study(trials: list[tuple[TrialState, dict[str, Any]]]) -> optuna.Study:
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    study.set_user_attr("noise_floor", {"recall_at_k": 0.0, "v3_delta_faithful": 0.05})
    for number, (state, attrs) in enumerate(trials):
        values = [attrs.pop("recall", 0.5), attrs.pop("delta", 0.1)] if state == TrialState.COMPLETE else None
        study.add_trial(optuna.trial.create_trial(state=state, values=values, params={"top_k": number + 1},
                                                  distributions=TOP_K, user_attrs=attrs))
    return study


def _scored(recall: list[float], f3: list[float]) -> dict[str, Any]:
    return {"recall": sum(recall) / len(recall), "delta": 1 - sum(f3) / len(f3), "recall_cases": recall,
            "f0": [1.0] * len(f3), "f3": f3, "n": len(f3), "n_total": len(f3)}


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the paired bootstraps run."""
    calls: list[int] = []
    real = paired.paired_comparison

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(paired, "paired_comparison", counted)
    return calls


def test_each_pair_is_bootstrapped_once_however_often_the_front_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    study = _study([
        (TrialState.COMPLETE, _scored([1.0, 1.0, 0.0, 1.0], [1.0, 0.8, 1.0, 0.9])),
        (TrialState.COMPLETE, _scored([1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0])),
        (TrialState.COMPLETE, _scored([1.0, 1.0, 1.0, 1.0], [0.5, 0.8, 1.0, 0.9])),
    ])
    comparisons = study_comparisons(study)  # one reading of the study keeps its comparisons, nothing else does
    first = study_front(study, comparisons)
    notes = pick_notes(study, 0, comparisons)
    once = len(calls)
    assert once > 0
    again = study_front(study, comparisons)
    assert pick_notes(study, 0, comparisons) == notes
    assert len(calls) == once  # the second front and notes computed nothing again
    assert [(e.number, e.tie_group, e.epsilon_dominated_by) for e in first[2]] == [
        (e.number, e.tie_group, e.epsilon_dominated_by) for e in again[2]]
    assert pick_notes(study, 0) == notes  # a fresh reading computes again, and gets what was kept
    assert len(calls) > once


def test_other_scores_or_run_sd_are_never_served_from_what_was_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    kept = PairedComparisons({})

    def compare_trials(a: TrialRecord, b: TrialRecord | None, objective: str, run_sd: dict[str, float]) -> Any:
        return (kept if not run_sd else PairedComparisons(run_sd)).compare(a, b, objective)

    a = TrialRecord(f0=(1.0, 1.0, 1.0), f3=(1.0, 0.9, 0.8))
    b = TrialRecord(f0=(1.0, 1.0, 1.0), f3=(1.0, 1.0, 1.0))
    changed = TrialRecord(f0=(1.0, 1.0, 1.0), f3=(1.0, 0.9, 0.5))
    first = compare_trials(a, b, "v3_delta_faithful", {})
    assert first is not None and first.difference == pytest.approx(0.1)  # (1 − 0.9) − 0 by hand
    assert compare_trials(TrialRecord(f0=a.f0, f3=a.f3), b, "v3_delta_faithful", {}) == first  # same scores: kept
    assert len(calls) == 1
    other = compare_trials(changed, b, "v3_delta_faithful", {})
    assert other is not None and other.difference == pytest.approx(0.2)  # (1 − 0.8) − 0
    wider = compare_trials(a, b, "v3_delta_faithful", {"v3_delta_faithful": 0.108})
    assert wider is not None and wider.margin > first.margin
    alone = compare_trials(a, None, "v3_delta_faithful", {})
    assert alone is not None and alone.difference == pytest.approx(0.1) and alone.n == 3
    assert len(calls) == 4
    # None and NaN both mark an unscored case, so they are one key, as paired_comparison reads them alike
    assert compare_trials(TrialRecord(f0=(1.0, None), f3=(1.0, None)), None, "v3_delta_faithful", {}) == compare_trials(
        TrialRecord(f0=(1.0, float("nan")), f3=(1.0, float("nan"))), None, "v3_delta_faithful", {})
    assert len(calls) == 5


def _mixed_study() -> optuna.Study:
    calls = asdict(TrialCalls(generator=4, judge=8, tokens=100, cached_tokens=10, cost=0.5, remote_calls=12))
    return _study([
        (TrialState.COMPLETE, {"calls": calls}),
        (TrialState.PRUNED, {"calls": calls}),
        (TrialState.PRUNED, {"duplicate_of": 0}),
        (TrialState.FAIL, {"duplicate_of": 0, "calls": calls}),
        (TrialState.COMPLETE, {"unscorable": "no case scores above 0 at v0", "calls": calls}),
        (TrialState.COMPLETE, {"skipped": "recall@k below constraints.min_recall"}),
        (TrialState.RUNNING, {"calls": calls}),
        (TrialState.WAITING, {}),
    ])


def test_the_summary_counts_by_state_and_sums_calls_with_the_json_readers_know() -> None:
    summary = study_summary(_mixed_study())
    assert summary == StudySummary(
        n_trials=8, n_complete=3, n_pruned=2, n_failed=1, n_running=1, n_duplicates=1, n_unscorable=1, n_skipped=1,
        calls=TrialCalls(generator=20, judge=40, tokens=500, cached_tokens=50, cost=2.5, remote_calls=60),
    )
    assert (summary.finished, summary.pruned_on_evidence, summary.calls.llm) == (4, 1, 60)
    # tuner pareto --json and tuner run --json print the keys they printed when the summary was a dict
    assert json.loads(json.dumps(summary.to_json())) == {
        "n_trials": 8, "n_complete": 3, "n_pruned": 2, "n_failed": 1, "n_running": 1, "n_duplicates": 1,
        "n_unscorable": 1, "n_skipped": 1,
        "calls": {"generator": 20, "judge": 40, "tokens": 500, "cached_tokens": 50, "cost": 2.5},
    }


def test_the_loop_reads_a_finished_trial_once_and_only_unfinished_ones_again(monkeypatch: pytest.MonkeyPatch) -> None:
    study = _mixed_study()
    read: list[int] = []
    real = TrialRecord.from_trial

    def counted(trial: optuna.trial.FrozenTrial) -> TrialRecord:
        read.append(trial.number)
        return real(trial)

    monkeypatch.setattr(summary_module.TrialRecord, "from_trial", staticmethod(counted))
    tracker = SummaryTracker()
    assert tracker.update(study) == study_summary(study)
    read.clear()
    now = tracker.update(study)
    assert read == [6, 7] and now == study_summary(study)  # the running and the waiting trial
    # another worker's trial ends: the tracker reads it once more, as finished, then only the running one
    waiting = study.get_trials(deepcopy=False, states=(TrialState.WAITING,))[0]
    study._storage.set_trial_state_values(waiting._trial_id, TrialState.FAIL)
    read.clear()
    now = tracker.update(study)
    assert sorted(read) == [6, 7] and now == study_summary(study) and now.n_failed == 2
    read.clear()
    tracker.update(study)
    assert read == [6]


def test_exposure_is_compared_paired_on_the_per_case_flags_with_no_run_term() -> None:
    # A exposed on cases 0, 1; B on case 1 only: difference (2 − 1)/4 = 0.25, from the per-case flags
    a, b = TrialRecord(exposed_cases=(1, 1, 0, 0)), TrialRecord(exposed_cases=(0, 1, 0, 0))
    comparisons = PairedComparisons({"v3_delta_faithful": 0.3})  # a run-to-run sd for Δ, none for exposure
    compared = comparisons.compare(a, b, "conflict_exposure")
    assert compared is not None and compared.difference == pytest.approx(0.25) and compared.n == 4
    # the run-to-run term stays 0 (exposure is deterministic): se is the paired bootstrap's alone
    assert compared.se == pytest.approx(compared.case_sd)
    assert comparisons.compare(a, a, "conflict_exposure").tied  # type: ignore[union-attr]
    # a trial recorded before exposure was kept has nothing to compare
    assert comparisons.compare(TrialRecord(recall_cases=(1.0,)), b, "conflict_exposure") is None
