"""Issue 37 §3–§4 and issue 39 §1 on the read side: the typed confirmation record (and the one studies stored before
it), optimism in each objective's direction, held-out figures with their own intervals, and the cases at which a
paired difference would separate. Figures by hand."""

from __future__ import annotations

import json
from typing import Any

import optuna
import pytest
from optuna.distributions import IntDistribution

from tuner.front import (
    Confirmation,
    NeighbourComparison,
    StudyRecord,
    compared_figures,
    entry_json,
    optimism,
    runner_up_comparison,
    separating_cases,
    study_front,
    trial_rows,
)
from tuner.stats import PairedComparison

# stored by tuner before Confirmation existed: trial number as a string, figures only (no per-case scores)
OLD_CONFIRM = {"3": {"values": {"recall_at_k": 1.0, "v3_delta_faithful": 0.25}, "ci": {"recall_at_k": [0.94, 1.0],
                                                                                     "v3_delta_faithful": None},
                     "n": 57, "n_total": 57}}


def _study(confirm: dict[str, Any] | None = None) -> optuna.Study:
    """Two front trials: #0 recall 0.9 / Δ 0.10, #1 recall 0.7 / Δ 0.05, with per-case scores on 4 tuning cases."""
    study = optuna.create_study(directions=["maximize", "minimize"])
    study.set_user_attr("objectives", ["recall_at_k", "v3_delta_faithful"])
    study.set_user_attr("noise_floor", {"recall_at_k": 0.0, "v3_delta_faithful": 0.0})
    trials = [([0.9, 0.1], [1.0, 1.0, 1.0, 0.6], [1.0, 0.8, 1.0, 0.8]),
              ([0.7, 0.05], [1.0, 0.8, 0.4, 0.6], [1.0, 1.0, 0.9, 0.9])]
    for number, (values, recall, f3) in enumerate(trials):
        study.add_trial(optuna.trial.create_trial(
            values=values, params={"top_k": number + 1}, distributions={"top_k": IntDistribution(1, 4)},
            user_attrs={"recall_cases": recall, "f0": [1.0] * 4, "f3": f3, "n": 4, "n_total": 4,
                        "ci": {"recall_at_k": [0.5, 1.0], "v3_delta_faithful": [0.0, 0.2]},
                        "settings": {"top_k": number + 1}},
        ))
    if confirm is not None:
        study.set_user_attr("confirm_cases", [f"h{i}" for i in range(4)])
        study.set_user_attr("confirm", confirm)
    return study


def test_a_confirmation_stored_before_the_typed_record_loads_keyed_by_int() -> None:
    study = _study()
    study.set_user_attr("confirm", OLD_CONFIRM)
    confirmed = StudyRecord.from_study(study).confirm
    assert list(confirmed) == [3]
    old = confirmed[3]
    assert old.values == {"recall_at_k": 1.0, "v3_delta_faithful": 0.25} and (old.n, old.n_total) == (57, 57)
    assert old.interval("recall_at_k") == (0.94, 1.0) and old.interval("v3_delta_faithful") is None
    assert old.recall_cases is None and old.held_out_record() is None  # no per-case scores to compare paired
    assert old.to_dict() == OLD_CONFIRM["3"]  # written back unchanged
    new = Confirmation({"recall_at_k": 0.5}, {"recall_at_k": [0.1, 0.9]}, 2, 2, (1.0, 0.0), (1.0, 1.0), (1.0, 0.5))
    assert Confirmation.from_dict(json.loads(json.dumps(new.to_dict()))) == new
    assert new.figures() == {"values": {"recall_at_k": 0.5}, "ci": {"recall_at_k": [0.1, 0.9]}, "n": 2, "n_total": 2}
    held = new.held_out_record()
    assert held is not None and held.recall_cases == (1.0, 0.0) and held.n_total == 2


