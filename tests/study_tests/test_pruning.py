from __future__ import annotations

import math

import pytest

from tuner.front import PruneEvidence
from tuner.study import Look, PruningConfig, TrialProfile, plan_looks, should_prune
from tuner.study._pruning import batches, exact_rival

MARGIN = {"recall_at_k": 0.125, "v3_delta_faithful": 0.05}  # binary fractions: exact comparisons
N = 40
CLEAN = [1.0] * N


def _misled(cases: list[int], n: int = N) -> list[float]:
    """Faithfulness at v3 over n cases: 0 on ``cases``, 1 elsewhere."""
    return [0.0 if i in cases else 1.0 for i in range(n)]


def _look(alpha: float = 0.01, number: int = 1, of: int = 5) -> Look:
    return Look(number, of, cases=20, fraction=0.5, alpha=alpha, spent=alpha * number, spending="bonferroni")


def _check(current: TrialProfile, front: list[TrialProfile], look: Look | None = None) -> PruneEvidence | None:
    return should_prune(current, front, MARGIN, look or _look(), use_context_words=False)


def test_clearly_dominated_trial_is_pruned_with_its_evidence() -> None:
    robust = TrialProfile(0, 0.9, 100.0, CLEAN, CLEAN)  # complete: Δ = 0 on all 40 cases
    misled = TrialProfile(7, 0.7, 100.0, CLEAN[:20], _misled(list(range(0, 20, 2)), 20))  # half of 20 cases lost
    evidence = _check(misled, [robust])
    assert evidence is not None
    assert (evidence.dominated_by, evidence.cases_used, evidence.n_total) == (0, 20, 40)
    assert evidence.differences == {"recall_at_k": 0.2, "v3_delta_faithful": 0.5}
    assert (evidence.alpha, evidence.alpha_spent, evidence.fraction, evidence.spending) == (0.01, 0.01, 0.5, "bonferroni")
    assert evidence.p_value < 0.01
    assert PruneEvidence.from_dict(evidence.to_dict()) == evidence


def test_evidence_written_before_spending_was_recorded_still_reads() -> None:
    old = {"look": 2, "max_looks": 8, "cases_used": 40, "n_total": 180, "dominated_by": 3, "differences": {},
           "objective": "v3_delta_faithful", "v3_delta_faithful": {"estimate": 0.3, "se": 0.05, "rival": 0.1},
           "margin": {}, "p_value": 0.001, "alpha": 0.00625}
    evidence = PruneEvidence.from_dict(old)
    assert (evidence.look, evidence.alpha, evidence.estimate, evidence.spending) == (2, 0.00625, 0.3, "")
    assert math.isnan(evidence.fraction) and math.isnan(evidence.alpha_spent)


def test_looks_at_fixed_fractions_spend_alpha_by_the_pocock_function() -> None:
    looks = plan_looks(PruningConfig(looks=(0.1, 0.2, 0.35, 0.5, 0.7), spending="pocock"), 180)
    # ⌈t·180⌉ cases: 18, 36, 63, 90, 126; spending time τ = t / 0.7; α(τ) = 0.05·ln(1 + (e − 1)τ)
    assert [look.cases for look in looks] == [18, 36, 63, 90, 126]
    assert [look.fraction for look in looks] == [0.1, 0.2, 0.35, 0.5, 0.7]
    # τ_1 = 1/7: 0.05·ln(1 + 1.718282/7) = 0.05·ln(1.245469) = 0.05·0.219512 = 0.010976
    assert looks[0].alpha == pytest.approx(0.010976, abs=1e-6)
    # τ_3 = 1/2: 0.05·ln(1.859141) = 0.031006 spent by look 3
    assert looks[2].spent == pytest.approx(0.031006, abs=1e-6)
    assert looks[-1].spent == pytest.approx(0.05) and sum(look.alpha for look in looks) == pytest.approx(0.05)
    assert [(look.number, look.of) for look in looks] == [(j, 5) for j in range(1, 6)]