def test_optimism_is_oriented_by_each_objectives_direction() -> None:
    # a maximized recall that held out at 0.95 against 0.9 tuning did better unseen: −0.05; a minimized Δ that held out
    # at 0.25 against 0.10 tuning looked better in tuning by 0.15: +0.15 (tuning − held out would say −0.15)
    assert optimism(0.9, 0.95, "maximize") == pytest.approx(-0.05)
    assert optimism(0.10, 0.25, "minimize") == pytest.approx(0.15)
    confirm = {str(n): {"values": {"recall_at_k": 0.95, "v3_delta_faithful": 0.25}, "ci": {}, "n": 4, "n_total": 4}
               for n in (0, 1)}
    study = _study(confirm)
    directions, _, entries = study_front(study)
    row = entry_json(next(e for e in entries if e.number == 0), study.trials[0], directions,
                     StudyRecord.from_study(study).confirm[0])
    assert row["optimism"] == pytest.approx({"recall_at_k": -0.05, "v3_delta_faithful": 0.15})
    table = {r["trial"]: r for r in trial_rows(study)}
    assert table[0]["v3_delta_faithful.optimism"] == pytest.approx(0.15)
    assert table[0]["recall_at_k.optimism"] == pytest.approx(-0.05)


def test_held_out_figures_carry_their_own_intervals_and_say_where_they_come_from() -> None:
    confirm = {"0": {"values": {"recall_at_k": 1.0, "v3_delta_faithful": 0.0},
                     "ci": {"recall_at_k": [0.51, 1.0], "v3_delta_faithful": [0.0, 0.0]}, "n": 4, "n_total": 4,
                     "recall_cases": [1.0] * 4, "f0": [1.0] * 4, "f3": [1.0] * 4},
               "1": {"values": {"recall_at_k": 0.75, "v3_delta_faithful": 0.1},
                     "ci": {"recall_at_k": [0.3, 0.95], "v3_delta_faithful": None}, "n": 4, "n_total": 4,
                     "recall_cases": [1.0, 1.0, 1.0, 0.0], "f0": [1.0] * 4, "f3": [1.0, 1.0, 0.8, 0.8]}}
    study = _study(confirm)
    _, _, entries = study_front(study)
    figures, records, where = compared_figures(study, entries)
    assert where == "on the 4 held-out cases"
    by_number = {e.number: e for e in figures}
    # the held-out point with the held-out interval (never the tuning one beside it); none where none was measured
    assert by_number[0].values["recall_at_k"] == 1.0 and by_number[0].ci["recall_at_k"] == (0.51, 1.0)
    assert by_number[1].ci.get("v3_delta_faithful") is None
    # the pick against the runner-up, paired on the held-out cases: recall per case differs on case 4 only (+1), so
    # the difference is 0.25 and Δ (0 − 0.1) = −0.1
    versus = runner_up_comparison(study, 0, 1)
    assert versus.objectives["recall_at_k"].difference == pytest.approx(0.25)
    assert versus.objectives["v3_delta_faithful"].difference == pytest.approx(-0.1)
    assert records[0].recall_cases == (1.0,) * 4


def test_cases_to_separate_from_a_paired_comparison_by_hand() -> None:
    # se 0.02 on n 100 cases: sd_d = √100 · 0.02 = 0.2; d 0.05 → (2.801585 · 0.2 / 0.05)² = 125.58 → 126
    comparison = PairedComparison(difference=0.05, case_sd=0.02, se=0.02, z=1.96, n=100)
    assert separating_cases(comparison) == 126
    # a run-to-run term is in se: se 0.04 (case 0.02 plus both runs' noise) → sd_d 0.4 → 125.58 · 4 = 502.3 → 503
    assert separating_cases(PairedComparison(0.05, 0.02, 0.04, 1.96, 100)) == 503
    row = NeighbourComparison(3, 5, {"recall_at_k": comparison,
                                     "v3_delta_faithful": PairedComparison(0.0, 0.01, 0.01, 1.96, 100)})
    shown = row.to_json()
    assert shown["recall_at_k"]["cases_to_separate"] == 126  # type: ignore[index]
    assert shown["v3_delta_faithful"]["cases_to_separate"] is None  # type: ignore[index]
    assert json.loads(json.dumps(shown)) == shown