def test_every_batch_with_bonferroni_is_the_rule_before_fixed_fractions() -> None:
    looks = plan_looks(PruningConfig(looks="every_batch", spending="bonferroni", batch_size=20), 180)
    assert [look.cases for look in looks] == [20, 40, 60, 80, 100, 120, 140, 160]  # no look at 180: complete
    assert [look.alpha for look in looks] == pytest.approx([0.05 / 8] * 8)


def test_looks_on_a_small_case_list_keep_at_least_two_cases_and_stop_short_of_all() -> None:
    config = PruningConfig(looks=(0.1, 0.2, 0.35, 0.5, 0.7))
    assert [look.cases for look in plan_looks(config, 10)] == [2, 4, 5, 7]  # ⌈0.1·10⌉ = 1 case: no test
    assert plan_looks(config, 2) == []
    assert plan_looks(PruningConfig(looks="every_batch"), 20) == []  # one batch: the trial completes


def test_batches_end_at_every_look_and_serve_concurrency_between_them() -> None:
    cases = [f"c{i}" for i in range(50)]
    planned = batches(cases, PruningConfig(batch_size=20, looks=(0.1, 0.5)))
    assert [(len(batch), look and look.cases) for batch, look in planned] == [(5, 5), (15, None), (5, 25), (15, None), (10, None)]
    assert [case for batch, _ in planned for case in batch] == cases
    assert batches(cases, PruningConfig(enabled=False)) == [(cases, None)]


@pytest.mark.parametrize("looks", [[], [0.5, 0.5], [0.7, 0.2], [0.0, 0.5], [0.5, 1.0], "every_case"])
def test_looks_that_are_not_increasing_fractions_are_refused(looks: object) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        PruningConfig(looks=looks)  # type: ignore[arg-type]


def test_a_tie_within_the_margin_is_not_pruned() -> None:
    front = TrialProfile(0, 0.9, 100.0, CLEAN, _misled([0, 1]))  # Δ = 2/40 = 0.05
    # evaluated on every case: Δ = 4/40 = 0.10, worse by exactly the margin, not more; the answer is exact
    assert _check(TrialProfile(3, 0.7, 100.0, CLEAN, _misled([0, 1, 2, 3])), [front]) is None
    # worse by more than the margin on every case: pruned even at the last look
    assert _check(TrialProfile(4, 0.7, 100.0, CLEAN, _misled([0, 1, 2, 3, 4])), [front], _look(number=5)) is not None


def test_better_recall_or_recall_within_its_margin_protects_a_less_robust_trial() -> None:
    front = TrialProfile(0, 0.875, 100.0, CLEAN, CLEAN)
    lost = _misled(list(range(10)), 20)
    assert _check(TrialProfile(4, 0.9, 100.0, CLEAN[:20], lost), [front]) is None  # better recall
    assert _check(TrialProfile(5, 0.75, 100.0, CLEAN[:20], lost), [front]) is None  # 0.125 lower: the margin
    assert _check(TrialProfile(6, 0.625, 100.0, CLEAN[:20], lost), [front]) is not None


def test_the_rival_is_the_most_robust_front_trial_with_better_recall() -> None:
    high_recall = TrialProfile(0, 0.95, 100.0, CLEAN, _misled([0, 1, 2]))
    robust_but_low = TrialProfile(1, 0.6, 100.0, CLEAN, CLEAN)  # lower Δ, but worse recall than the trial
    robust = TrialProfile(2, 0.9, 100.0, CLEAN, CLEAN)
    trial = TrialProfile(9, 0.7, 100.0, CLEAN[:20], _misled(list(range(0, 20, 2)), 20))
    evidence = _check(trial, [high_recall, robust_but_low, robust])
    assert evidence is not None and evidence.dominated_by == 2


def test_too_few_cases_or_missing_scores_never_prune() -> None:
    front = TrialProfile(0, 1.0, 100.0, CLEAN, CLEAN)
    assert _check(TrialProfile(1, 0.2, 100.0, [1.0, None], [0.0, None]), [front]) is None
    assert _check(TrialProfile(1, 0.2, 100.0, [1.0, 1.0], [0.0, 0.0]), [front]) is None  # no spread: no evidence
    assert _check(TrialProfile(1, 0.2, 100.0, CLEAN[:10], _misled([0], 10)), []) is None  # no front yet


def test_a_look_that_spends_less_alpha_needs_stronger_evidence() -> None:
    front = TrialProfile(0, 1.0, 100.0, CLEAN, CLEAN)
    noisy = TrialProfile(1, 0.5, 100.0, CLEAN[:12], _misled([1, 4, 7, 10], 12))  # 4 of 12 lost
    single_look = _check(noisy, [front], _look(alpha=0.05, of=1))
    many_looks = _check(noisy, [front], _look(alpha=0.05 / 20, of=20))
    assert single_look is not None and single_look.p_value > 0.05 / 20
    assert many_looks is None


def test_context_words_must_also_be_worse_when_it_is_an_objective() -> None:
    front = TrialProfile(0, 0.9, 300.0, CLEAN, CLEAN)
    cheaper = TrialProfile(1, 0.7, 100.0, CLEAN[:20], _misled(list(range(10)), 20))
    assert should_prune(cheaper, [front], MARGIN, _look(), True) is None
    assert should_prune(cheaper, [front], MARGIN, _look(), False) is not None


def test_a_completed_trial_is_profiled_from_its_values_and_per_case_scores() -> None:
    from optuna.distributions import IntDistribution
    from optuna.trial import TrialState, create_trial

    from tuner.study import trial_profile

    attrs = {"context_words": 120.0, "f0": [1.0, 0.5], "f3": [0.0, None]}
    complete = create_trial(values=[0.75, 0.4], params={"top_k": 2}, distributions={"top_k": IntDistribution(1, 4)}, user_attrs=attrs)
    complete.number = 3
    assert trial_profile(complete) == TrialProfile(3, 0.75, 120.0, (1.0, 0.5), (0.0, None))
    pruned = create_trial(state=TrialState.PRUNED, user_attrs=attrs)
    assert trial_profile(pruned) is None  # no values: never a rival


def test_progress_names_the_rival_and_the_evidence_of_a_pruned_trial() -> None:
    from optuna.trial import TrialState, create_trial

    from tuner.study._run import _outcome

    evidence = {"cases_used": 60, "n_total": 180, "dominated_by": 3, "p_value": 0.00213}
    assert _outcome(create_trial(state=TrialState.PRUNED, user_attrs={"pruning": evidence})) == (
        "pruned after 60/180 cases (beaten by #3, p=0.0021)"
    )
    assert _outcome(create_trial(values=[0.5, 0.1])) == "complete"


def test_exact_objectives_prune_on_dominance_beyond_the_margin_without_a_test() -> None:
    current = {"recall_at_k": 0.80, "conflict_exposure": 0.30}
    front = [
        (1, {"recall_at_k": 0.90, "conflict_exposure": 0.20}),  # better on both by 0.10
        (2, {"recall_at_k": 0.95, "conflict_exposure": 0.10}),  # better on both by 0.15 and 0.20: the named rival
        (3, {"recall_at_k": 0.99, "conflict_exposure": 0.35}),  # more recall, but more exposure: no rival
    ]
    evidence = exact_rival(current, front, {}, 40)
    assert evidence is not None and evidence.dominated_by == 2 and evidence.objective == "conflict_exposure"
    assert evidence.differences == {"recall_at_k": pytest.approx(0.15), "conflict_exposure": pytest.approx(0.20)}
    assert (evidence.estimate, evidence.rival_delta, evidence.p_value, evidence.cases_used) == (0.30, 0.10, 0.0, 0)
    # a recall margin of 0.2 leaves no front trial better by more than it
    assert exact_rival(current, front, {"recall_at_k": 0.2}, 40) is None
    assert exact_rival(current, front[2:], {}, 40) is None
